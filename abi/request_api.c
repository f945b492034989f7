// TRITONBACKEND_* functions on requests and inputs. A request is one C block
// that Go filled before Execute (request.go); every getter reads it without
// crossing into Go. RequestRelease hands the request back to Go and frees the
// block. Valid from any thread between Execute and RequestRelease.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "handles.h"

// ---- Request context ----------------------------------------------------------

struct thost_reqctx* thost_reqctx_new(uint64_t key) {
  struct thost_reqctx* ctx = calloc(1, sizeof(*ctx));
  if (ctx == NULL) return NULL;
  ctx->key = key;
  ctx->refs = 1;
  pthread_mutex_init(&ctx->mu, NULL);
  thost_count(THOST_COUNT_CONTEXT, 1);
  return ctx;
}

// Moves the buffered statistics reports into out (THOST_PENDING_RSTATS
// entries) and returns how many there were.
uint32_t thost_reqctx_take_stats(struct thost_reqctx* ctx, struct thost_rstat* out) {
  pthread_mutex_lock(&ctx->mu);
  uint32_t n = ctx->npending;
  if (n > 0) memcpy(out, ctx->pending, n * sizeof(*out));
  ctx->npending = 0;
  pthread_mutex_unlock(&ctx->mu);
  return n;
}

void thost_reqctx_ref(struct thost_reqctx* ctx) { __atomic_add_fetch(&ctx->refs, 1, __ATOMIC_RELAXED); }

void thost_reqctx_unref(struct thost_reqctx* ctx) {
  if (__atomic_sub_fetch(&ctx->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  // Last reference: nobody else can touch pending any more.
  thostRequestContextDone(ctx->key, ctx->pending, ctx->npending);
  pthread_mutex_destroy(&ctx->mu);
  thost_count(THOST_COUNT_CONTEXT, -1);
  free(ctx);
}

// Handles the backend gives back (request blocks here; factories, responses
// and response statistics in response_api.c) are marked dead and wait in this
// ring for THOST_QUARANTINE more frees before their memory is returned. A
// backend that releases or deletes a handle twice, or uses it right after,
// then reads the dead magic number and gets INVALID_ARG, instead of reading
// freed or reused memory. Lock-free: every pointer put in the ring is taken
// out, and freed, by exactly one later exchange.
#define THOST_QUARANTINE 256
static void* thost_quarantine[THOST_QUARANTINE];
static uint32_t thost_quarantine_next;

void thost_quarantine_free(void* dead) {
  uint32_t slot = __atomic_fetch_add(&thost_quarantine_next, 1, __ATOMIC_RELAXED) % THOST_QUARANTINE;
  free(__atomic_exchange_n(&thost_quarantine[slot], dead, __ATOMIC_ACQ_REL));
}

void thost_request_free(TRITONBACKEND_Request* req) {
  struct thost_reqctx* ctx = req->ctx;
  thost_request_free_states(req);
  req->magic = THOST_MAGIC_DEAD;
  thost_quarantine_free(req);
  thost_count(THOST_COUNT_REQUEST, -1);
  thost_reqctx_unref(ctx);
}

// ---- Request ------------------------------------------------------------------

#define CHECK_REQUEST(r) THOST_CHECK_HANDLE(r, THOST_MAGIC_REQUEST, "request")

TRITONSERVER_Error* TRITONBACKEND_RequestId(TRITONBACKEND_Request* request, const char** id) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(id != NULL, "id is NULL");
  *id = request->id;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_RequestIsCancelled(TRITONBACKEND_Request* request, bool* is_cancelled) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(is_cancelled != NULL, "is_cancelled is NULL");
  *is_cancelled = __atomic_load_n(&request->ctx->cancelled, __ATOMIC_ACQUIRE) != 0;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_RequestCorrelationId(TRITONBACKEND_Request* request, uint64_t* id) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(id != NULL, "id is NULL");
  if (request->correlation_id_string != NULL) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG,
                        "[request id: %s] correlation ID in request is a string, not an unsigned integer",
                        request->id[0] ? request->id : "<id_unknown>");
  }
  *id = request->correlation_id;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_RequestCorrelationIdString(TRITONBACKEND_Request* request, const char** id) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(id != NULL, "id is NULL");
  if (request->correlation_id_string == NULL) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG,
                        "[request id: %s] correlation ID in request is an unsigned integer, not a string",
                        request->id[0] ? request->id : "<id_unknown>");
  }
  *id = request->correlation_id_string;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_RequestFlags(TRITONBACKEND_Request* request, uint32_t* flags) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(flags != NULL, "flags is NULL");
  *flags = request->flags;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_RequestParameterCount(TRITONBACKEND_Request* request, uint32_t* count) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(count != NULL, "count is NULL");
  *count = request->param_count;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_RequestParameter(
    TRITONBACKEND_Request* request, const uint32_t index, const char** key, TRITONSERVER_ParameterType* type,
    const void** vvalue) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(key != NULL && type != NULL && vvalue != NULL, "key, type or vvalue is NULL");
  if (index >= request->param_count) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG, "parameter index %u is out of range, the request has %u",
                        index, request->param_count);
  }
  const struct thost_param* p = &request->params[index];
  *key = p->name;
  *type = p->type;
  *vvalue = p->value;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_RequestInputCount(TRITONBACKEND_Request* request, uint32_t* count) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(count != NULL, "count is NULL");
  *count = request->input_count;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_RequestInputName(
    TRITONBACKEND_Request* request, const uint32_t index, const char** input_name) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(input_name != NULL, "input_name is NULL");
  if (index >= request->input_count) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG, "input index %u is out of range, the request has %u inputs",
                        index, request->input_count);
  }
  *input_name = request->inputs[index].name;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_RequestInput(
    TRITONBACKEND_Request* request, const char* name, TRITONBACKEND_Input** input) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(name != NULL && input != NULL, "name or input is NULL");
  for (uint32_t i = 0; i < request->input_count; i++) {
    if (strcmp(request->inputs[i].name, name) == 0) {
      *input = &request->inputs[i];
      return NULL;
    }
  }
  return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG, "[request id: %s] input '%s' does not exist in the request",
                      request->id[0] ? request->id : "<id_unknown>", name);
}

