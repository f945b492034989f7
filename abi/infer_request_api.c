// TRITONSERVER_InferenceRequest* functions on a request as a whole: its
// life, id, flags, correlation id, priority, timeout, parameters, callbacks
// and cancellation (inputs and outputs are in infer_request_tensors.c). A
// request is C memory that only its creator changes; the server reads it
// once, when it is submitted (inprocess.go). Pure C, except that creating a
// request asks the server for the model and cancelling one in flight reaches
// the server.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "inprocess.h"

#define REQUEST(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_INFER_REQUEST, "inference request")

// Refuses a change to a request in flight (the server reads it until its
// release callback).
#define MUTABLE(r)                                                   \
  do {                                                               \
    if (__atomic_load_n(&(r)->in_flight, __ATOMIC_ACQUIRE))          \
      return thost_errorf(                                           \
          TRITONSERVER_ERROR_INVALID_ARG,                            \
          "%s: the request is in flight until its release callback", \
          __func__);                                                 \
  } while (0)

static TRITONSERVER_Error*
out_of_memory(const char* fn)
{
  return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", fn);
}

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
  struct thost_infer_request* r = calloc(1, sizeof(*r));
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

// ---- Metadata
// -----------------------------------------------------------------

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

// ---- Parameters
// ---------------------------------------------------------------

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
  memset(p, 0, sizeof(*p));
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

// ---- Callbacks and cancellation
// -----------------------------------------------

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

// ---- Submissions
// --------------------------------------------------------------

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
  struct thost_infer_call* c = calloc(1, sizeof(*c));
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
