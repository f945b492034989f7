// TRITONSERVER_InferenceRequest* functions on a request as a whole: its
// life, id, flags, correlation id, priority and timeout (parameters,
// callbacks and cancellation are in infer_request_callbacks.c, inputs and
// outputs in infer_request_tensors.c). A request is C memory that only its
// creator changes; the server reads it once, when it is submitted
// (inprocess.go). Pure C, except that creating a request asks the server
// for the model.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "infer_request.h"

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestNew(
    TRITONSERVER_InferenceRequest** inference_request,
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version)
{
  struct thost_host* host;
  THOST_CHECK_ARG(inference_request != NULL, "inference_request is NULL");
  THOST_OBJECT(host, server, THOST_KIND_SERVER, "server");
  THOST_CHECK_ARG(model_name != NULL, "model_name is NULL");
  TRITONSERVER_Error* err =
      thostServerFindModel(host, (char*)model_name, model_version);
  if (err != NULL)
    return err;
  struct thost_infer_request* r = thost_zalloc(sizeof(*r));
  if (r == NULL || (r->model_name = strdup(model_name)) == NULL ||
      (r->id = strdup("")) == NULL) {
    if (r != NULL)
      free(r->model_name);
    free(r);
    return out_of_memory(__func__);
  }
  r->host = host;
  r->model_version = model_version;
  r->handle = thost_handle_new(THOST_KIND_INFER_REQUEST, r);
  if (r->handle == 0) {
    free(r->id);
    free(r->model_name);
    free(r);
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: out of handles", __func__);
  }
  thost_count(host, THOST_COUNT_INFER_REQUEST, 1);
  *inference_request =
      THOST_AS_HANDLE(TRITONSERVER_InferenceRequest, r->handle);
  return NULL;
}

// infer_request_tensors.c
void thost_ireq_clear_inputs(struct thost_infer_request* r);
void thost_ireq_clear_outputs(struct thost_infer_request* r);

static void
clear_params(struct thost_infer_request* r)
{
  for (uint32_t i = 0; i < r->param_count; i++) {
    free(r->params[i].name);
    free(r->params[i].s);
  }
  r->param_count = 0;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestDelete(
    TRITONSERVER_InferenceRequest* inference_request)
{
  if (inference_request == NULL)
    return NULL;  // as deleting a null pointer in Triton
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  MUTABLE(r);
  thost_handle_free(r->handle);
  thost_ireq_clear_inputs(r);
  thost_ireq_clear_outputs(r);
  clear_params(r);
  free(r->inputs);
  free(r->outputs);
  free(r->params);
  free(r->model_name);
  free(r->id);
  free(r->correlation_id_string);
  thost_count(r->host, THOST_COUNT_INFER_REQUEST, -1);
  free(r);
  return NULL;
}

// ---- Metadata ---------------------------------------------------------------

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestId(
    TRITONSERVER_InferenceRequest* inference_request, const char** id)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(id != NULL, "id is NULL");
  *id = r->id;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetId(
    TRITONSERVER_InferenceRequest* inference_request, const char* id)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(id != NULL, "id is NULL");
  MUTABLE(r);
  char* copy = strdup(id);
  if (copy == NULL)
    return out_of_memory(__func__);
  free(r->id);
  r->id = copy;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestFlags(
    TRITONSERVER_InferenceRequest* inference_request, uint32_t* flags)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(flags != NULL, "flags is NULL");
  *flags = r->flags;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetFlags(
    TRITONSERVER_InferenceRequest* inference_request, uint32_t flags)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  MUTABLE(r);
  r->flags = flags;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestCorrelationId(
    TRITONSERVER_InferenceRequest* inference_request, uint64_t* correlation_id)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(correlation_id != NULL, "correlation_id is NULL");
  if (r->correlation_id_string != NULL) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "given request's correlation id is not an unsigned int");
  }
  *correlation_id = r->correlation_id;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestCorrelationIdString(
    TRITONSERVER_InferenceRequest* inference_request,
    const char** correlation_id)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(correlation_id != NULL, "correlation_id is NULL");
  if (r->correlation_id_string == NULL) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "given request's correlation id is not a string");
  }
  *correlation_id = r->correlation_id_string;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetCorrelationId(
    TRITONSERVER_InferenceRequest* inference_request, uint64_t correlation_id)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  MUTABLE(r);
  free(r->correlation_id_string);
  r->correlation_id_string = NULL;
  r->correlation_id = correlation_id;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetCorrelationIdString(
    TRITONSERVER_InferenceRequest* inference_request,
    const char* correlation_id)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(correlation_id != NULL, "correlation_id is NULL");
  MUTABLE(r);
  char* copy = strdup(correlation_id);
  if (copy == NULL)
    return out_of_memory(__func__);
  free(r->correlation_id_string);
  r->correlation_id_string = copy;
  r->correlation_id = 0;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestPriority(
    TRITONSERVER_InferenceRequest* inference_request, uint32_t* priority)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(priority != NULL, "priority is NULL");
  *priority = r->priority > UINT32_MAX ? UINT32_MAX : (uint32_t)r->priority;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestPriorityUInt64(
    TRITONSERVER_InferenceRequest* inference_request, uint64_t* priority)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(priority != NULL, "priority is NULL");
  *priority = r->priority;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetPriority(
    TRITONSERVER_InferenceRequest* inference_request, uint32_t priority)
{
  return TRITONSERVER_InferenceRequestSetPriorityUInt64(
      inference_request, priority);
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetPriorityUInt64(
    TRITONSERVER_InferenceRequest* inference_request, uint64_t priority)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  MUTABLE(r);
  r->priority = priority;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestTimeoutMicroseconds(
    TRITONSERVER_InferenceRequest* inference_request, uint64_t* timeout_us)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(timeout_us != NULL, "timeout_us is NULL");
  *timeout_us = r->timeout_us;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(
    TRITONSERVER_InferenceRequest* inference_request, uint64_t timeout_us)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  MUTABLE(r);
  r->timeout_us = timeout_us;
  return NULL;
}
