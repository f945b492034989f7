// TRITONBACKEND_* functions on the outputs of a response under
// construction: adding an output, its buffer (inline when small), its
// attributes, and reading outputs back. Pure C; one response is built by one
// thread at a time.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "inprocess.h"
#include "objects.h"

#define RESPONSE(var, h) THOST_OBJECT(var, h, THOST_KIND_RESPONSE, "response")
#define OUTPUT(var, h) THOST_OBJECT(var, h, THOST_KIND_OUTPUT, "output")

TRITONSERVER_Error*
TRITONBACKEND_ResponseOutput(
    TRITONBACKEND_Response* response, TRITONBACKEND_Output** output,
    const char* name, const TRITONSERVER_DataType datatype,
    const int64_t* shape, const uint32_t dims_count)
{
  struct thost_response* r;
  RESPONSE(r, response);
  THOST_CHECK_ARG(output != NULL && name != NULL, "output or name is NULL");
  THOST_CHECK_ARG(shape != NULL || dims_count == 0, "shape is NULL");
  THOST_CHECK_ARG(
      datatype > TRITONSERVER_TYPE_INVALID &&
          datatype <= TRITONSERVER_TYPE_BF16,
      "invalid datatype");
  for (uint32_t i = 0; i < r->output_count; i++) {
    if (strcmp(r->outputs[i]->name, name) == 0) {
      return thost_errorf(
          TRITONSERVER_ERROR_ALREADY_EXISTS,
          "output '%s' was already added to this response", name);
    }
  }
  if (r->output_count == r->output_cap) {
    uint32_t cap = r->output_cap * 2;
    struct thost_output** outs = malloc(cap * sizeof(*outs));
    if (outs == NULL)
      return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    memcpy(outs, r->outputs, r->output_count * sizeof(*outs));
    if (r->outputs != r->inline_outputs)
      free(r->outputs);
    r->outputs = outs;
    r->output_cap = cap;
  }
  size_t name_len = strlen(name);
  // The response's block holds its first outputs; an output past them, or
  // too large for its inline shape or name, is one allocation with its
  // shape and name behind it.
  struct thost_output* out;
  const bool fits =
      dims_count <= THOST_INLINE_DIMS && name_len < THOST_INLINE_NAME_BYTES;
  if (fits && r->block_outputs_used < THOST_RESPONSE_BLOCK_OUTPUTS) {
    out = &r->block_outputs[r->block_outputs_used++];
    thost_clear(out, THOST_OUTPUT_CLEARED_BYTES);
    out->in_block = true;
  } else {
    out = malloc(
        sizeof(*out) +
        (fits ? 0 : dims_count * sizeof(int64_t) + name_len + 1));
    if (out == NULL)
      return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    thost_clear(out, THOST_OUTPUT_CLEARED_BYTES);
  }
  out->attrs.server_owned = true;
  out->host = r->ctx->host;
  out->caller = r->ctx->caller;
  out->datatype = datatype;
  out->shape = fits ? out->inline_shape : (int64_t*)(out + 1);
  if (dims_count > 0)
    memcpy(out->shape, shape, dims_count * sizeof(int64_t));
  out->dims_count = dims_count;
  out->name =
      fits ? out->inline_name : (char*)((int64_t*)(out + 1) + dims_count);
  memcpy(out->name, name, name_len + 1);
  out->handle = thost_handle_new(THOST_KIND_OUTPUT, out);
  if (out->handle == 0) {
    if (out->in_block)
      r->block_outputs_used--;
    else
      free(out);
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: out of handles", __func__);
  }
  r->outputs[r->output_count++] = out;
  *output = THOST_AS_HANDLE(TRITONBACKEND_Output, out->handle);
  return NULL;
}

// device_buffer gives o a buffer of the GPU or pinned memory the backend
// prefers, from the server's Devices, and reports whether it did. Without
// GPUs, or when the pool cannot hold it, the output gets host memory
// instead, as Triton's allocators fall back; the backend sees the actual
// type. The response is copied to the host when it is sent.
static bool
device_buffer(
    struct thost_output* o, TRITONSERVER_MemoryType want, int64_t want_id,
    uint64_t byte_size)
{
  if ((want != TRITONSERVER_MEMORY_GPU &&
       want != TRITONSERVER_MEMORY_CPU_PINNED) ||
      byte_size == 0 || o->host == NULL ||
      !__atomic_load_n(&o->host->has_devices, __ATOMIC_ACQUIRE))
    return false;
  void* p = NULL;
  TRITONSERVER_Error* err =
      thostDeviceAlloc(o->host, want, want_id, byte_size, &p);
  if (err != NULL) {
    TRITONSERVER_ErrorDelete(err);
    return false;
  }
  o->buffer = p;
  o->device_buffer = true;
  o->attrs.memory_type = want;
  o->attrs.memory_type_id = want_id;
  return true;
}

