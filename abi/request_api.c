// TRITONBACKEND_* functions on requests and inputs. A request is one C block
// that Go filled before Execute (execute.go); every getter reads it without
// crossing into Go. RequestRelease hands the request back to Go and frees the
// block. Valid from any thread between Execute and RequestRelease.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "block_pool.h"
#include "inprocess.h"
#include "objects.h"

// ---- Request context --------------------------------------------------------

struct thost_reqctx*
thost_reqctx_new(
    struct thost_host* host, uint64_t key,
    const struct thost_caller_alloc* caller)
{
  struct thost_reqctx* ctx = thost_zalloc(sizeof(*ctx));
  if (ctx == NULL)
    return NULL;
  if (caller != NULL) {  // a backend's request: a copy of its allocator
    ctx->caller = malloc(sizeof(*ctx->caller));
    if (ctx->caller == NULL) {
      free(ctx);
      return NULL;
    }
    *ctx->caller = *caller;
  }
  ctx->key = key;
  ctx->host = host;
  ctx->refs = 1;
  pthread_mutex_init(&ctx->mu, NULL);
  thost_count(host, THOST_COUNT_CONTEXT, 1);
  return ctx;
}

struct thost_rstat*
thost_reqctx_take_stats(struct thost_reqctx* ctx)
{
  if (__atomic_load_n(&ctx->pending, __ATOMIC_RELAXED) == NULL)
    return NULL;
  struct thost_rstat* r =
      __atomic_exchange_n(&ctx->pending, NULL, __ATOMIC_ACQUIRE);
  // Newest first on the stack: reversed, so Go records them in the order
  // they were reported.
  // The count starts again with a plain store, not a subtraction: it only
  // bounds the list, and a report counted by a push racing with this take
  // may be lost from it.
  __atomic_store_n(&ctx->npending, 0, __ATOMIC_RELAXED);
  struct thost_rstat* oldest = NULL;
  while (r != NULL) {
    struct thost_rstat* next = r->next;
    r->next = oldest;
    oldest = r;
    r = next;
  }
  return oldest;
}

void
thost_rstats_free(struct thost_rstat* list)
{
  while (list != NULL) {
    struct thost_rstat* next = list->next;
    thost_block_put(THOST_POOL_RSTAT, list);
    list = next;
  }
}

void
thost_reqctx_ref(struct thost_reqctx* ctx)
{
  __atomic_add_fetch(&ctx->refs, 1, __ATOMIC_RELAXED);
}

void
thost_reqctx_unref(struct thost_reqctx* ctx)
{
  if (__atomic_sub_fetch(&ctx->refs, 1, __ATOMIC_ACQ_REL) != 0)
    return;
  // Last reference: nobody else can touch pending any more.
  struct thost_rstat* stats = thost_reqctx_take_stats(ctx);
  thostRequestContextDone(ctx, stats);
  thost_rstats_free(stats);
  thost_reqctx_destroy(ctx);
}

void
thost_reqctx_destroy(struct thost_reqctx* ctx)
{
  // Reports are made through a factory, a response or the request block,
  // each holding a reference, and the end took those pending: any left
  // came from a backend still using a released request, and are dropped.
  thost_rstats_free(thost_reqctx_take_stats(ctx));
  pthread_mutex_destroy(&ctx->mu);
  thost_count(ctx->host, THOST_COUNT_CONTEXT, -1);
  free(ctx->caller);
  free(ctx);
}

// A zeroed block of size bytes (at least a struct thost_request) with its
// handle, holding a reference on ctx; NULL when memory or handles run out.
struct thost_request*
thost_request_new(size_t size, struct thost_reqctx* ctx)
{
  struct thost_request* req = thost_zalloc(size);
  if (req == NULL)
    return NULL;
  req->handle = thost_handle_new(THOST_KIND_REQUEST, req);
  if (req->handle == 0) {
    free(req);
    return NULL;
  }
  req->ctx = ctx;
  thost_count(ctx->host, THOST_COUNT_REQUEST, 1);
  return req;
}

