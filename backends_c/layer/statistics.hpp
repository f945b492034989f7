// statistics.hpp: reporting the statistics of a request and of an execution
// to the host, in the one shape every backend of the layer uses.
//
// Triton's recommended backend reports, for every request of an execution,
// TRITONBACKEND_ModelInstanceReportStatistics (success or failure and four
// timestamps), and for the execution
// TRITONBACKEND_ModelInstanceReportBatchStatistics (its batch size and the
// same timestamps). The host derives from them the
// queue time (request queued until exec start), compute input (exec start
// to compute start), compute infer (compute start to compute end), compute
// output (compute end to exec end), the inference and execution counts, and
// with them /v2/models/<m>/stats and the nv_inference_* metrics. A model
// whose backend reports nothing shows none of these, whatever its load.
//
// RequestBatch (request_batch.hpp) and AsyncRequestBatch
// (async_request_batch.hpp) report through these functions; a backend
// reports through one of those classes rather than calling these itself.
// Both calls must come before the request is released. The host's failures
// are logged, not returned: statistics never fail a request. Inline, so that
// a backend needs no object file of the layer for them.
#pragma once

#include <cstdint>
#include <string>

#include "logging.hpp"
#include "triton/core/tritonbackend.h"

namespace tritonhost { namespace backend {

// The timestamps of one execution (or of one request's part of it), in the
// time base of clock.hpp's NowNs(). Each is at or after the one before.
struct ExecutionTimes {
  uint64_t exec_start_ns = 0;
  uint64_t compute_start_ns = 0;
  uint64_t compute_end_ns = 0;
  uint64_t exec_end_ns = 0;
};

// Reports 'request' (not yet released) as executed by 'instance' with
// 'times'; 'prefix' starts the message logged if the host refuses.
inline void
ReportRequestStatistics(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request* request,
    bool success, const ExecutionTimes& times, const std::string& prefix)
{
  TRITONSERVER_Error* err = TRITONBACKEND_ModelInstanceReportStatistics(
      instance, request, success, times.exec_start_ns, times.compute_start_ns,
      times.compute_end_ns, times.exec_end_ns);
  if (err != nullptr) {  // the message is built only then
    THOST_LOG_IF_ERROR(err, prefix + "failed to report request statistics");
  }
}

// Reports one execution of 'instance' over a batch of 'batch_size' (the
// sum of its successful requests' batch sizes) with 'times'.
inline void
ReportBatchStatistics(
    TRITONBACKEND_ModelInstance* instance, uint64_t batch_size,
    const ExecutionTimes& times, const std::string& prefix)
{
  TRITONSERVER_Error* err = TRITONBACKEND_ModelInstanceReportBatchStatistics(
      instance, batch_size, times.exec_start_ns, times.compute_start_ns,
      times.compute_end_ns, times.exec_end_ns);
  if (err != nullptr) {
    THOST_LOG_IF_ERROR(err, prefix + "failed to report batch statistics");
  }
}

}}  // namespace tritonhost::backend
