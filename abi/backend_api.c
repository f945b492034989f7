// TRITONBACKEND_* functions on backends, backend attributes and the memory
// manager (models and instances are in model_api.c). Pure C: getters and
// setters read and write the objects the Go side created (library.go).
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "objects.h"

#define BACKEND(var, h) THOST_OBJECT(var, h, THOST_KIND_BACKEND, "backend")

// ---- Backend --------------------------------------------------------------

TRITONSERVER_Error*
TRITONBACKEND_BackendName(TRITONBACKEND_Backend* backend, const char** name)
{
  struct thost_backend* b;
  BACKEND(b, backend);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  *name = b->name;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_BackendConfig(
    TRITONBACKEND_Backend* backend, TRITONSERVER_Message** backend_config)
{
  struct thost_backend* b;
  BACKEND(b, backend);
  THOST_CHECK_ARG(backend_config != NULL, "backend_config is NULL");
  *backend_config = THOST_AS_HANDLE(TRITONSERVER_Message, b->config->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_BackendExecutionPolicy(
    TRITONBACKEND_Backend* backend, TRITONBACKEND_ExecutionPolicy* policy)
{
  struct thost_backend* b;
  BACKEND(b, backend);
  THOST_CHECK_ARG(policy != NULL, "policy is NULL");
  *policy = __atomic_load_n(&b->policy, __ATOMIC_ACQUIRE);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_BackendSetExecutionPolicy(
    TRITONBACKEND_Backend* backend, TRITONBACKEND_ExecutionPolicy policy)
{
  struct thost_backend* b;
  BACKEND(b, backend);
  THOST_CHECK_ARG(
      policy == TRITONBACKEND_EXECUTION_BLOCKING ||
          policy == TRITONBACKEND_EXECUTION_DEVICE_BLOCKING,
      "unknown execution policy");
  __atomic_store_n(&b->policy, policy, __ATOMIC_RELEASE);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_BackendArtifacts(
    TRITONBACKEND_Backend* backend, TRITONBACKEND_ArtifactType* artifact_type,
    const char** location)
{
  struct thost_backend* b;
  BACKEND(b, backend);
  THOST_CHECK_ARG(
      artifact_type != NULL && location != NULL,
      "artifact_type or location is NULL");
  *artifact_type = TRITONBACKEND_ARTIFACT_FILESYSTEM;
  *location = b->artifacts;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_BackendMemoryManager(
    TRITONBACKEND_Backend* backend, TRITONBACKEND_MemoryManager** manager)
{
  struct thost_backend* b;
  BACKEND(b, backend);
  THOST_CHECK_ARG(manager != NULL, "manager is NULL");
  *manager = THOST_AS_HANDLE(TRITONBACKEND_MemoryManager, b->memory_manager);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_BackendState(TRITONBACKEND_Backend* backend, void** state)
{
  struct thost_backend* b;
  BACKEND(b, backend);
  THOST_CHECK_ARG(state != NULL, "state is NULL");
  *state = __atomic_load_n(&b->state, __ATOMIC_ACQUIRE);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_BackendSetState(TRITONBACKEND_Backend* backend, void* state)
{
  struct thost_backend* b;
  BACKEND(b, backend);
  __atomic_store_n(&b->state, state, __ATOMIC_RELEASE);
  return NULL;
}

// ---- Backend attributes -----------------------------------------------------

TRITONSERVER_Error*
TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
    TRITONBACKEND_BackendAttribute* backend_attributes,
    const TRITONSERVER_InstanceGroupKind kind, const uint64_t count,
    const uint64_t* device_ids, const uint64_t id_count)
{
  struct thost_backend_attributes* a;
  THOST_OBJECT(
      a, backend_attributes, THOST_KIND_BACKEND_ATTRIBUTE,
      "backend attributes");
  THOST_CHECK_ARG(device_ids != NULL || id_count == 0, "device_ids is NULL");
  THOST_CHECK_ARG(
      kind >= TRITONSERVER_INSTANCEGROUPKIND_AUTO &&
          kind <= TRITONSERVER_INSTANCEGROUPKIND_MODEL,
      "unknown instance group kind");
  const size_t cap = sizeof(a->groups) / sizeof(a->groups[0]);
  if (a->group_count >= cap) {
    return thost_errorf(
        TRITONSERVER_ERROR_UNSUPPORTED,
        "at most %zu preferred instance groups are supported", cap);
  }
  struct thost_preferred_group* g = &a->groups[a->group_count];
  g->device_ids = NULL;
  if (id_count > 0) {
    g->device_ids = malloc(id_count * sizeof(uint64_t));
    if (g->device_ids == NULL)
      return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    memcpy(g->device_ids, device_ids, id_count * sizeof(uint64_t));
  }
  g->kind = kind;
  g->count = count;
  g->device_count = id_count;
  a->group_count++;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading(
    TRITONBACKEND_BackendAttribute* backend_attributes, bool enabled)
{
  struct thost_backend_attributes* a;
  THOST_OBJECT(
      a, backend_attributes, THOST_KIND_BACKEND_ATTRIBUTE,
      "backend attributes");
  a->parallel_instance_loading = enabled;
  return NULL;
}

// ---- Memory manager ---------------------------------------------------------
// CPU memory is malloc'd. GPU and pinned memory come from the server's
// Devices (Go, exports_device.go) when it has GPUs: the per-device pools and
// the pinned pool, refused past their size with Triton's errors. Without
// GPUs, GPU memory is UNAVAILABLE and pinned memory is ordinary host memory.

static bool
has_devices(const struct thost_backend* b)
{
  return __atomic_load_n(&b->host->has_devices, __ATOMIC_ACQUIRE) != 0;
}

TRITONSERVER_Error*
TRITONBACKEND_MemoryManagerAllocate(
    TRITONBACKEND_MemoryManager* manager, void** buffer,
    const TRITONSERVER_MemoryType memory_type, const int64_t memory_type_id,
    const uint64_t byte_size)
{
  struct thost_backend* b;
  THOST_OBJECT(b, manager, THOST_KIND_MEMORY_MANAGER, "memory manager");
  THOST_CHECK_ARG(buffer != NULL, "buffer is NULL");
  switch (memory_type) {
    case TRITONSERVER_MEMORY_CPU:
    case TRITONSERVER_MEMORY_CPU_PINNED:
      if (memory_type_id != 0) {
        return thost_errorf(
            TRITONSERVER_ERROR_INVALID_ARG,
            "TRITONBACKEND_MemoryManagerAllocate: %s memory has only id 0, not "
            "%lld",
            TRITONSERVER_MemoryTypeString(memory_type),
            (long long)memory_type_id);
      }
      if (memory_type == TRITONSERVER_MEMORY_CPU_PINNED && has_devices(b)) {
        *buffer = NULL;
        return thostDeviceAlloc(
            b->host, memory_type, memory_type_id, byte_size, buffer);
      }
      if (posix_memalign(buffer, 64, byte_size == 0 ? 1 : byte_size) != 0) {
        *buffer = NULL;
        return thost_errorf(
            TRITONSERVER_ERROR_UNAVAILABLE,
            "TRITONBACKEND_MemoryManagerAllocate: cannot allocate %llu bytes "
            "of %s memory",
            (unsigned long long)byte_size,
            TRITONSERVER_MemoryTypeString(memory_type));
      }
      return NULL;
    case TRITONSERVER_MEMORY_GPU:
      if (has_devices(b)) {
        *buffer = NULL;
        return thostDeviceAlloc(
            b->host, memory_type, memory_type_id, byte_size, buffer);
      }
      return thost_errorf(
          TRITONSERVER_ERROR_UNAVAILABLE,
          "TRITONBACKEND_MemoryManagerAllocate: GPU memory is not available on "
          "this server");
  }
  return thost_errorf(
      TRITONSERVER_ERROR_INVALID_ARG,
      "TRITONBACKEND_MemoryManagerAllocate: unknown memory type %d",
      (int)memory_type);
}

TRITONSERVER_Error*
TRITONBACKEND_MemoryManagerFree(
    TRITONBACKEND_MemoryManager* manager, void* buffer,
    const TRITONSERVER_MemoryType memory_type, const int64_t memory_type_id)
{
  struct thost_backend* b;
  THOST_OBJECT(b, manager, THOST_KIND_MEMORY_MANAGER, "memory manager");
  switch (memory_type) {
    case TRITONSERVER_MEMORY_CPU:
    case TRITONSERVER_MEMORY_CPU_PINNED:
      THOST_CHECK_ARG(memory_type_id == 0, "CPU memory has only id 0");
      if (memory_type == TRITONSERVER_MEMORY_CPU_PINNED && has_devices(b)) {
        return buffer == NULL
                   ? NULL
                   : thostDeviceFree(
                         b->host, memory_type, memory_type_id, buffer);
      }
      free(buffer);
      return NULL;
    case TRITONSERVER_MEMORY_GPU:
      if (has_devices(b)) {
        return buffer == NULL
                   ? NULL
                   : thostDeviceFree(
                         b->host, memory_type, memory_type_id, buffer);
      }
      return thost_errorf(
          TRITONSERVER_ERROR_UNAVAILABLE,
          "TRITONBACKEND_MemoryManagerFree: GPU memory is not available on "
          "this server");
  }
  return thost_errorf(
      TRITONSERVER_ERROR_INVALID_ARG,
      "TRITONBACKEND_MemoryManagerFree: unknown memory type %d",
      (int)memory_type);
}
