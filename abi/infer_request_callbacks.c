// TRITONSERVER_InferenceRequest* functions on a request's parameters, its
// callbacks and its cancellation, and the C side of a submission: the
// callbacks copied when it is submitted (thost_infer_call_new), calling
// them, and the request's return. Pure C, except that cancelling a request
// in flight reaches the server.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "infer_request.h"

// ---- Parameters -------------------------------------------------------------

static TRITONSERVER_Error*
add_param(
    struct thost_infer_request* r, const char* fn, const char* key,
    TRITONSERVER_ParameterType type, struct thost_ireq_param** out)
{
  if (r->param_count == r->param_cap) {
    uint32_t cap = r->param_cap ? r->param_cap * 2 : 4;
    struct thost_ireq_param* p = realloc(r->params, cap * sizeof(*p));
    if (p == NULL)
      return out_of_memory(fn);
    r->params = p;
    r->param_cap = cap;
  }
  struct thost_ireq_param* p = &r->params[r->param_count];
  thost_clear(p, sizeof(*p));
  if ((p->name = strdup(key)) == NULL)
    return out_of_memory(fn);
  p->type = type;
  r->param_count++;
  *out = p;
  return NULL;
}

#define PARAM_SETTER(FN, CTYPE, TYPE, FIELD)                         \
  TRITONSERVER_Error* FN(                                            \
      TRITONSERVER_InferenceRequest* request, const char* key,       \
      const CTYPE value)                                             \
  {                                                                  \
    struct thost_infer_request* r;                                   \
    REQUEST(r, request);                                             \
    THOST_CHECK_ARG(key != NULL, "key is NULL");                     \
    MUTABLE(r);                                                      \
    struct thost_ireq_param* p;                                      \
    TRITONSERVER_Error* err = add_param(r, __func__, key, TYPE, &p); \
    if (err == NULL)                                                 \
      p->FIELD = value;                                              \
    return err;                                                      \
  }

PARAM_SETTER(
    TRITONSERVER_InferenceRequestSetIntParameter, int64_t,
    TRITONSERVER_PARAMETER_INT, i)
PARAM_SETTER(
    TRITONSERVER_InferenceRequestSetBoolParameter, bool,
    TRITONSERVER_PARAMETER_BOOL, b)
PARAM_SETTER(
    TRITONSERVER_InferenceRequestSetDoubleParameter, double,
    TRITONSERVER_PARAMETER_DOUBLE, d)

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetStringParameter(
    TRITONSERVER_InferenceRequest* request, const char* key, const char* value)
{
  struct thost_infer_request* r;
  REQUEST(r, request);
  THOST_CHECK_ARG(key != NULL && value != NULL, "key or value is NULL");
  MUTABLE(r);
  char* copy = strdup(value);
  if (copy == NULL)
    return out_of_memory(__func__);
  struct thost_ireq_param* p;
  TRITONSERVER_Error* err =
      add_param(r, __func__, key, TRITONSERVER_PARAMETER_STRING, &p);
  if (err != NULL) {
    free(copy);
    return err;
  }
  p->s = copy;
  return NULL;
}

// ---- Callbacks and cancellation ---------------------------------------------

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetReleaseCallback(
    TRITONSERVER_InferenceRequest* inference_request,
    TRITONSERVER_InferenceRequestReleaseFn_t request_release_fn,
    void* request_release_userp)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  MUTABLE(r);
  r->release_fn = request_release_fn;
  r->release_userp = request_release_userp;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetResponseCallback(
    TRITONSERVER_InferenceRequest* inference_request,
    TRITONSERVER_ResponseAllocator* response_allocator,
    void* response_allocator_userp,
    TRITONSERVER_InferenceResponseCompleteFn_t response_fn,
    void* response_userp)
{
  struct thost_infer_request* r;
  struct thost_allocator* a;
  REQUEST(r, inference_request);
  THOST_OBJECT(
      a, response_allocator, THOST_KIND_ALLOCATOR, "response allocator");
  THOST_CHECK_ARG(response_fn != NULL, "response_fn is NULL");
  MUTABLE(r);
  r->allocator = a->handle;
  r->allocator_userp = response_allocator_userp;
  r->response_fn = response_fn;
  r->response_userp = response_userp;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestCancel(
    TRITONSERVER_InferenceRequest* inference_request)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  __atomic_store_n(&r->cancelled, 1, __ATOMIC_RELEASE);
  uint64_t call = __atomic_load_n(&r->call, __ATOMIC_ACQUIRE);
  if (call != 0)
    thostInferCancel(r->host, call);  // a finished call is simply not found
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestIsCancelled(
    TRITONSERVER_InferenceRequest* inference_request, bool* is_cancelled)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(is_cancelled != NULL, "is_cancelled is NULL");
  *is_cancelled = __atomic_load_n(&r->cancelled, __ATOMIC_ACQUIRE) != 0;
  return NULL;
}

// ---- Submissions ------------------------------------------------------------

struct thost_infer_call*
thost_infer_call_new(struct thost_infer_request* r, TRITONSERVER_Error** err)
{
  struct thost_allocator* a = thost_handle_object(
      (const void*)(uintptr_t)r->allocator, THOST_KIND_ALLOCATOR);
  if (r->response_fn == NULL || a == NULL) {
    *err = thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "TRITONSERVER_ServerInferAsync: the request has no %s; set one with "
        "TRITONSERVER_InferenceRequestSetResponseCallback",
        r->response_fn == NULL ? "response callback"
                               : "live response allocator");
    return NULL;
  }
  struct thost_infer_call* c = thost_zalloc(sizeof(*c));
  if (c == NULL) {
    *err = out_of_memory("TRITONSERVER_ServerInferAsync");
    return NULL;
  }
  c->request = r->handle;
  c->release_fn = r->release_fn;
  c->release_userp = r->release_userp;
  c->response_fn = r->response_fn;
  c->response_userp = r->response_userp;
  c->alloc = (struct thost_caller_alloc){
      .allocator = a->handle,
      .userp = r->allocator_userp,
      .alloc_fn = a->alloc_fn,
      .release_fn = a->release_fn,
      .start_fn = a->start_fn,
      .query_fn = a->query_fn,
      .attributes_fn = a->attributes_fn,
  };
  return c;
}

void
thost_infer_request_set_call(struct thost_infer_request* r, uint64_t call)
{
  __atomic_store_n(&r->call, call, __ATOMIC_RELEASE);
}

void
thost_infer_request_landed(struct thost_infer_request* r)
{
  __atomic_store_n(&r->call, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&r->in_flight, 0, __ATOMIC_RELEASE);
}

void
thost_infer_call_respond(
    struct thost_infer_call* call, uint64_t response, uint32_t flags)
{
  call->response_fn(
      THOST_AS_HANDLE(TRITONSERVER_InferenceResponse, response), flags,
      call->response_userp);
}

void
thost_infer_call_release(struct thost_infer_call* call)
{
  if (call->release_fn != NULL) {
    call->release_fn(
        THOST_AS_HANDLE(TRITONSERVER_InferenceRequest, call->request),
        TRITONSERVER_REQUEST_RELEASE_ALL, call->release_userp);
  }
}
