// TRITONSERVER_BufferAttributes* functions: where a buffer lives. Made by a
// backend (New/Delete), or owned by an input buffer, an output or a state of
// the server, which the backend may read and set but not delete. Pure C,
// thread-safe for distinct objects.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "objects.h"

#define ATTRIBUTES(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_BUFFER_ATTRIBUTES, "buffer_attributes")

TRITONSERVER_Error*
TRITONSERVER_BufferAttributesNew(
    TRITONSERVER_BufferAttributes** buffer_attributes)
{
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  struct thost_buffer_attributes* a = calloc(1, sizeof(*a));
  if (a == NULL)
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  a->handle = thost_handle_new(THOST_KIND_BUFFER_ATTRIBUTES, a);
  if (a->handle == 0) {
    free(a);
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: out of handles", __func__);
  }
  *buffer_attributes =
      THOST_AS_HANDLE(TRITONSERVER_BufferAttributes, a->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_BufferAttributesDelete(
    TRITONSERVER_BufferAttributes* buffer_attributes)
{
  if (buffer_attributes == NULL)
    return NULL;  // as deleting a null pointer in Triton
  struct thost_buffer_attributes* a;
  ATTRIBUTES(a, buffer_attributes);
  if (a->server_owned) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: these attributes belong to an input, output or state of the "
        "server",
        __func__);
  }
  thost_handle_free(a->handle);
  free(a);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_BufferAttributesSetMemoryTypeId(
    TRITONSERVER_BufferAttributes* buffer_attributes, int64_t memory_type_id)
{
  struct thost_buffer_attributes* a;
  ATTRIBUTES(a, buffer_attributes);
  a->memory_type_id = memory_type_id;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_BufferAttributesSetMemoryType(
    TRITONSERVER_BufferAttributes* buffer_attributes,
    TRITONSERVER_MemoryType memory_type)
{
  struct thost_buffer_attributes* a;
  ATTRIBUTES(a, buffer_attributes);
  a->memory_type = memory_type;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_BufferAttributesSetCudaIpcHandle(
    TRITONSERVER_BufferAttributes* buffer_attributes, void* cuda_ipc_handle)
{
  struct thost_buffer_attributes* a;
  ATTRIBUTES(a, buffer_attributes);
  a->cuda_ipc_handle = cuda_ipc_handle;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_BufferAttributesSetByteSize(
    TRITONSERVER_BufferAttributes* buffer_attributes, size_t byte_size)
{
  struct thost_buffer_attributes* a;
  ATTRIBUTES(a, buffer_attributes);
  a->byte_size = byte_size;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_BufferAttributesMemoryTypeId(
    TRITONSERVER_BufferAttributes* buffer_attributes, int64_t* memory_type_id)
{
  struct thost_buffer_attributes* a;
  ATTRIBUTES(a, buffer_attributes);
  THOST_CHECK_ARG(memory_type_id != NULL, "memory_type_id is NULL");
  *memory_type_id = a->memory_type_id;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_BufferAttributesMemoryType(
    TRITONSERVER_BufferAttributes* buffer_attributes,
    TRITONSERVER_MemoryType* memory_type)
{
  struct thost_buffer_attributes* a;
  ATTRIBUTES(a, buffer_attributes);
  THOST_CHECK_ARG(memory_type != NULL, "memory_type is NULL");
  *memory_type = a->memory_type;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_BufferAttributesCudaIpcHandle(
    TRITONSERVER_BufferAttributes* buffer_attributes, void** cuda_ipc_handle)
{
  struct thost_buffer_attributes* a;
  ATTRIBUTES(a, buffer_attributes);
  THOST_CHECK_ARG(cuda_ipc_handle != NULL, "cuda_ipc_handle is NULL");
  *cuda_ipc_handle = a->cuda_ipc_handle;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_BufferAttributesByteSize(
    TRITONSERVER_BufferAttributes* buffer_attributes, size_t* byte_size)
{
  struct thost_buffer_attributes* a;
  ATTRIBUTES(a, buffer_attributes);
  THOST_CHECK_ARG(byte_size != NULL, "byte_size is NULL");
  *byte_size = a->byte_size;
  return NULL;
}
