// request_batch.cc: answering, accounting for and releasing the requests
// of one Execute call.
#include "request_batch.hpp"

#include "backend_io.hpp"
#include "errors.hpp"
#include "formatting.hpp"
#include "logging.hpp"
#include "statistics.hpp"

namespace tritonhost { namespace backend {

RequestBatch::RequestBatch(
    const BackendModelInstance& instance, TRITONBACKEND_Request** requests,
    uint32_t request_count)
    : instance_(instance), entries_(request_count), exec_start_ns_(NowNs())
{
  for (uint32_t i = 0; i < request_count; ++i) {
    Entry& e = entries_[i];
    e.request = requests[i];
    e.error.reset(TRITONBACKEND_ResponseNew(&e.response, e.request));
    if (e.error != nullptr) {
      e.response = nullptr;  // nothing to send the error on
    }
  }
}

RequestBatch::~RequestBatch() { Finish(); }

void
RequestBatch::Fail(uint32_t i, TRITONSERVER_Error* err)
{
  if (err == nullptr) {
    return;
  }
  if (entries_[i].error != nullptr) {
    THOST_LOG_IF_ERROR(
        err, instance_.MessagePrefix() + "request " +
                 RequestIdString(entries_[i].request) +
                 " has failed already; dropping a later error");
    return;
  }
  entries_[i].error.reset(err);
}

void
RequestBatch::Finish()
{
  if (finished_) {
    return;
  }
  finished_ = true;
  if (entries_.empty()) {
    return;
  }
  const uint64_t exec_end_ns = NowNs();
  if (compute_start_ns_ == 0) {
    compute_start_ns_ = exec_end_ns;
  }
  if (compute_end_ns_ < compute_start_ns_) {
    compute_end_ns_ = compute_start_ns_;
  }
  ReportStatistics(exec_end_ns);
  SendAndRelease();
}

// Per request, then, over the requests that succeeded, per batch. Must run
// while the batch still owns the requests.
void
RequestBatch::ReportStatistics(uint64_t exec_end_ns)
{
  TRITONBACKEND_ModelInstance* instance = instance_.TritonModelInstance();
  const bool batching = instance_.Model()->SupportsFirstDimBatching();
  const ExecutionTimes times{
      exec_start_ns_, compute_start_ns_, compute_end_ns_, exec_end_ns};
  const std::string prefix = instance_.MessagePrefix();
  uint64_t batch_size = 0;
  for (Entry& e : entries_) {
    const bool success = (e.error == nullptr);
    ReportRequestStatistics(instance, e.request, success, times, prefix);
    if (success) {
      uint64_t size = 1;
      THOST_LOG_IF_ERROR(
          RequestBatchSize(e.request, batching, &size),
          prefix + "failed to read a request's batch size");
      batch_size += size;
    }
  }
  if (batch_size > 0) {
    ReportBatchStatistics(instance, batch_size, times, prefix);
  }
}

void
RequestBatch::SendAndRelease()
{
  for (Entry& e : entries_) {
    if (e.error != nullptr) {
      THOST_LOG_MESSAGE(
          TRITONSERVER_LOG_VERBOSE,
          instance_.MessagePrefix() + "request " + RequestIdString(e.request) +
              " failed: " + ErrorString(e.error.get()));
    }
    if (e.response != nullptr) {
      // The host takes the response either way; the error stays ours.
      THOST_LOG_IF_ERROR(
          TRITONBACKEND_ResponseSend(
              e.response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, e.error.get()),
          instance_.MessagePrefix() + "failed to send a response");
      e.response = nullptr;
    } else {
      THOST_LOG_MESSAGE(
          TRITONSERVER_LOG_ERROR,
          instance_.MessagePrefix() + "request " + RequestIdString(e.request) +
              " gets no response: " + ErrorString(e.error.get()));
    }
    e.error.reset();
    THOST_LOG_IF_ERROR(
        TRITONBACKEND_RequestRelease(
            e.request, TRITONSERVER_REQUEST_RELEASE_ALL),
        instance_.MessagePrefix() + "failed to release a request");
    e.request = nullptr;
  }
}

}}  // namespace tritonhost::backend
