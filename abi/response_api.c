// TRITONBACKEND_* functions on response factories and responses (outputs
// are in output_api.c, response statistics in response_stats.c). A response
// is built in C memory (outputs, buffers, parameters) and crosses into Go
// once, in ResponseSend. Go either copies what it needs and gives the
// response back to be freed here, or keeps it and lends its output buffers
// to the frontend, which frees it once the wire has written them
// (thost_sent_response_free, from any thread). Factories and unsent
// responses hold a reference on their request's context, so they stay
// usable after the request is released. Safe from any thread; one response
// is built by one thread at a time.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "backend_threads.h"
#include "block_pool.h"
#include "inprocess.h"
#include "objects.h"

#define FACTORY(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_FACTORY, "response factory")
#define RESPONSE(var, h) THOST_OBJECT(var, h, THOST_KIND_RESPONSE, "response")

// ---- Factories --------------------------------------------------------------

TRITONSERVER_Error*
TRITONBACKEND_ResponseFactoryNew(
    TRITONBACKEND_ResponseFactory** factory, TRITONBACKEND_Request* request)
{
  struct thost_request* r;
  THOST_CHECK_ARG(factory != NULL, "factory is NULL");
  THOST_OBJECT(r, request, THOST_KIND_REQUEST, "request");
  struct thost_factory* f = malloc(sizeof(*f));
  if (f == NULL)
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  f->ctx = r->ctx;
  f->handle = thost_handle_new(THOST_KIND_FACTORY, f);
  if (f->handle == 0) {
    free(f);
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: out of handles", __func__);
  }
  thost_enter_host(f->ctx->host);
  thost_reqctx_ref(f->ctx);
  thost_count(f->ctx->host, THOST_COUNT_FACTORY, 1);
  *factory = THOST_AS_HANDLE(TRITONBACKEND_ResponseFactory, f->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseFactoryDelete(TRITONBACKEND_ResponseFactory* factory)
{
  if (factory == NULL)
    return NULL;  // as deleting a null pointer in Triton
  struct thost_factory* f;
  FACTORY(f, factory);
  struct thost_reqctx* ctx = f->ctx;
  thost_handle_free(f->handle);
  free(f);
  thost_count(ctx->host, THOST_COUNT_FACTORY, -1);
  thost_reqctx_unref(ctx);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseFactorySendFlags(
    TRITONBACKEND_ResponseFactory* factory, const uint32_t send_flags)
{
  struct thost_factory* f;
  FACTORY(f, factory);
  if (thost_executing_instance == NULL)  // a backend's own thread
    thost_backend_thread_sends();
  thost_enter_host(f->ctx->host);
  struct thost_rstat* stats = thost_reqctx_take_stats(f->ctx);
  TRITONSERVER_Error* err =
      thostSendFlags(f->ctx, send_flags, stats, thost_batch_waiting());
  thost_rstats_free(stats);
  return err;
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseFactoryIsCancelled(
    TRITONBACKEND_ResponseFactory* factory, bool* is_cancelled)
{
  struct thost_factory* f;
  FACTORY(f, factory);
  THOST_CHECK_ARG(is_cancelled != NULL, "is_cancelled is NULL");
  *is_cancelled = __atomic_load_n(&f->ctx->cancelled, __ATOMIC_ACQUIRE) != 0;
  return NULL;
}

// ---- Responses --------------------------------------------------------------

// Copies the n bytes of s, NUL-terminated, into the response's block while
// they fit, else into memory of their own; NULL when out of memory.
static char*
response_param_text(struct thost_response* r, const char* s, size_t n)
{
  if (n < sizeof(r->param_text) - r->param_text_used) {
    char* d = r->param_text + r->param_text_used;
    memcpy(d, s, n);
    d[n] = 0;
    r->param_text_used += n + 1;
    return d;
  }
  return thost_strndup(s, n);
}

// Frees text response_param_text made (NULL does nothing).
static void
response_param_text_free(struct thost_response* r, char* s)
{
  if (s < r->param_text || s >= r->param_text + sizeof(r->param_text))
    free(s);
}

static TRITONSERVER_Error*
response_new(TRITONBACKEND_Response** response, struct thost_reqctx* ctx)
{
  struct thost_response* r = thost_block_get(THOST_POOL_RESPONSE);
  if (r == NULL)
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  thost_clear(r, THOST_RESPONSE_CLEARED_BYTES);
  r->ctx = ctx;
  r->host = ctx->host;
  r->outputs = r->inline_outputs;
  r->output_cap = THOST_RESPONSE_BLOCK_OUTPUTS;
  r->params = r->block_params;
  r->param_cap = THOST_RESPONSE_BLOCK_PARAMS;
  r->handle = thost_handle_new(THOST_KIND_RESPONSE, r);
  if (r->handle == 0) {
    thost_block_put(THOST_POOL_RESPONSE, r);
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "out of handles for a response");
  }
  thost_enter_host(ctx->host);
  thost_reqctx_ref(ctx);
  thost_count(ctx->host, THOST_COUNT_RESPONSE, 1);
  thost_caller_start(ctx);
  *response = THOST_AS_HANDLE(TRITONBACKEND_Response, r->handle);
  return NULL;
}

// Frees the handles of a response and of its outputs: from here on the
// backend's handles are stale.
static void
response_free_handles(struct thost_response* r)
{
  for (uint32_t i = 0; i < r->output_count; i++) {
    struct thost_output* out = r->outputs[i];
    thost_handle_free(out->handle);
    thost_handle_free(out->attrs.handle);
    out->handle = 0;
    out->attrs.handle = 0;
  }
  thost_handle_free(r->handle);
  r->handle = 0;
}

// Frees the memory of a response whose handles are gone.
static void
response_free_memory(struct thost_response* r)
{
  for (uint32_t i = 0; i < r->output_count; i++) {
    struct thost_output* out = r->outputs[i];
    if (thost_caller_release_output(out)) {
      // the caller's allocator took its buffer back
    } else if (out->device_buffer) {
      TRITONSERVER_Error* err = thostDeviceFree(
          out->host, out->attrs.memory_type, out->attrs.memory_type_id,
          out->buffer);
      if (err != NULL)
        TRITONSERVER_ErrorDelete(err);
    } else if (out->buffer != out->inline_data && out->host != NULL) {
      thost_outbuf_put(&out->host->outbufs, out->buffer, out->buffer_cap);
    } else if (out->buffer != out->inline_data) {
      free(out->buffer);
    }
    if (!out->in_block)
      free(out);
  }
  if (r->outputs != r->inline_outputs)
    free(r->outputs);
  for (uint32_t i = 0; i < r->param_count; i++) {
    response_param_text_free(r, r->params[i].name);
    response_param_text_free(r, r->params[i].s);
  }
  if (r->params != r->block_params)
    free(r->params);
  thost_block_put(THOST_POOL_RESPONSE, r);
}

// Frees an unsent response and lets go of its request context.
static void
response_free(struct thost_response* r)
{
  struct thost_reqctx* ctx = r->ctx;
  response_free_handles(r);
  response_free_memory(r);
  thost_count(ctx->host, THOST_COUNT_RESPONSE, -1);
  thost_reqctx_unref(ctx);
}

void
thost_sent_response_free(struct thost_response* r)
{
  struct thost_host* host = r->host;
  response_free_memory(r);
  thost_count(host, THOST_COUNT_LENT, -1);
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseNew(
    TRITONBACKEND_Response** response, TRITONBACKEND_Request* request)
{
  struct thost_request* req;
  THOST_CHECK_ARG(response != NULL, "response is NULL");
  THOST_OBJECT(req, request, THOST_KIND_REQUEST, "request");
  return response_new(response, req->ctx);
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseNewFromFactory(
    TRITONBACKEND_Response** response, TRITONBACKEND_ResponseFactory* factory)
{
  struct thost_factory* f;
  THOST_CHECK_ARG(response != NULL, "response is NULL");
  FACTORY(f, factory);
  return response_new(response, f->ctx);
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseDelete(TRITONBACKEND_Response* response)
{
  if (response == NULL)
    return NULL;  // as deleting a null pointer in Triton
  struct thost_response* r;
  RESPONSE(r, response);
  response_free(r);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseSend(
    TRITONBACKEND_Response* response, const uint32_t send_flags,
    TRITONSERVER_Error* error)
{
  struct thost_response* r;
  RESPONSE(r, response);
  // Ownership passes to the server whatever the outcome: the backend's
  // handles go now, and the response is counted as sent. Go reads it
  // during thostResponseSend and keeps it (its output buffers lent to the
  // frontend, which frees it with thost_sent_response_free, maybe before
  // thostResponseSend returns) or not (freed here). A kept response is
  // counted as lent by Go before it can be freed (lent.go); one given
  // straight back never is. The context stays referenced until Go
  // returned, and no longer: a kept response does not hold its request.
  struct thost_reqctx* ctx = r->ctx;
  if (thost_executing_instance == NULL)  // a backend's own thread
    thost_backend_thread_sends();
  thost_enter_host(ctx->host);
  response_free_handles(r);
  thost_count(ctx->host, THOST_COUNT_RESPONSE, -1);
  struct thost_rstat* stats = thost_reqctx_take_stats(ctx);
  bool kept = false;
  TRITONSERVER_Error* err = thostResponseSend(
      r, send_flags, error, stats, thost_batch_waiting(), &kept);
  thost_rstats_free(stats);
  if (!kept)
    response_free_memory(r);
  thost_reqctx_unref(ctx);
  return err;
}

static TRITONSERVER_Error*
add_param(
    struct thost_response* r, const char* name, TRITONSERVER_ParameterType type,
    struct TRITONSERVER_Parameter** out)
{
  if (r->param_count == r->param_cap) {
    uint32_t cap = r->param_cap * 2;
    struct TRITONSERVER_Parameter* p = malloc(cap * sizeof(*p));
    if (p == NULL)
      return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    memcpy(p, r->params, r->param_count * sizeof(*p));
    if (r->params != r->block_params)
      free(r->params);
    r->params = p;
    r->param_cap = cap;
  }
  struct TRITONSERVER_Parameter* p = &r->params[r->param_count];
  thost_clear(p, sizeof(*p));
  p->name_len = strlen(name);
  p->name = response_param_text(r, name, p->name_len);
  if (p->name == NULL)
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  p->type = type;
  r->param_count++;
  *out = p;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseSetStringParameter(
    TRITONBACKEND_Response* response, const char* name, const char* value)
{
  struct thost_response* r;
  RESPONSE(r, response);
  THOST_CHECK_ARG(name != NULL && value != NULL, "name or value is NULL");
  struct TRITONSERVER_Parameter* p;
  TRITONSERVER_Error* err =
      add_param(r, name, TRITONSERVER_PARAMETER_STRING, &p);
  if (err != NULL)
    return err;
  p->s_len = strlen(value);
  p->s = response_param_text(r, value, p->s_len);
  if (p->s == NULL) {  // the parameter is taken back: a STRING has a value
    response_param_text_free(r, p->name);
    r->param_count--;
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  }
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseSetIntParameter(
    TRITONBACKEND_Response* response, const char* name, const int64_t value)
{
  struct thost_response* r;
  RESPONSE(r, response);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  struct TRITONSERVER_Parameter* p;
  TRITONSERVER_Error* err = add_param(r, name, TRITONSERVER_PARAMETER_INT, &p);
  if (err == NULL)
    p->i = value;
  return err;
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseSetBoolParameter(
    TRITONBACKEND_Response* response, const char* name, const bool value)
{
  struct thost_response* r;
  RESPONSE(r, response);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  struct TRITONSERVER_Parameter* p;
  TRITONSERVER_Error* err = add_param(r, name, TRITONSERVER_PARAMETER_BOOL, &p);
  if (err == NULL)
    p->b = value;
  return err;
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseSetDoubleParameter(
    TRITONBACKEND_Response* response, const char* name, const double value)
{
  struct thost_response* r;
  RESPONSE(r, response);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  struct TRITONSERVER_Parameter* p;
  TRITONSERVER_Error* err =
      add_param(r, name, TRITONSERVER_PARAMETER_DOUBLE, &p);
  if (err == NULL)
    p->d = value;
  return err;
}
