// TRITONSERVER_InferenceTrace* functions. A backend gets a trace from
// TRITONBACKEND_RequestTrace when the server traces the request; the trace
// lives in the request block until the request is released. Activities cross
// into Go; the getters are pure C.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "objects.h"

#define TRACE(var, h)           \
  THOST_OBJECT(                 \
      var, h, THOST_KIND_TRACE, \
      "trace (the request is not traced or was released)")

const char*
TRITONSERVER_InferenceTraceLevelString(TRITONSERVER_InferenceTraceLevel level)
{
  switch (level) {
    case TRITONSERVER_TRACE_LEVEL_DISABLED:
      return "DISABLED";
    case TRITONSERVER_TRACE_LEVEL_MIN:
      return "MIN";
    case TRITONSERVER_TRACE_LEVEL_MAX:
      return "MAX";
    case TRITONSERVER_TRACE_LEVEL_TIMESTAMPS:
      return "TIMESTAMPS";
    case TRITONSERVER_TRACE_LEVEL_TENSORS:
      return "TENSORS";
  }
  return "<unknown>";
}

const char*
TRITONSERVER_InferenceTraceActivityString(
    TRITONSERVER_InferenceTraceActivity activity)
{
  switch (activity) {
    case TRITONSERVER_TRACE_REQUEST_START:
      return "REQUEST_START";
    case TRITONSERVER_TRACE_QUEUE_START:
      return "QUEUE_START";
    case TRITONSERVER_TRACE_COMPUTE_START:
      return "COMPUTE_START";
    case TRITONSERVER_TRACE_COMPUTE_INPUT_END:
      return "COMPUTE_INPUT_END";
    case TRITONSERVER_TRACE_COMPUTE_OUTPUT_START:
      return "COMPUTE_OUTPUT_START";
    case TRITONSERVER_TRACE_COMPUTE_END:
      return "COMPUTE_END";
    case TRITONSERVER_TRACE_REQUEST_END:
      return "REQUEST_END";
    case TRITONSERVER_TRACE_TENSOR_QUEUE_INPUT:
      return "TENSOR_QUEUE_INPUT";
    case TRITONSERVER_TRACE_TENSOR_BACKEND_INPUT:
      return "TENSOR_BACKEND_INPUT";
    case TRITONSERVER_TRACE_TENSOR_BACKEND_OUTPUT:
      return "TENSOR_BACKEND_OUTPUT";
    case TRITONSERVER_TRACE_CUSTOM_ACTIVITY:
      return "CUSTOM_ACTIVITY";
  }
  return "<unknown>";
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceReportActivity(
    TRITONSERVER_InferenceTrace* trace, uint64_t timestamp,
    const char* activity_name)
{
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(activity_name != NULL, "activity_name is NULL");
  return thostTraceActivity(t->ctx, timestamp, (char*)activity_name);
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceId(TRITONSERVER_InferenceTrace* trace, uint64_t* id)
{
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(id != NULL, "id is NULL");
  *id = t->id;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceParentId(
    TRITONSERVER_InferenceTrace* trace, uint64_t* parent_id)
{
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(parent_id != NULL, "parent_id is NULL");
  *parent_id = t->parent_id;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceModelName(
    TRITONSERVER_InferenceTrace* trace, const char** model_name)
{
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(model_name != NULL, "model_name is NULL");
  *model_name = t->model_name;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceModelVersion(
    TRITONSERVER_InferenceTrace* trace, int64_t* model_version)
{
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(model_version != NULL, "model_version is NULL");
  *model_version = t->model_version;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceRequestId(
    TRITONSERVER_InferenceTrace* trace, const char** request_id)
{
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(request_id != NULL, "request_id is NULL");
  *request_id = t->request_id;
  return NULL;
}
