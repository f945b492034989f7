// TRITONBACKEND_* functions on response factories, responses, outputs and
// response statistics. A response is built in C memory (outputs, buffers,
// parameters) and crosses into Go once, in ResponseSend, which copies it out
// and frees it. Factories and responses hold a reference on their request's
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

// ---- Outputs --------------------------------------------------------------------

TRITONSERVER_Error* TRITONBACKEND_ResponseOutput(
    TRITONBACKEND_Response* response, TRITONBACKEND_Output** output, const char* name,
    const TRITONSERVER_DataType datatype, const int64_t* shape, const uint32_t dims_count) {
  CHECK_RESPONSE(response);
  THOST_CHECK_ARG(output != NULL && name != NULL, "output or name is NULL");
  THOST_CHECK_ARG(shape != NULL || dims_count == 0, "shape is NULL");
  THOST_CHECK_ARG(datatype > TRITONSERVER_TYPE_INVALID && datatype <= TRITONSERVER_TYPE_BF16, "invalid datatype");
  for (uint32_t i = 0; i < response->output_count; i++) {
    if (strcmp(response->outputs[i]->name, name) == 0) {
      return thost_errorf(TRITONSERVER_ERROR_ALREADY_EXISTS, "output '%s' was already added to this response", name);
    }
  }
  if (response->output_count == response->output_cap) {
    uint32_t cap = response->output_cap * 2;
    TRITONBACKEND_Output** outs = malloc(cap * sizeof(*outs));
    if (outs == NULL) return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    memcpy(outs, response->outputs, response->output_count * sizeof(*outs));
    if (response->outputs != response->inline_outputs) free(response->outputs);
    response->outputs = outs;
    response->output_cap = cap;
  }
  size_t name_len = strlen(name);
  // One allocation: the output, its shape, then its name.
  TRITONBACKEND_Output* out = malloc(sizeof(*out) + dims_count * sizeof(int64_t) + name_len + 1);
  if (out == NULL) return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  memset(out, 0, offsetof(TRITONBACKEND_Output, inline_data));
  out->magic = THOST_MAGIC_OUTPUT;
  out->datatype = datatype;
  out->shape = (int64_t*)(out + 1);
  if (dims_count > 0) memcpy(out->shape, shape, dims_count * sizeof(int64_t));
  out->dims_count = dims_count;
  out->name = (char*)(out->shape + dims_count);
  memcpy(out->name, name, name_len + 1);
  response->outputs[response->output_count++] = out;
  *output = out;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_OutputBuffer(
    TRITONBACKEND_Output* output, void** buffer, const uint64_t buffer_byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id) {
  THOST_CHECK_HANDLE(output, THOST_MAGIC_OUTPUT, "output");
  THOST_CHECK_ARG(buffer != NULL && memory_type != NULL && memory_type_id != NULL,
                  "buffer, memory_type or memory_type_id is NULL");
  if (output->has_buffer) {
    return thost_errorf(TRITONSERVER_ERROR_ALREADY_EXISTS, "output '%s' already has a buffer", output->name);
  }
  if (buffer_byte_size <= THOST_INLINE_OUTPUT_BYTES) {
    output->buffer = output->inline_data;
  } else {
    output->buffer = malloc(buffer_byte_size);
    if (output->buffer == NULL) {
      return thost_errorf(TRITONSERVER_ERROR_UNAVAILABLE, "cannot allocate %llu bytes for output '%s'",
                          (unsigned long long)buffer_byte_size, output->name);
    }
  }
  output->has_buffer = true;
  output->byte_size = buffer_byte_size;
  output->attrs.byte_size = buffer_byte_size;
  output->attrs.memory_type = TRITONSERVER_MEMORY_CPU;  // outputs always live in host memory
  output->attrs.memory_type_id = 0;
  *buffer = output->buffer;
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_OutputBufferAttributes(
    TRITONBACKEND_Output* output, TRITONSERVER_BufferAttributes** buffer_attributes) {
  THOST_CHECK_HANDLE(output, THOST_MAGIC_OUTPUT, "output");
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  // Before TRITONBACKEND_OutputBuffer the attributes describe no buffer (CPU,
  // id 0, size 0); Triton hands them out then too.
  *buffer_attributes = &output->attrs;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_InferenceResponseOutputByName(
    TRITONBACKEND_Response* response, const char* name, TRITONSERVER_DataType* datatype, const int64_t** shape,
    uint64_t* dim_count) {
  CHECK_RESPONSE(response);
  THOST_CHECK_ARG(name != NULL && datatype != NULL && shape != NULL && dim_count != NULL, "NULL argument");
  for (uint32_t i = 0; i < response->output_count; i++) {
    TRITONBACKEND_Output* out = response->outputs[i];
    if (strcmp(out->name, name) == 0) {
      *datatype = out->datatype;
      *shape = out->shape;
      *dim_count = out->dims_count;
      return NULL;
    }
  }
  return thost_errorf(TRITONSERVER_ERROR_NOT_FOUND, "the response has no output '%s'", name);
}

// ---- Response statistics ----------------------------------------------------------

#define CHECK_RSTATS(s) THOST_CHECK_HANDLE(s, THOST_MAGIC_RSTATS, "response statistics")

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsNew(
    TRITONBACKEND_ModelInstanceResponseStatistics** response_statistics) {
  THOST_CHECK_ARG(response_statistics != NULL, "response_statistics is NULL");
  TRITONBACKEND_ModelInstanceResponseStatistics* s = calloc(1, sizeof(*s));
  if (s == NULL) return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  s->magic = THOST_MAGIC_RSTATS;
  thost_count(THOST_COUNT_RSTATS, 1);
  *response_statistics = s;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsDelete(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics) {
  CHECK_RSTATS(response_statistics);
  response_statistics->magic = THOST_MAGIC_DEAD;
  thost_quarantine_free(response_statistics);
  thost_count(THOST_COUNT_RSTATS, -1);
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics, TRITONBACKEND_ModelInstance* model_instance) {
  CHECK_RSTATS(response_statistics);
  THOST_CHECK_HANDLE(model_instance, THOST_MAGIC_INSTANCE, "model instance");
  response_statistics->instance = model_instance;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics,
    TRITONBACKEND_ResponseFactory* response_factory) {
  CHECK_RSTATS(response_statistics);
  CHECK_FACTORY(response_factory);
  response_statistics->factory = response_factory;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics, uint64_t response_start) {
  CHECK_RSTATS(response_statistics);
  response_statistics->response_start = response_start;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics, uint64_t compute_output_start) {
  CHECK_RSTATS(response_statistics);
  response_statistics->compute_output_start = compute_output_start;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics, uint64_t response_end) {
  CHECK_RSTATS(response_statistics);
  response_statistics->response_end = response_end;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsSetError(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics, TRITONSERVER_Error* error) {
  CHECK_RSTATS(response_statistics);
  response_statistics->has_error = error != NULL;
  response_statistics->error_code = error != NULL ? error->code : TRITONSERVER_ERROR_UNKNOWN;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceReportResponseStatistics(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics) {
  CHECK_RSTATS(response_statistics);
  THOST_CHECK_HANDLE(response_statistics->instance, THOST_MAGIC_INSTANCE, "model instance in response statistics");
  CHECK_FACTORY(response_statistics->factory);
  TRITONBACKEND_ModelInstanceResponseStatistics* s = response_statistics;
  struct thost_reqctx* ctx = s->factory->ctx;
  struct thost_rstat flush[THOST_PENDING_RSTATS];
  uint32_t nflush = 0;
  pthread_mutex_lock(&ctx->mu);
  if (ctx->npending == THOST_PENDING_RSTATS) {
    nflush = ctx->npending;
    memcpy(flush, ctx->pending, sizeof(flush));
    ctx->npending = 0;
  }
  struct thost_rstat* r = &ctx->pending[ctx->npending++];
  r->instance_key = s->instance->key;
  r->start = s->response_start;
  r->compute_output_start = s->compute_output_start;
  r->end = s->response_end;
  r->has_error = s->has_error;
  r->error_code = (int32_t)s->error_code;
  pthread_mutex_unlock(&ctx->mu);
  // Usually the reports ride along with the request's next send; a full
  // buffer goes to Go now.
  if (nflush > 0) return thostResponseStatistics(ctx->key, flush, nflush);
  return NULL;
}
