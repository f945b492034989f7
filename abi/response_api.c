// TRITONBACKEND_* functions on response factories and responses (outputs
// are in output_api.c, response statistics in response_stats.c). A response
// is built in C memory (outputs, buffers, parameters) and crosses into Go
// once, in ResponseSend, which copies it out and frees it. Factories and responses hold a reference on their request's
// context, so they stay usable after the request is released. Safe from any
// thread; one response is built by one thread at a time.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "handles.h"

// Frees a dead handle after a delay (request_api.c), so that a second delete
// of it is refused instead of touching freed memory.
void thost_quarantine_free(void* dead);

// ---- Factories ------------------------------------------------------------------

#define CHECK_FACTORY(f) THOST_CHECK_HANDLE(f, THOST_MAGIC_FACTORY, "response factory")

TRITONSERVER_Error* TRITONBACKEND_ResponseFactoryNew(
    TRITONBACKEND_ResponseFactory** factory, TRITONBACKEND_Request* request) {
  THOST_CHECK_ARG(factory != NULL, "factory is NULL");
  THOST_CHECK_HANDLE(request, THOST_MAGIC_REQUEST, "request");
  TRITONBACKEND_ResponseFactory* f = malloc(sizeof(*f));
  if (f == NULL) return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  f->magic = THOST_MAGIC_FACTORY;
  f->ctx = request->ctx;
  thost_reqctx_ref(f->ctx);
  thost_count(THOST_COUNT_FACTORY, 1);
  *factory = f;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ResponseFactoryDelete(TRITONBACKEND_ResponseFactory* factory) {
  CHECK_FACTORY(factory);
  struct thost_reqctx* ctx = factory->ctx;
  factory->magic = THOST_MAGIC_DEAD;
  thost_quarantine_free(factory);
  thost_count(THOST_COUNT_FACTORY, -1);
  thost_reqctx_unref(ctx);
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ResponseFactorySendFlags(
    TRITONBACKEND_ResponseFactory* factory, const uint32_t send_flags) {
  CHECK_FACTORY(factory);
  struct thost_rstat stats[THOST_PENDING_RSTATS];
  uint32_t n = thost_reqctx_take_stats(factory->ctx, stats);
  return thostSendFlags(factory->ctx->key, send_flags, stats, n);
}

TRITONSERVER_Error* TRITONBACKEND_ResponseFactoryIsCancelled(
    TRITONBACKEND_ResponseFactory* factory, bool* is_cancelled) {
  CHECK_FACTORY(factory);
  THOST_CHECK_ARG(is_cancelled != NULL, "is_cancelled is NULL");
  *is_cancelled = __atomic_load_n(&factory->ctx->cancelled, __ATOMIC_ACQUIRE) != 0;
  return NULL;
}

// ---- Responses ------------------------------------------------------------------

#define CHECK_RESPONSE(r) THOST_CHECK_HANDLE(r, THOST_MAGIC_RESPONSE, "response")

static TRITONSERVER_Error* response_new(TRITONBACKEND_Response** response, struct thost_reqctx* ctx) {
  TRITONBACKEND_Response* r = calloc(1, sizeof(*r));
  if (r == NULL) return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  r->magic = THOST_MAGIC_RESPONSE;
  r->ctx = ctx;
  r->outputs = r->inline_outputs;
  r->output_cap = sizeof(r->inline_outputs) / sizeof(r->inline_outputs[0]);
  thost_reqctx_ref(ctx);
  thost_count(THOST_COUNT_RESPONSE, 1);
  *response = r;
  return NULL;
}

static void response_free(TRITONBACKEND_Response* r) {
  for (uint32_t i = 0; i < r->output_count; i++) {
    TRITONBACKEND_Output* out = r->outputs[i];
    if (out->buffer != out->inline_data) free(out->buffer);
    out->magic = THOST_MAGIC_DEAD;
    free(out);
  }
  if (r->outputs != r->inline_outputs) free(r->outputs);
  for (uint32_t i = 0; i < r->param_count; i++) {
    free(r->params[i].name);
    free(r->params[i].s);
  }
  free(r->params);
  struct thost_reqctx* ctx = r->ctx;
  r->magic = THOST_MAGIC_DEAD;
  thost_quarantine_free(r);
  thost_count(THOST_COUNT_RESPONSE, -1);
  thost_reqctx_unref(ctx);
}

TRITONSERVER_Error* TRITONBACKEND_ResponseNew(TRITONBACKEND_Response** response, TRITONBACKEND_Request* request) {
  THOST_CHECK_ARG(response != NULL, "response is NULL");
  THOST_CHECK_HANDLE(request, THOST_MAGIC_REQUEST, "request");
  return response_new(response, request->ctx);
}

TRITONSERVER_Error* TRITONBACKEND_ResponseNewFromFactory(
    TRITONBACKEND_Response** response, TRITONBACKEND_ResponseFactory* factory) {
  THOST_CHECK_ARG(response != NULL, "response is NULL");
  CHECK_FACTORY(factory);
  return response_new(response, factory->ctx);
}

TRITONSERVER_Error* TRITONBACKEND_ResponseDelete(TRITONBACKEND_Response* response) {
  CHECK_RESPONSE(response);
  response_free(response);
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ResponseSend(
    TRITONBACKEND_Response* response, const uint32_t send_flags, TRITONSERVER_Error* error) {
  CHECK_RESPONSE(response);
  // Ownership passes to the host whatever the outcome.
  struct thost_rstat stats[THOST_PENDING_RSTATS];
  uint32_t n = thost_reqctx_take_stats(response->ctx, stats);
  TRITONSERVER_Error* err = thostResponseSend(response, send_flags, error, stats, n);
  response_free(response);
  return err;
}

static TRITONSERVER_Error* add_param(TRITONBACKEND_Response* r, const char* name, TRITONSERVER_ParameterType type,
                                     TRITONSERVER_Parameter** out) {
  if (r->param_count == r->param_cap) {
    uint32_t cap = r->param_cap ? r->param_cap * 2 : 4;
    TRITONSERVER_Parameter* p = realloc(r->params, cap * sizeof(*p));
    if (p == NULL) return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    r->params = p;
    r->param_cap = cap;
  }
  TRITONSERVER_Parameter* p = &r->params[r->param_count];
  memset(p, 0, sizeof(*p));
  p->name = strdup(name);
  p->type = type;
  r->param_count++;
  *out = p;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ResponseSetStringParameter(
    TRITONBACKEND_Response* response, const char* name, const char* value) {
  CHECK_RESPONSE(response);
  THOST_CHECK_ARG(name != NULL && value != NULL, "name or value is NULL");
  TRITONSERVER_Parameter* p;
  TRITONSERVER_Error* err = add_param(response, name, TRITONSERVER_PARAMETER_STRING, &p);
  if (err == NULL) p->s = strdup(value);
  return err;
}

TRITONSERVER_Error* TRITONBACKEND_ResponseSetIntParameter(
    TRITONBACKEND_Response* response, const char* name, const int64_t value) {
  CHECK_RESPONSE(response);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  TRITONSERVER_Parameter* p;
  TRITONSERVER_Error* err = add_param(response, name, TRITONSERVER_PARAMETER_INT, &p);
  if (err == NULL) p->i = value;
  return err;
}

TRITONSERVER_Error* TRITONBACKEND_ResponseSetBoolParameter(
    TRITONBACKEND_Response* response, const char* name, const bool value) {
  CHECK_RESPONSE(response);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  TRITONSERVER_Parameter* p;
  TRITONSERVER_Error* err = add_param(response, name, TRITONSERVER_PARAMETER_BOOL, &p);
  if (err == NULL) p->b = value;
  return err;
}

TRITONSERVER_Error* TRITONBACKEND_ResponseSetDoubleParameter(
    TRITONBACKEND_Response* response, const char* name, const double value) {
  CHECK_RESPONSE(response);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  TRITONSERVER_Parameter* p;
  TRITONSERVER_Error* err = add_param(response, name, TRITONSERVER_PARAMETER_DOUBLE, &p);
  if (err == NULL) p->d = value;
  return err;
}
