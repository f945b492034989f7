// TRITONSERVER_BufferAttributes* functions: a plain C struct describing
// where a buffer lives. Pure C, thread-safe for distinct objects.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "handles.h"

TRITONSERVER_Error* TRITONSERVER_BufferAttributesNew(TRITONSERVER_BufferAttributes** buffer_attributes) {
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  *buffer_attributes = calloc(1, sizeof(**buffer_attributes));
  return *buffer_attributes == NULL ? thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory") : NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesDelete(TRITONSERVER_BufferAttributes* buffer_attributes) {
  free(buffer_attributes);
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetMemoryTypeId(
    TRITONSERVER_BufferAttributes* buffer_attributes, int64_t memory_type_id) {
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  buffer_attributes->memory_type_id = memory_type_id;
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetMemoryType(
    TRITONSERVER_BufferAttributes* buffer_attributes, TRITONSERVER_MemoryType memory_type) {
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  buffer_attributes->memory_type = memory_type;
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetCudaIpcHandle(
    TRITONSERVER_BufferAttributes* buffer_attributes, void* cuda_ipc_handle) {
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  buffer_attributes->cuda_ipc_handle = cuda_ipc_handle;
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetByteSize(
    TRITONSERVER_BufferAttributes* buffer_attributes, size_t byte_size) {
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  buffer_attributes->byte_size = byte_size;
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesMemoryTypeId(
    TRITONSERVER_BufferAttributes* buffer_attributes, int64_t* memory_type_id) {
  THOST_CHECK_ARG(buffer_attributes != NULL && memory_type_id != NULL, "NULL argument");
  *memory_type_id = buffer_attributes->memory_type_id;
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesMemoryType(
    TRITONSERVER_BufferAttributes* buffer_attributes, TRITONSERVER_MemoryType* memory_type) {
  THOST_CHECK_ARG(buffer_attributes != NULL && memory_type != NULL, "NULL argument");
  *memory_type = buffer_attributes->memory_type;
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesCudaIpcHandle(
    TRITONSERVER_BufferAttributes* buffer_attributes, void** cuda_ipc_handle) {
  THOST_CHECK_ARG(buffer_attributes != NULL && cuda_ipc_handle != NULL, "NULL argument");
  *cuda_ipc_handle = buffer_attributes->cuda_ipc_handle;
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesByteSize(
    TRITONSERVER_BufferAttributes* buffer_attributes, size_t* byte_size) {
  THOST_CHECK_ARG(buffer_attributes != NULL && byte_size != NULL, "NULL argument");
  *byte_size = buffer_attributes->byte_size;
  return NULL;
}