struct thost_new_request
thost_reqctx_new_with_request(
    struct thost_host* host, uint64_t key,
    const struct thost_caller_alloc* caller, size_t size)
{
  struct thost_new_request out = {NULL, NULL};
  struct thost_reqctx* ctx = thost_reqctx_new(host, key, caller);
  if (ctx == NULL)
    return out;
  struct thost_request* req = thost_request_new(size, ctx);
  if (req == NULL) {
    thost_reqctx_destroy(ctx);
    return out;
  }
  out.ctx = ctx;
  out.req = req;
  return out;
}

// Frees a block and every handle made for what it holds, and drops its
// reference on the request context.
void
thost_request_free(struct thost_request* req)
{
  struct thost_reqctx* ctx = req->ctx;
  thost_request_free_block(req);
  thost_reqctx_unref(ctx);
}

void
thost_request_free_block(struct thost_request* req)
{
  struct thost_reqctx* ctx = req->ctx;
  thost_request_free_states(req);
  thost_handle_free(req->handle);
  for (uint32_t i = 0; i < req->input_count; i++) {
    struct thost_input* in = &req->inputs[i];
    thost_handle_free(in->handle);
    for (uint32_t k = 0; k < in->buffer_count; k++)
      thost_handle_free(in->buffers[k].attrs.handle);
  }
  if (req->trace != NULL) {
    thost_handle_free(req->trace->handle);
    free(req->trace->set_context);
  }
  free(req);
  thost_count(ctx->host, THOST_COUNT_REQUEST, -1);
}

// ---- Request ----------------------------------------------------------------

// Hands out the handle of an input, made on first use.
static TRITONSERVER_Error*
input_handle(struct thost_input* in, TRITONBACKEND_Input** out)
{
  uint64_t h = thost_handle_lazy(&in->handle, THOST_KIND_INPUT, in);
  if (h == 0)
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "out of handles for input '%s'",
        in->name);
  *out = THOST_AS_HANDLE(TRITONBACKEND_Input, h);
  return NULL;
}

#define CHECK_REQUEST(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_REQUEST, "request")

TRITONSERVER_Error*
TRITONBACKEND_RequestId(TRITONBACKEND_Request* request, const char** id)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(id != NULL, "id is NULL");
  *id = r->id;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_RequestIsCancelled(
    TRITONBACKEND_Request* request, bool* is_cancelled)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(is_cancelled != NULL, "is_cancelled is NULL");
  *is_cancelled = __atomic_load_n(&r->ctx->cancelled, __ATOMIC_ACQUIRE) != 0;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_RequestCorrelationId(TRITONBACKEND_Request* request, uint64_t* id)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(id != NULL, "id is NULL");
  if (r->correlation_id_string != NULL) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "[request id: %s] correlation ID in request is a string, not an "
        "unsigned integer",
        r->id[0] ? r->id : "<id_unknown>");
  }
  *id = r->correlation_id;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_RequestCorrelationIdString(
    TRITONBACKEND_Request* request, const char** id)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(id != NULL, "id is NULL");
  if (r->correlation_id_string == NULL) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "[request id: %s] correlation ID in request is an unsigned integer, "
        "not a string",
        r->id[0] ? r->id : "<id_unknown>");
  }
  *id = r->correlation_id_string;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_RequestFlags(TRITONBACKEND_Request* request, uint32_t* flags)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(flags != NULL, "flags is NULL");
  *flags = r->flags;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_RequestParameterCount(
    TRITONBACKEND_Request* request, uint32_t* count)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(count != NULL, "count is NULL");
  *count = r->param_count;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_RequestParameter(
    TRITONBACKEND_Request* request, const uint32_t index, const char** key,
    TRITONSERVER_ParameterType* type, const void** vvalue)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(
      key != NULL && type != NULL && vvalue != NULL,
      "key, type or vvalue is NULL");
  if (index >= r->param_count) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "parameter index %u is out of range, the request has %u", index,
        r->param_count);
  }
  const struct thost_param* p = &r->params[index];
  *key = p->name;
  *type = p->type;
  *vvalue = p->value;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_RequestInputCount(TRITONBACKEND_Request* request, uint32_t* count)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(count != NULL, "count is NULL");
  *count = r->input_count;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_RequestInputName(
    TRITONBACKEND_Request* request, const uint32_t index,
    const char** input_name)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(input_name != NULL, "input_name is NULL");
  if (index >= r->input_count) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "input index %u is out of range, the request has %u inputs", index,
        r->input_count);
  }
  *input_name = r->inputs[index].name;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_RequestInput(
    TRITONBACKEND_Request* request, const char* name,
    TRITONBACKEND_Input** input)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(name != NULL && input != NULL, "name or input is NULL");
  for (uint32_t i = 0; i < r->input_count; i++) {
    if (strcmp(r->inputs[i].name, name) == 0) {
      return input_handle(&r->inputs[i], input);
    }
  }
  return thost_errorf(
      TRITONSERVER_ERROR_INVALID_ARG,
      "[request id: %s] input '%s' does not exist in the request",
      r->id[0] ? r->id : "<id_unknown>", name);
}