TRITONSERVER_Error*
TRITONBACKEND_OutputBuffer(
    TRITONBACKEND_Output* output, void** buffer,
    const uint64_t buffer_byte_size, TRITONSERVER_MemoryType* memory_type,
    int64_t* memory_type_id)
{
  struct thost_output* o;
  OUTPUT(o, output);
  THOST_CHECK_ARG(
      buffer != NULL && memory_type != NULL && memory_type_id != NULL,
      "buffer, memory_type or memory_type_id is NULL");
  if (o->has_buffer) {
    return thost_errorf(
        TRITONSERVER_ERROR_ALREADY_EXISTS, "output '%s' already has a buffer",
        o->name);
  }
  if (o->caller != NULL)  // a backend's request: its allocator provides it
    return thost_caller_alloc_output(
        o, buffer_byte_size, memory_type, memory_type_id, buffer);
  TRITONSERVER_MemoryType want = *memory_type;
  const int64_t want_id = want == TRITONSERVER_MEMORY_GPU ? *memory_type_id : 0;
  o->attrs.memory_type = TRITONSERVER_MEMORY_CPU;
  o->attrs.memory_type_id = 0;
  if (device_buffer(o, want, want_id, buffer_byte_size)) {
    // GPU or pinned memory, as the backend prefers.
  } else if (buffer_byte_size <= THOST_INLINE_OUTPUT_BYTES) {
    o->buffer = o->inline_data;
  } else if (o->host != NULL) {
    o->buffer =
        thost_outbuf_get(&o->host->outbufs, buffer_byte_size, &o->buffer_cap);
    if (o->buffer == NULL) {
      return thost_errorf(
          TRITONSERVER_ERROR_UNAVAILABLE,
          "cannot allocate %llu bytes for output '%s'",
          (unsigned long long)buffer_byte_size, o->name);
    }
  } else {
    o->buffer = malloc(buffer_byte_size);
    if (o->buffer == NULL) {
      return thost_errorf(
          TRITONSERVER_ERROR_UNAVAILABLE,
          "cannot allocate %llu bytes for output '%s'",
          (unsigned long long)buffer_byte_size, o->name);
    }
  }
  o->has_buffer = true;
  o->byte_size = buffer_byte_size;
  o->attrs.byte_size = buffer_byte_size;
  *buffer = o->buffer;
  *memory_type = o->attrs.memory_type;
  *memory_type_id = o->attrs.memory_type_id;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_OutputBufferAttributes(
    TRITONBACKEND_Output* output,
    TRITONSERVER_BufferAttributes** buffer_attributes)
{
  struct thost_output* o;
  OUTPUT(o, output);
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  // Before TRITONBACKEND_OutputBuffer the attributes describe no buffer (CPU,
  // id 0, size 0); Triton hands them out then too.
  if (o->device_buffer && o->attrs.memory_type == TRITONSERVER_MEMORY_GPU &&
      o->attrs.cuda_ipc_handle == NULL) {
    // The CUDA IPC handle of the device allocation holding the buffer,
    // asked of the driver the first time.
    TRITONSERVER_Error* err = thostDeviceIPCHandle(
        o->host, o->attrs.memory_type_id, o->buffer, o->ipc_handle);
    if (err == NULL)
      o->attrs.cuda_ipc_handle = o->ipc_handle;
    else
      TRITONSERVER_ErrorDelete(err);
  }
  uint64_t h = thost_handle_lazy(
      &o->attrs.handle, THOST_KIND_BUFFER_ATTRIBUTES, &o->attrs);
  if (h == 0)
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: out of handles", __func__);
  *buffer_attributes = THOST_AS_HANDLE(TRITONSERVER_BufferAttributes, h);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_InferenceResponseOutputByName(
    TRITONBACKEND_Response* response, const char* name,
    TRITONSERVER_DataType* datatype, const int64_t** shape, uint64_t* dim_count)
{
  struct thost_response* r;
  RESPONSE(r, response);
  THOST_CHECK_ARG(
      name != NULL && datatype != NULL && shape != NULL && dim_count != NULL,
      "NULL argument");
  for (uint32_t i = 0; i < r->output_count; i++) {
    struct thost_output* out = r->outputs[i];
    if (strcmp(out->name, name) == 0) {
      *datatype = out->datatype;
      *shape = out->shape;
      *dim_count = out->dims_count;
      return NULL;
    }
  }
  return thost_errorf(
      TRITONSERVER_ERROR_NOT_FOUND, "the response has no output '%s'", name);
}
