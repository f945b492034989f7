/*
 * inprocess_callbacks.c: callbacks of the in-process server API written
 * with the parameter lists Triton's own callers use (its backend examples
 * and Python backend), assigned to the header's function pointer types and
 * passed to the functions that take them. Compiled as C11 and as C++17 by
 * headers_test.go: a type that differs from Triton's is a compile error
 * (C++ has no implicit conversion between function pointer types).
 */
#include "triton/core/tritonserver.h"

#ifdef __cplusplus
#define CB_NULL nullptr
extern "C" {
#else
#define CB_NULL NULL
#include <stddef.h>
#endif

static TRITONSERVER_Error*
alloc_fn(
    TRITONSERVER_ResponseAllocator* allocator, const char* tensor_name,
    size_t byte_size, TRITONSERVER_MemoryType preferred_memory_type,
    int64_t preferred_memory_type_id, void* userp, void** buffer,
    void** buffer_userp, TRITONSERVER_MemoryType* actual_memory_type,
    int64_t* actual_memory_type_id)
{
  (void)allocator, (void)tensor_name, (void)byte_size, (void)userp;
  *buffer = CB_NULL;
  *buffer_userp = CB_NULL;
  *actual_memory_type = preferred_memory_type;
  *actual_memory_type_id = preferred_memory_type_id;
  return CB_NULL;
}

static TRITONSERVER_Error*
release_fn(
    TRITONSERVER_ResponseAllocator* allocator, void* buffer, void* buffer_userp,
    size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id)
{
  (void)allocator, (void)buffer, (void)buffer_userp, (void)byte_size;
  (void)memory_type, (void)memory_type_id;
  return CB_NULL;
}

static TRITONSERVER_Error*
start_fn(TRITONSERVER_ResponseAllocator* allocator, void* userp)
{
  (void)allocator, (void)userp;
  return CB_NULL;
}

static TRITONSERVER_Error*
query_fn(
    TRITONSERVER_ResponseAllocator* allocator, void* userp,
    const char* tensor_name, size_t* byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id)
{
  (void)allocator, (void)userp, (void)tensor_name, (void)byte_size;
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  return CB_NULL;
}

static TRITONSERVER_Error*
attributes_fn(
    TRITONSERVER_ResponseAllocator* allocator, const char* tensor_name,
    TRITONSERVER_BufferAttributes* buffer_attributes, void* userp,
    void* buffer_userp)
{
  (void)allocator, (void)tensor_name, (void)userp, (void)buffer_userp;
  return TRITONSERVER_BufferAttributesSetCudaIpcHandle(
      buffer_attributes, CB_NULL);
}

static void
request_release(
    TRITONSERVER_InferenceRequest* request, const uint32_t flags, void* userp)
{
  (void)userp;
  if ((flags & TRITONSERVER_REQUEST_RELEASE_ALL) != 0) {
    TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceRequestDelete(request));
  }
}

static void
response_complete(
    TRITONSERVER_InferenceResponse* response, const uint32_t flags, void* userp)
{
  (void)flags, (void)userp;
  if (response != CB_NULL) {
    TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceResponseDelete(response));
  }
}

/* Wires every callback up the way a backend does; never called. */
TRITONSERVER_Error*
wire_callbacks(TRITONSERVER_Server* server)
{
  TRITONSERVER_ResponseAllocatorAllocFn_t a = alloc_fn;
  TRITONSERVER_ResponseAllocatorReleaseFn_t r = release_fn;
  TRITONSERVER_ResponseAllocatorStartFn_t s = start_fn;
  TRITONSERVER_ResponseAllocatorQueryFn_t q = query_fn;
  TRITONSERVER_ResponseAllocatorBufferAttributesFn_t b = attributes_fn;
  TRITONSERVER_InferenceRequestReleaseFn_t rel = request_release;
  TRITONSERVER_InferenceResponseCompleteFn_t done = response_complete;

  TRITONSERVER_ResponseAllocator* allocator = CB_NULL;
  TRITONSERVER_Error* err =
      TRITONSERVER_ResponseAllocatorNew(&allocator, a, r, s);
  if (err == CB_NULL) {
    err = TRITONSERVER_ResponseAllocatorSetQueryFunction(allocator, q);
  }
  if (err == CB_NULL) {
    err =
        TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction(allocator, b);
  }
  TRITONSERVER_InferenceRequest* request = CB_NULL;
  if (err == CB_NULL) {
    err = TRITONSERVER_InferenceRequestNew(&request, server, "model", -1);
  }
  if (err == CB_NULL) {
    err =
        TRITONSERVER_InferenceRequestSetReleaseCallback(request, rel, CB_NULL);
  }
  if (err == CB_NULL) {
    err = TRITONSERVER_InferenceRequestSetResponseCallback(
        request, allocator, CB_NULL, done, CB_NULL);
  }
  if (err == CB_NULL) {
    err = TRITONSERVER_ServerInferAsync(server, request, CB_NULL);
  }
  return err;
}

#ifdef __cplusplus
}
#endif
