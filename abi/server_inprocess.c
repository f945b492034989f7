// TRITONSERVER_Server* functions of the in-process API that backends use:
// submitting a request (TRITONSERVER_ServerInferAsync) and querying models.
// The C side checks the arguments; Go finds the model and runs the request
// (inprocess.go, exports_inprocess.go).
#include <stdlib.h>

#include "_cgo_export.h"
#include "inprocess.h"

#define SERVER(var, h) THOST_OBJECT(var, h, THOST_KIND_SERVER, "server")

// Takes the trace given to ServerInferAsync, so that no other call uses it
// while the request is in flight; NULL (and *err) when it cannot be taken.
static struct thost_trace*
take_trace(TRITONSERVER_InferenceTrace* trace, TRITONSERVER_Error** err)
{
  struct thost_trace* t = thost_handle_object(trace, THOST_KIND_TRACE);
  if (t == NULL) {
    *err = thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "TRITONSERVER_ServerInferAsync: "
        "invalid trace");
  } else if (!t->standalone) {
    *err = thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "TRITONSERVER_ServerInferAsync: the trace of a request the backend "
        "serves cannot follow another request; pass a child of it "
        "(TRITONSERVER_InferenceTraceSpawnChildTrace)");
    t = NULL;
  } else {
    int32_t idle = 0;
    if (!__atomic_compare_exchange_n(
            &t->in_flight, &idle, 1, false, __ATOMIC_ACQ_REL,
            __ATOMIC_ACQUIRE)) {
      *err = thost_errorf(
          TRITONSERVER_ERROR_INVALID_ARG,
          "TRITONSERVER_ServerInferAsync: the trace already follows a "
          "request in flight");
      t = NULL;
    }
  }
  return t;
}

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
  TRITONSERVER_Error* err = NULL;
  struct thost_trace* t = NULL;
  if (trace != NULL && (t = take_trace(trace, &err)) == NULL)
    return err;
  // The trace is the server's from here if the request is accepted; on an
  // error it stays the caller's, unreleased, as Triton leaves it after a
  // request that fails its checks.
  if (r->host != host) {
    err = thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: the request was created for another server", __func__);
  } else {
    int32_t idle = 0;
    if (!__atomic_compare_exchange_n(
            &r->in_flight, &idle, 1, false, __ATOMIC_ACQ_REL,
            __ATOMIC_ACQUIRE)) {
      err = thost_errorf(
          TRITONSERVER_ERROR_INVALID_ARG,
          "%s: the request is already in flight; submit it again after its "
          "release callback",
          __func__);
    } else {
      struct thost_infer_call* call = thost_infer_call_new(r, &err);
      if (call != NULL) {
        __atomic_store_n(&r->cancelled, 0, __ATOMIC_RELEASE);
        // On success Go owns call and the trace, and the request may
        // already have come back (its release callback may even have freed
        // it): r is not touched again.
        err = thostServerInferAsync(host, r, call, t);
        if (err == NULL)
          return NULL;
        free(call);
      }
      __atomic_store_n(&r->in_flight, 0, __ATOMIC_RELEASE);
    }
  }
  if (t != NULL)
    __atomic_store_n(&t->in_flight, 0, __ATOMIC_RELEASE);
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