TRITONSERVER_Error* TRITONBACKEND_RequestInputByIndex(
    TRITONBACKEND_Request* request, const uint32_t index, TRITONBACKEND_Input** input) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(input != NULL, "input is NULL");
  if (index >= request->input_count) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG, "input index %u is out of range, the request has %u inputs",
                        index, request->input_count);
  }
  *input = &request->inputs[index];
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_RequestOutputCount(TRITONBACKEND_Request* request, uint32_t* count) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(count != NULL, "count is NULL");
  *count = request->output_count;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_RequestOutputName(
    TRITONBACKEND_Request* request, const uint32_t index, const char** output_name) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(output_name != NULL, "output_name is NULL");
  if (index >= request->output_count) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG,
                        "output index %u is out of range, the request asks for %u outputs", index,
                        request->output_count);
  }
  *output_name = request->output_names[index];
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_RequestOutputBufferProperties(
    TRITONBACKEND_Request* request, const char* name, size_t* byte_size, TRITONSERVER_MemoryType* memory_type,
    int64_t* memory_type_id) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(memory_type != NULL && memory_type_id != NULL, "memory_type or memory_type_id is NULL");
  (void)name;       // may be NULL (not yet known), as the header allows
  (void)byte_size;  // the size hint does not change where outputs go: host memory
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_RequestTrace(TRITONBACKEND_Request* request, TRITONSERVER_InferenceTrace** trace) {
  CHECK_REQUEST(request);
  THOST_CHECK_ARG(trace != NULL, "trace is NULL");
  *trace = request->trace;  // NULL when the request is not traced
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_RequestRelease(TRITONBACKEND_Request* request, uint32_t release_flags) {
  CHECK_REQUEST(request);
  TRITONSERVER_Error* err = thostRequestRelease(request, release_flags);
  if (err != NULL) return err;  // the backend keeps the request
  thost_request_free(request);
  return NULL;
}

// ---- Input --------------------------------------------------------------------

#define CHECK_INPUT(in) THOST_CHECK_HANDLE(in, THOST_MAGIC_INPUT, "input")

TRITONSERVER_Error* TRITONBACKEND_InputProperties(
    TRITONBACKEND_Input* input, const char** name, TRITONSERVER_DataType* datatype, const int64_t** shape,
    uint32_t* dims_count, uint64_t* byte_size, uint32_t* buffer_count) {
  CHECK_INPUT(input);
  if (name != NULL) *name = input->name;
  if (datatype != NULL) *datatype = input->datatype;
  if (shape != NULL) *shape = input->shape;
  if (dims_count != NULL) *dims_count = input->dims_count;
  if (byte_size != NULL) *byte_size = input->byte_size;
  if (buffer_count != NULL) *buffer_count = input->buffer_count;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_InputPropertiesForHostPolicy(
    TRITONBACKEND_Input* input, const char* host_policy_name, const char** name, TRITONSERVER_DataType* datatype,
    const int64_t** shape, uint32_t* dims_count, uint64_t* byte_size, uint32_t* buffer_count) {
  (void)host_policy_name;  // inputs are the same for every host policy
  return TRITONBACKEND_InputProperties(input, name, datatype, shape, dims_count, byte_size, buffer_count);
}

TRITONSERVER_Error* TRITONBACKEND_InputBuffer(
    TRITONBACKEND_Input* input, const uint32_t index, const void** buffer, uint64_t* buffer_byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id) {
  CHECK_INPUT(input);
  THOST_CHECK_ARG(buffer != NULL && buffer_byte_size != NULL && memory_type != NULL && memory_type_id != NULL,
                  "an output argument is NULL");
  if (index >= input->buffer_count) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG,
                        "buffer index %u is out of range, input '%s' has %u buffers", index, input->name,
                        input->buffer_count);
  }
  const struct thost_buffer* b = &input->buffers[index];
  *buffer = b->base;
  *buffer_byte_size = b->attrs.byte_size;
  *memory_type = b->attrs.memory_type;
  *memory_type_id = b->attrs.memory_type_id;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_InputBufferForHostPolicy(
    TRITONBACKEND_Input* input, const char* host_policy_name, const uint32_t index, const void** buffer,
    uint64_t* buffer_byte_size, TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id) {
  (void)host_policy_name;
  return TRITONBACKEND_InputBuffer(input, index, buffer, buffer_byte_size, memory_type, memory_type_id);
}

TRITONSERVER_Error* TRITONBACKEND_InputBufferAttributes(
    TRITONBACKEND_Input* input, const uint32_t index, const void** buffer,
    TRITONSERVER_BufferAttributes** buffer_attributes) {
  CHECK_INPUT(input);
  THOST_CHECK_ARG(buffer != NULL && buffer_attributes != NULL, "buffer or buffer_attributes is NULL");
  if (index >= input->buffer_count) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG,
                        "buffer index %u is out of range, input '%s' has %u buffers", index, input->name,
                        input->buffer_count);
  }
  *buffer = input->buffers[index].base;
  *buffer_attributes = &input->buffers[index].attrs;
  return NULL;
}
