// TRITONSERVER_ResponseAllocator* functions, and the hooks through which the
// backend API uses a submitter's allocator for the requests a backend
// submitted (TRITONSERVER_ServerInferAsync). Pure C.
//
// Where the caller's functions run, as in Triton: start_fn in
// TRITONBACKEND_ResponseNew/NewFromFactory, alloc_fn and
// buffer_attributes_fn in TRITONBACKEND_OutputBuffer, query_fn in
// TRITONBACKEND_RequestOutputBufferProperties, all on the serving backend's
// thread; release_fn on whichever thread lets go of the buffer (deleting the
// response it is in, or dropping an output that never reaches the caller).
// No lock of the server is held around any of them.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "inprocess.h"

#define ALLOCATOR(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_ALLOCATOR, "response allocator")

TRITONSERVER_Error*
TRITONSERVER_ResponseAllocatorNew(
    TRITONSERVER_ResponseAllocator** allocator,
    TRITONSERVER_ResponseAllocatorAllocFn_t alloc_fn,
    TRITONSERVER_ResponseAllocatorReleaseFn_t release_fn,
    TRITONSERVER_ResponseAllocatorStartFn_t start_fn)
{
  THOST_CHECK_ARG(allocator != NULL, "allocator is NULL");
  THOST_CHECK_ARG(
      alloc_fn != NULL && release_fn != NULL, "alloc_fn or release_fn is NULL");
  struct thost_allocator* a = calloc(1, sizeof(*a));
  if (a == NULL)
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", __func__);
  a->alloc_fn = alloc_fn;
  a->release_fn = release_fn;
  a->start_fn = start_fn;
  a->handle = thost_handle_new(THOST_KIND_ALLOCATOR, a);
  if (a->handle == 0) {
    free(a);
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: out of handles", __func__);
  }
  a->host = thost_ambient_host();
  thost_count(a->host, THOST_COUNT_ALLOCATOR, 1);
  *allocator = THOST_AS_HANDLE(TRITONSERVER_ResponseAllocator, a->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction(
    TRITONSERVER_ResponseAllocator* allocator,
    TRITONSERVER_ResponseAllocatorBufferAttributesFn_t buffer_attributes_fn)
{
  struct thost_allocator* a;
  ALLOCATOR(a, allocator);
  a->attributes_fn = buffer_attributes_fn;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_ResponseAllocatorSetQueryFunction(
    TRITONSERVER_ResponseAllocator* allocator,
    TRITONSERVER_ResponseAllocatorQueryFn_t query_fn)
{
  struct thost_allocator* a;
  ALLOCATOR(a, allocator);
  a->query_fn = query_fn;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_ResponseAllocatorDelete(TRITONSERVER_ResponseAllocator* allocator)
{
  if (allocator == NULL)
    return NULL;  // as deleting a null pointer in Triton
  struct thost_allocator* a;
  ALLOCATOR(a, allocator);
  thost_handle_free(a->handle);
  thost_count(a->host, THOST_COUNT_ALLOCATOR, -1);
  free(a);
  return NULL;
}

// ---- The hooks of the backend API -------------------------------------------

#define ALLOCATOR_HANDLE(c) \
  THOST_AS_HANDLE(TRITONSERVER_ResponseAllocator, (c)->allocator)

void
thost_log_caller_error(const char* what, TRITONSERVER_Error* err)
{
  if (err == NULL)
    return;
  char msg[640];
  snprintf(msg, sizeof(msg), "%s: %s", what, TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(
      TRITONSERVER_LogMessage(TRITONSERVER_LOG_ERROR, __FILE__, __LINE__, msg));
  TRITONSERVER_ErrorDelete(err);
}

void
thost_caller_start(struct thost_reqctx* ctx)
{
  const struct thost_caller_alloc* c = ctx->caller;
  if (c == NULL || c->start_fn == NULL)
    return;
  thost_log_caller_error(
      "response allocation start failed",
      c->start_fn(ALLOCATOR_HANDLE(c), c->userp));
}

TRITONSERVER_Error*
thost_caller_alloc_output(
    struct thost_output* o, uint64_t byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id,
    void** buffer)
{
  const struct thost_caller_alloc* c = o->caller;
  void* base = NULL;
  void* userp = NULL;
  TRITONSERVER_MemoryType actual = *memory_type;
  int64_t actual_id = *memory_type_id;
  TRITONSERVER_Error* err = c->alloc_fn(
      ALLOCATOR_HANDLE(c), o->name, (size_t)byte_size, *memory_type,
      *memory_type_id, c->userp, &base, &userp, &actual, &actual_id);
  if (err != NULL)
    return err;  // the backend gets the allocator's own error
  if (base == NULL && byte_size > 0) {
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL,
        "the response allocator of the request gave no buffer for the %llu "
        "bytes of output '%s'",
        (unsigned long long)byte_size, o->name);
  }
  o->buffer = base;
  o->buffer_userp = userp;
  o->has_buffer = true;
  o->caller_buffer = true;
  o->byte_size = byte_size;
  o->attrs.byte_size = byte_size;
  o->attrs.memory_type = actual;
  o->attrs.memory_type_id = actual_id;
  if (c->attributes_fn != NULL) {
    uint64_t h = thost_handle_lazy(
        &o->attrs.handle, THOST_KIND_BUFFER_ATTRIBUTES, &o->attrs);
    err = h == 0
              ? thost_errorf(
                    TRITONSERVER_ERROR_UNAVAILABLE,
                    "out of handles for the attributes of output '%s'", o->name)
              : c->attributes_fn(
                    ALLOCATOR_HANDLE(c), o->name,
                    THOST_AS_HANDLE(TRITONSERVER_BufferAttributes, h), c->userp,
                    userp);
    // Size and location are the allocation's, whatever the function set.
    o->attrs.byte_size = byte_size;
    o->attrs.memory_type = actual;
    o->attrs.memory_type_id = actual_id;
    if (err != NULL) {
      thost_caller_release_output(o);
      o->has_buffer = false;
      o->byte_size = 0;
      return err;
    }
  }
  *buffer = base;
  *memory_type = actual;
  *memory_type_id = actual_id;
  return NULL;
}

bool
thost_caller_release_output(struct thost_output* o)
{
  if (!o->caller_buffer)
    return false;
  const struct thost_caller_alloc* c = o->caller;
  thost_log_caller_error(
      "failed to release an output buffer",
      c->release_fn(
          ALLOCATOR_HANDLE(c), o->buffer, o->buffer_userp, (size_t)o->byte_size,
          o->attrs.memory_type, o->attrs.memory_type_id));
  o->caller_buffer = false;
  o->buffer = NULL;
  o->buffer_userp = NULL;
  return true;
}

TRITONSERVER_Error*
thost_caller_query(
    struct thost_reqctx* ctx, const char* name, size_t* byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id)
{
  const struct thost_caller_alloc* c = ctx->caller;
  if (c->query_fn == NULL) {
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE,
        "output properties are not available: the response allocator of "
        "the request has no query function");
  }
  return c->query_fn(
      ALLOCATOR_HANDLE(c), c->userp, name, byte_size, memory_type,
      memory_type_id);
}
