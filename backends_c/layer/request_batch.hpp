// request_batch.hpp: RequestBatch, the requests of one
// TRITONBACKEND_ModelInstanceExecute call of a non-decoupled backend, each
// with its one response.
//
// It keeps the bookkeeping out of a backend's Execute, which becomes:
//
//   RequestBatch batch(*this, requests, request_count);
//   batch.ForEach([this](TRITONBACKEND_Request* req,
//                        TRITONBACKEND_Response* resp) {
//     return Compute(req, resp);  // read inputs, fill outputs
//   });
//   batch.Finish();
//   return nullptr;  // every request was answered and released
//
// A request whose step fails gets an error response; the others are not
// affected. Finish() then, in this order: reports statistics for every
// request (success or failure) and, if any succeeded, for the batch; sends
// every response with TRITONSERVER_RESPONSE_COMPLETE_FINAL; releases every
// request. Statistics come before the responses so that a client that has
// its response also sees it counted.
//
// Ownership: from construction on, the batch owns the requests (Execute
// must return nullptr after creating it); it answers and releases each
// exactly once, in Finish() or, if that was not called, in its destructor.
// A RequestBatch belongs to the Execute call that made it; it is not for
// use from several threads at once.
#pragma once

#include <cstdint>
#include <vector>

#include "backend_model_instance.hpp"
#include "clock.hpp"
#include "host_objects.hpp"
#include "triton/core/tritonbackend.h"

namespace tritonhost { namespace backend {

class RequestBatch {
 public:
  // Notes the execution start and creates one response per request. A
  // request whose response cannot be created is failed at once.
  RequestBatch(
      const BackendModelInstance& instance, TRITONBACKEND_Request** requests,
      uint32_t request_count);
  // Finish(), unless it was called.
  ~RequestBatch();
  RequestBatch(const RequestBatch&) = delete;
  RequestBatch& operator=(const RequestBatch&) = delete;

  uint32_t Size() const { return static_cast<uint32_t>(entries_.size()); }
  TRITONBACKEND_Request* Request(uint32_t i) const
  {
    return entries_[i].request;
  }
  // The response of request i; nullptr once the request has failed (its
  // response will carry the error and nothing else).
  TRITONBACKEND_Response* Response(uint32_t i) const
  {
    return Failed(i) ? nullptr : entries_[i].response;
  }
  bool Failed(uint32_t i) const { return entries_[i].error != nullptr; }

  // Makes 'err' (taken over; nullptr is ignored) the outcome of request i.
  // The first error of a request wins; later ones are logged and deleted.
  void Fail(uint32_t i, TRITONSERVER_Error* err);

  // Calls fn(request, response), which returns a TRITONSERVER_Error*, for
  // each request that has not failed, and fails those it returns an error
  // for. Marks the compute start before the first call (unless
  // MarkComputeStart came first) and the compute end after the last.
  template <typename Fn>
  void ForEach(Fn&& fn)
  {
    if (compute_start_ns_ == 0) {
      MarkComputeStart();
    }
    for (uint32_t i = 0; i < Size(); ++i) {
      if (!Failed(i)) {
        Fail(i, fn(entries_[i].request, entries_[i].response));
      }
    }
    MarkComputeEnd();
  }

  // The statistics' compute_start (inputs prepared) and compute_end
  // (computation done) timestamps. Unmarked, they default to the time
  // Finish() starts, which counts all the work as input time.
  void MarkComputeStart() { compute_start_ns_ = NowNs(); }
  void MarkComputeEnd() { compute_end_ns_ = NowNs(); }

  // Reports statistics, sends every response and releases every request
  // (see the top of this file). Errors from the host are logged: nothing is
  // left for Execute to report. Idempotent.
  void Finish();

 private:
  struct Entry {
    TRITONBACKEND_Request* request = nullptr;
    TRITONBACKEND_Response* response = nullptr;
    ErrorPtr error;
  };

  void ReportStatistics(uint64_t exec_end_ns);
  void SendAndRelease();

  const BackendModelInstance& instance_;
  std::vector<Entry> entries_;
  uint64_t exec_start_ns_;
  uint64_t compute_start_ns_ = 0;
  uint64_t compute_end_ns_ = 0;
  bool finished_ = false;
};

}}  // namespace tritonhost::backend
