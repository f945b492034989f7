// async_request_batch.cc: the holders of requests whose work outlives
// Execute, and what happens when the last one lets go.
#include "async_request_batch.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>

#include "backend_io.hpp"
#include "clock.hpp"
#include "decoupled_responses.hpp"
#include "errors.hpp"
#include "formatting.hpp"
#include "logging.hpp"
#include "statistics.hpp"

namespace tritonhost { namespace backend {

namespace async_detail {

// One Execute call: shared by the batch and its requests; the last to let
// go reports the batch statistics.
struct Execution {
  Execution(TRITONBACKEND_ModelInstance* instance, std::string prefix)
      : instance(instance), prefix(std::move(prefix))
  {
  }
  ~Execution()
  {
    if (batch_size > 0) {
      ReportBatchStatistics(instance, batch_size, times, prefix);
    }
  }
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;

  // A request of batch size 'size' succeeded, computing from
  // 'compute_start_ns' to 'end_ns'.
  void AddSuccess(uint64_t size, uint64_t compute_start_ns, uint64_t end_ns)
  {
    std::lock_guard<std::mutex> lock(mu);
    batch_size += size;
    if (times.compute_start_ns == 0 ||
        compute_start_ns < times.compute_start_ns) {
      times.compute_start_ns = compute_start_ns;
    }
    times.compute_end_ns = std::max(times.compute_end_ns, end_ns);
    times.exec_end_ns = times.compute_end_ns;
  }

  TRITONBACKEND_ModelInstance* const instance;
  const std::string prefix;
  std::mutex mu;
  ExecutionTimes times;     // exec_start_ns set before sharing
  uint64_t batch_size = 0;  // of the requests that succeeded
};

// One request: shared by its holders; the last to let go ends it.
struct RequestState {
  RequestState(
      TRITONBACKEND_Request* request, std::shared_ptr<Execution> execution,
      uint64_t batch_size)
      : request(request), execution(std::move(execution)),
        batch_size(batch_size)
  {
  }
  ~RequestState()
  {
    const uint64_t end_ns = NowNs();
    ExecutionTimes times;
    times.exec_start_ns = execution->times.exec_start_ns;
    const uint64_t started = compute_start_ns.load(std::memory_order_relaxed);
    times.compute_start_ns = (started == 0) ? end_ns : started;
    times.compute_end_ns = end_ns;
    times.exec_end_ns = end_ns;
    const bool success = !failed.load(std::memory_order_relaxed);
    ReportRequestStatistics(
        execution->instance, request, success, times, execution->prefix);
    if (success) {
      execution->AddSuccess(batch_size, times.compute_start_ns, end_ns);
    }
    TRITONSERVER_Error* err =
        TRITONBACKEND_RequestRelease(request, TRITONSERVER_REQUEST_RELEASE_ALL);
    if (err != nullptr) {  // the message is built only then
      THOST_LOG_IF_ERROR(
          err, execution->prefix + "failed to release request " +
                   RequestIdString(request));
    }
  }
  RequestState(const RequestState&) = delete;
  RequestState& operator=(const RequestState&) = delete;

  TRITONBACKEND_Request* const request;
  const std::shared_ptr<Execution> execution;
  const uint64_t batch_size;
  // Written by any holder; read by the last one, after every other has let
  // go (the shared_ptr's count orders them).
  std::atomic<bool> failed{false};
  std::atomic<uint64_t> compute_start_ns{0};
};

}  // namespace async_detail

// ---- RequestEnd -----------------------------------------------------------

void
RequestEnd::Fail()
{
  if (state_ != nullptr) {
    state_->failed.store(true, std::memory_order_relaxed);
  }
}

void
RequestEnd::Done(bool success)
{
  if (!success) {
    Fail();
  }
  state_.reset();  // the last holder's reset ends the request
}

// ---- AsyncRequestBatch ----------------------------------------------------

AsyncRequestBatch::AsyncRequestBatch(
    const BackendModelInstance& instance, TRITONBACKEND_Request** requests,
    uint32_t request_count)
    : entries_(request_count)
{
  // Not MessagePrefix(): a backend that initialized with InitMinimal() has
  // no backend name for it.
  auto execution = std::make_shared<async_detail::Execution>(
      instance.TritonModelInstance(),
      "model instance '" + instance.Name() + "': ");
  execution->times.exec_start_ns = NowNs();
  const bool batching = instance.Model()->SupportsFirstDimBatching();
  for (uint32_t i = 0; i < request_count; ++i) {
    uint64_t size = 1;
    THOST_LOG_IF_ERROR(
        RequestBatchSize(requests[i], batching, &size),
        execution->prefix + "failed to read a request's batch size");
    entries_[i].request = requests[i];
    entries_[i].state = std::make_shared<async_detail::RequestState>(
        requests[i], execution, size);
  }
}

AsyncRequestBatch::~AsyncRequestBatch() { Finish(); }

RequestEnd
AsyncRequestBatch::Hold(uint32_t i)
{
  auto& state = entries_[i].state;
  if (state == nullptr) {
    return RequestEnd();  // Execute let go already: nothing to hold
  }
  uint64_t unset = 0;
  state->compute_start_ns.compare_exchange_strong(
      unset, NowNs(), std::memory_order_relaxed);
  return RequestEnd(state);
}

void
AsyncRequestBatch::Fail(uint32_t i, TRITONSERVER_Error* err)
{
  if (err == nullptr) {
    return;
  }
  Entry& e = entries_[i];
  if (e.state == nullptr) {
    THOST_LOG_IF_ERROR(
        err, "request " + RequestIdString(e.request) +
                 " was let go already; its error cannot be sent");
    return;
  }
  if (e.error != nullptr) {
    THOST_LOG_IF_ERROR(
        err, "request " + RequestIdString(e.request) +
                 " has failed already; dropping a later error");
    return;
  }
  e.error.reset(err);
  e.state->failed.store(true, std::memory_order_relaxed);
}

void
AsyncRequestBatch::Done(uint32_t i, bool success)
{
  Entry& e = entries_[i];
  if (e.state != nullptr && !success) {
    e.state->failed.store(true, std::memory_order_relaxed);
  }
  e.state.reset();
}

void
AsyncRequestBatch::Finish()
{
  if (finished_) {
    return;
  }
  finished_ = true;
  for (Entry& e : entries_) {
    if (e.error != nullptr) {  // Fail() kept it only with the state
      // Answered while Execute still holds it, so before any release.
      RespondIfError(e.request, e.error.release());
    }
    e.state.reset();
  }
}

}}  // namespace tritonhost::backend
