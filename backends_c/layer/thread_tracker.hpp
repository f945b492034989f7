// thread_tracker.hpp: ThreadTracker, which counts the detached worker
// threads of a model instance so that its finalizer can wait for them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "errors.hpp"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend {

// StartDetached() starts and counts a thread in one step. By hand: call
// Starting() before creating a thread (and Finished() yourself only if
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

  // Starts a detached thread that calls fn() once, counted from before it
  // starts until fn has returned and everything fn holds (its captures) has
  // been destroyed, so WaitIdle() returns only after those are gone. If the
  // thread cannot be created, fn is destroyed, nothing stays counted and
  // the result is INTERNAL "failed to start <what>: <reason>".
  template <typename Fn>
  TRITONSERVER_Error* StartDetached(const std::string& what, Fn&& fn)
  {
    Starting();
    try {
      std::thread([this, fn = std::forward<Fn>(fn)]() mutable {
        Scope done(this);
        // A local, so that it is destroyed before 'done' counts us out.
        std::decay_t<Fn> body = std::move(fn);
        body();
      }).detach();
    }
    catch (const std::exception& e) {
      Finished();  // fn went with the lambda
      return MakeError(
          TRITONSERVER_ERROR_INTERNAL,
          "failed to start " + what + ": " + e.what());
    }
    return nullptr;
  }

 private:
  std::atomic<size_t> running_{0};
};

}}  // namespace tritonhost::backend