TRITONSERVER_Error*
TRITONBACKEND_RequestInputByIndex(
    TRITONBACKEND_Request* request, const uint32_t index,
    TRITONBACKEND_Input** input)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(input != NULL, "input is NULL");
  if (index >= r->input_count) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "input index %u is out of range, the request has %u inputs", index,
        r->input_count);
  }
  return input_handle(&r->inputs[index], input);
}

TRITONSERVER_Error*
TRITONBACKEND_RequestOutputCount(
    TRITONBACKEND_Request* request, uint32_t* count)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(count != NULL, "count is NULL");
  *count = r->output_count;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_RequestOutputName(
    TRITONBACKEND_Request* request, const uint32_t index,
    const char** output_name)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(output_name != NULL, "output_name is NULL");
  if (index >= r->output_count) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "output index %u is out of range, the request asks for %u outputs",
        index, r->output_count);
  }
  *output_name = r->output_names[index];
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_RequestOutputBufferProperties(
    TRITONBACKEND_Request* request, const char* name, size_t* byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(
      memory_type != NULL && memory_type_id != NULL,
      "memory_type or memory_type_id is NULL");
  if (r->ctx->caller != NULL)  // a backend's request: its allocator answers
    return thost_caller_query(
        r->ctx, name, byte_size, memory_type, memory_type_id);
  (void)name;  // may be NULL (not yet known), as the header allows
  (void)
      byte_size;  // the size hint does not change where outputs go: host memory
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_RequestTrace(
    TRITONBACKEND_Request* request, TRITONSERVER_InferenceTrace** trace)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  THOST_CHECK_ARG(trace != NULL, "trace is NULL");
  *trace = NULL;  // when the request is not traced
  if (r->trace == NULL)
    return NULL;
  uint64_t h = thost_handle_lazy(&r->trace->handle, THOST_KIND_TRACE, r->trace);
  if (h == 0)
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: out of handles", __func__);
  *trace = THOST_AS_HANDLE(TRITONSERVER_InferenceTrace, h);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_RequestRelease(
    TRITONBACKEND_Request* request, uint32_t release_flags)
{
  struct thost_request* r;
  CHECK_REQUEST(r, request);
  // One crossing: the statistics reported for the request so far go with
  // the release, and when the block holds the context's last reference,
  // Go ends the context too (*ended), taking over the block's reference.
  struct thost_reqctx* ctx = r->ctx;
  thost_enter_host(ctx->host);
  struct thost_rstat* stats = thost_reqctx_take_stats(ctx);
  bool ended = false;
  TRITONSERVER_Error* err = thostRequestRelease(
      r, release_flags, stats, thost_batch_waiting(), &ended);
  thost_rstats_free(stats);
  if (err != NULL)
    return err;  // the backend keeps the request
  if (!ended) {
    thost_request_free(r);
    return NULL;
  }
  thost_request_free_block(r);
  thost_reqctx_destroy(ctx);
  return NULL;
}

// ---- Input ------------------------------------------------------------------

#define CHECK_INPUT(var, h) THOST_OBJECT(var, h, THOST_KIND_INPUT, "input")

TRITONSERVER_Error*
TRITONBACKEND_InputProperties(
    TRITONBACKEND_Input* input, const char** name,
    TRITONSERVER_DataType* datatype, const int64_t** shape,
    uint32_t* dims_count, uint64_t* byte_size, uint32_t* buffer_count)
{
  struct thost_input* in;
  CHECK_INPUT(in, input);
  if (name != NULL)
    *name = in->name;
  if (datatype != NULL)
    *datatype = in->datatype;
  if (shape != NULL)
    *shape = in->shape;
  if (dims_count != NULL)
    *dims_count = in->dims_count;
  if (byte_size != NULL)
    *byte_size = in->byte_size;
  if (buffer_count != NULL)
    *buffer_count = in->buffer_count;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_InputPropertiesForHostPolicy(
    TRITONBACKEND_Input* input, const char* host_policy_name, const char** name,
    TRITONSERVER_DataType* datatype, const int64_t** shape,
    uint32_t* dims_count, uint64_t* byte_size, uint32_t* buffer_count)
{
  (void)host_policy_name;  // inputs are the same for every host policy
  return TRITONBACKEND_InputProperties(
      input, name, datatype, shape, dims_count, byte_size, buffer_count);
}

TRITONSERVER_Error*
TRITONBACKEND_InputBuffer(
    TRITONBACKEND_Input* input, const uint32_t index, const void** buffer,
    uint64_t* buffer_byte_size, TRITONSERVER_MemoryType* memory_type,
    int64_t* memory_type_id)
{
  struct thost_input* in;
  CHECK_INPUT(in, input);
  THOST_CHECK_ARG(
      buffer != NULL && buffer_byte_size != NULL && memory_type != NULL &&
          memory_type_id != NULL,
      "an output argument is NULL");
  if (index >= in->buffer_count) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "buffer index %u is out of range, input '%s' has %u buffers", index,
        in->name, in->buffer_count);
  }
  const struct thost_buffer* b = &in->buffers[index];
  *buffer = b->base;
  *buffer_byte_size = b->attrs.byte_size;
  *memory_type = b->attrs.memory_type;
  *memory_type_id = b->attrs.memory_type_id;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_InputBufferForHostPolicy(
    TRITONBACKEND_Input* input, const char* host_policy_name,
    const uint32_t index, const void** buffer, uint64_t* buffer_byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id)
{
  // As Triton: a NULL policy means the input's buffers; a named one means
  // the copies made for that policy, or the input's buffers when it has none
  // (an input from the wire never has: it is host memory as received). On
  // error the buffer is NULL and its size 0.
  (void)host_policy_name;
  TRITONSERVER_Error* err = TRITONBACKEND_InputBuffer(
      input, index, buffer, buffer_byte_size, memory_type, memory_type_id);
  if (err != NULL && buffer != NULL && buffer_byte_size != NULL) {
    *buffer = NULL;
    *buffer_byte_size = 0;
  }
  return err;
}

TRITONSERVER_Error*
TRITONBACKEND_InputBufferAttributes(
    TRITONBACKEND_Input* input, const uint32_t index, const void** buffer,
    TRITONSERVER_BufferAttributes** buffer_attributes)
{
  struct thost_input* in;
  CHECK_INPUT(in, input);
  THOST_CHECK_ARG(
      buffer != NULL && buffer_attributes != NULL,
      "buffer or buffer_attributes is NULL");
  if (index >= in->buffer_count) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "buffer index %u is out of range, input '%s' has %u buffers", index,
        in->name, in->buffer_count);
  }
  struct thost_buffer* b = &in->buffers[index];
  uint64_t h = thost_handle_lazy(
      &b->attrs.handle, THOST_KIND_BUFFER_ATTRIBUTES, &b->attrs);
  if (h == 0)
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: out of handles", __func__);
  *buffer = b->base;
  *buffer_attributes = THOST_AS_HANDLE(TRITONSERVER_BufferAttributes, h);
  return NULL;
}
