// TRITONSERVER_Server* functions of the in-process API that backends use:
// submitting a request (TRITONSERVER_ServerInferAsync) and querying models.
// The C side checks the arguments; Go finds the model and runs the request
// (inprocess.go, exports_inprocess.go).
#include <stdlib.h>

#include "_cgo_export.h"
#include "inprocess.h"

#define SERVER(var, h) THOST_OBJECT(var, h, THOST_KIND_SERVER, "server")

TRITONSERVER_Error*
TRITONSERVER_ServerInferAsync(
    TRITONSERVER_Server* server,
    TRITONSERVER_InferenceRequest* inference_request,
    TRITONSERVER_InferenceTrace* trace)
{
  struct thost_host* host;
  struct thost_infer_request* r;
  SERVER(host, server);
  THOST_OBJECT(
      r, inference_request, THOST_KIND_INFER_REQUEST, "inference request");
  THOST_CHECK_ARG(
      trace == NULL || thost_handle_object(trace, THOST_KIND_TRACE) != NULL,
      "invalid trace");
  if (r->host != host) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: the request was created for another server", __func__);
  }
  int32_t idle = 0;
  if (!__atomic_compare_exchange_n(
          &r->in_flight, &idle, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: the request is already in flight; submit it again after its "
        "release callback",
        __func__);
  }
  TRITONSERVER_Error* err = NULL;
  struct thost_infer_call* call = thost_infer_call_new(r, &err);
  if (call != NULL) {
    __atomic_store_n(&r->cancelled, 0, __ATOMIC_RELEASE);
    // On success Go owns call, and the request may already have come back
    // (its release callback may even have freed it): r is not touched again.
    // The trace of a request the caller serves (TRITONBACKEND_RequestTrace)
    // makes this request's trace a child of that request's.
    struct thost_reqctx* parent = NULL;
    if (trace != NULL) {
      parent =
          ((struct thost_trace*)thost_handle_object(trace, THOST_KIND_TRACE))
              ->ctx;
    }
    err = thostServerInferAsync(host, r, call, parent);
    if (err == NULL)
      return NULL;
    free(call);
  }
  __atomic_store_n(&r->in_flight, 0, __ATOMIC_RELEASE);
  return err;
}

TRITONSERVER_Error*
TRITONSERVER_ServerModelIsReady(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, bool* ready)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(
      model_name != NULL && ready != NULL, "model_name or ready is NULL");
  return thostServerModelIsReady(host, (char*)model_name, model_version, ready);
}

TRITONSERVER_Error*
TRITONSERVER_ServerModelMetadata(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, TRITONSERVER_Message** model_metadata)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(
      model_name != NULL && model_metadata != NULL,
      "model_name or model_metadata is NULL");
  return thostServerModelMetadata(
      host, (char*)model_name, model_version, model_metadata);
}

TRITONSERVER_Error*
TRITONSERVER_ServerModelConfig(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, const uint32_t config_version,
    TRITONSERVER_Message** model_config)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(
      model_name != NULL && model_config != NULL,
      "model_name or model_config is NULL");
  // The version is checked once the model is found, as Triton does.
  return thostServerModelConfig(
      host, (char*)model_name, model_version, config_version, model_config);
}

void
thost_message_store(struct thost_message* m, TRITONSERVER_Message** out)
{
  *out = THOST_AS_HANDLE(TRITONSERVER_Message, m->handle);
}
