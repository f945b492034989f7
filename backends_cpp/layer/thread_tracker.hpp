// thread_tracker.hpp: ThreadTracker, which counts the detached worker
// threads of a model instance so that its finalizer can wait for them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>

namespace tritonhost { namespace backend {

// Call Starting() before creating a thread (and Finished() yourself only if
// creating it fails); the thread's body declares a ThreadTracker::Scope as
// its first statement, so the count drops on every way out of the body,
// after everything the body owns has been destroyed. Any thread may call
// any member.
class ThreadTracker {
 public:
  class Scope {
   public:
    explicit Scope(ThreadTracker* tracker) : tracker_(tracker) {}
    ~Scope() { tracker_->Finished(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ThreadTracker* tracker_;
  };

  void Starting() { running_.fetch_add(1, std::memory_order_acq_rel); }
  void Finished() { running_.fetch_sub(1, std::memory_order_acq_rel); }
  size_t Running() const { return running_.load(std::memory_order_acquire); }

  // Sleep-polls until no tracked thread is running.
  void WaitIdle(std::chrono::milliseconds poll) const
  {
    while (Running() > 0) {
      std::this_thread::sleep_for(poll);
    }
  }

 private:
  std::atomic<size_t> running_{0};
};

}}  // namespace tritonhost::backend
