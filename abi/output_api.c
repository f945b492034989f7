// TRITONBACKEND_* functions on the outputs of a response under
// construction: adding an output, its buffer (inline when small), its
// attributes, and reading outputs back. Pure C; one response is built by one
// thread at a time.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "handles.h"

#define CHECK_RESPONSE(r) THOST_CHECK_HANDLE(r, THOST_MAGIC_RESPONSE, "response")

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
