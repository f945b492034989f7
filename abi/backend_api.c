// TRITONBACKEND_* functions on backends, backend attributes and the memory
// manager (models and instances are in model_api.c). Pure C: getters and
// setters read and write the objects the Go side created (handles.go).
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "handles.h"

// ---- Backend --------------------------------------------------------------

TRITONSERVER_Error* TRITONBACKEND_BackendName(TRITONBACKEND_Backend* backend, const char** name) {
  THOST_CHECK_HANDLE(backend, THOST_MAGIC_BACKEND, "backend");
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  *name = backend->name;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_BackendConfig(TRITONBACKEND_Backend* backend, TRITONSERVER_Message** backend_config) {
  THOST_CHECK_HANDLE(backend, THOST_MAGIC_BACKEND, "backend");
  THOST_CHECK_ARG(backend_config != NULL, "backend_config is NULL");
  *backend_config = backend->config;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_BackendExecutionPolicy(
    TRITONBACKEND_Backend* backend, TRITONBACKEND_ExecutionPolicy* policy) {
  THOST_CHECK_HANDLE(backend, THOST_MAGIC_BACKEND, "backend");
  THOST_CHECK_ARG(policy != NULL, "policy is NULL");
  *policy = backend->policy;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_BackendSetExecutionPolicy(
    TRITONBACKEND_Backend* backend, TRITONBACKEND_ExecutionPolicy policy) {
  THOST_CHECK_HANDLE(backend, THOST_MAGIC_BACKEND, "backend");
  THOST_CHECK_ARG(policy == TRITONBACKEND_EXECUTION_BLOCKING || policy == TRITONBACKEND_EXECUTION_DEVICE_BLOCKING,
                  "unknown execution policy");
  backend->policy = policy;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_BackendArtifacts(
    TRITONBACKEND_Backend* backend, TRITONBACKEND_ArtifactType* artifact_type, const char** location) {
  THOST_CHECK_HANDLE(backend, THOST_MAGIC_BACKEND, "backend");
  THOST_CHECK_ARG(artifact_type != NULL && location != NULL, "artifact_type or location is NULL");
  *artifact_type = TRITONBACKEND_ARTIFACT_FILESYSTEM;
  *location = backend->artifacts;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_BackendMemoryManager(
    TRITONBACKEND_Backend* backend, TRITONBACKEND_MemoryManager** manager) {
  THOST_CHECK_HANDLE(backend, THOST_MAGIC_BACKEND, "backend");
  THOST_CHECK_ARG(manager != NULL, "manager is NULL");
  *manager = backend->memory_manager;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_BackendState(TRITONBACKEND_Backend* backend, void** state) {
  THOST_CHECK_HANDLE(backend, THOST_MAGIC_BACKEND, "backend");
  THOST_CHECK_ARG(state != NULL, "state is NULL");
  *state = __atomic_load_n(&backend->state, __ATOMIC_ACQUIRE);
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_BackendSetState(TRITONBACKEND_Backend* backend, void* state) {
  THOST_CHECK_HANDLE(backend, THOST_MAGIC_BACKEND, "backend");
  __atomic_store_n(&backend->state, state, __ATOMIC_RELEASE);
  return NULL;
}

// ---- Backend attributes -----------------------------------------------------

TRITONSERVER_Error* TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
    TRITONBACKEND_BackendAttribute* backend_attributes, const TRITONSERVER_InstanceGroupKind kind,
    const uint64_t count, const uint64_t* device_ids, const uint64_t id_count) {
  THOST_CHECK_HANDLE(backend_attributes, THOST_MAGIC_ATTR, "backend attributes");
  THOST_CHECK_ARG(device_ids != NULL || id_count == 0, "device_ids is NULL");
  THOST_CHECK_ARG(kind >= TRITONSERVER_INSTANCEGROUPKIND_AUTO && kind <= TRITONSERVER_INSTANCEGROUPKIND_MODEL,
                  "unknown instance group kind");
  const size_t cap = sizeof(backend_attributes->groups) / sizeof(backend_attributes->groups[0]);
  if (backend_attributes->group_count >= cap) {
    return thost_errorf(TRITONSERVER_ERROR_UNSUPPORTED, "at most %zu preferred instance groups are supported", cap);
  }
  struct thost_preferred_group* g = &backend_attributes->groups[backend_attributes->group_count];
  g->device_ids = NULL;
  if (id_count > 0) {
    g->device_ids = malloc(id_count * sizeof(uint64_t));
    if (g->device_ids == NULL) return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    memcpy(g->device_ids, device_ids, id_count * sizeof(uint64_t));
  }
  g->kind = kind;
  g->count = count;
  g->device_count = id_count;
  backend_attributes->group_count++;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading(
    TRITONBACKEND_BackendAttribute* backend_attributes, bool enabled) {
  THOST_CHECK_HANDLE(backend_attributes, THOST_MAGIC_ATTR, "backend attributes");
  backend_attributes->parallel_instance_loading = enabled;
  return NULL;
}

// ---- Memory manager ---------------------------------------------------------

TRITONSERVER_Error* TRITONBACKEND_MemoryManagerAllocate(
    TRITONBACKEND_MemoryManager* manager, void** buffer, const TRITONSERVER_MemoryType memory_type,
    const int64_t memory_type_id, const uint64_t byte_size) {
  THOST_CHECK_HANDLE(manager, THOST_MAGIC_MEMMGR, "memory manager");
  THOST_CHECK_ARG(buffer != NULL, "buffer is NULL");
  switch (memory_type) {
    case TRITONSERVER_MEMORY_CPU:
    case TRITONSERVER_MEMORY_CPU_PINNED:
      if (memory_type_id != 0) {
        return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG,
                            "TRITONBACKEND_MemoryManagerAllocate: %s memory has only id 0, not %lld",
                            TRITONSERVER_MemoryTypeString(memory_type), (long long)memory_type_id);
      }
      if (posix_memalign(buffer, 64, byte_size == 0 ? 1 : byte_size) != 0) {
        *buffer = NULL;
        return thost_errorf(TRITONSERVER_ERROR_UNAVAILABLE,
                            "TRITONBACKEND_MemoryManagerAllocate: cannot allocate %llu bytes of %s memory",
                            (unsigned long long)byte_size, TRITONSERVER_MemoryTypeString(memory_type));
      }
      return NULL;
    case TRITONSERVER_MEMORY_GPU:
      return thost_errorf(TRITONSERVER_ERROR_UNAVAILABLE,
                          "TRITONBACKEND_MemoryManagerAllocate: GPU memory is not available on this server");
  }
  return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG, "TRITONBACKEND_MemoryManagerAllocate: unknown memory type %d",
                      (int)memory_type);
}

TRITONSERVER_Error* TRITONBACKEND_MemoryManagerFree(
    TRITONBACKEND_MemoryManager* manager, void* buffer, const TRITONSERVER_MemoryType memory_type,
    const int64_t memory_type_id) {
  THOST_CHECK_HANDLE(manager, THOST_MAGIC_MEMMGR, "memory manager");
  switch (memory_type) {
    case TRITONSERVER_MEMORY_CPU:
    case TRITONSERVER_MEMORY_CPU_PINNED:
      THOST_CHECK_ARG(memory_type_id == 0, "CPU memory has only id 0");
      free(buffer);
      return NULL;
    case TRITONSERVER_MEMORY_GPU:
      return thost_errorf(TRITONSERVER_ERROR_UNAVAILABLE,
                          "TRITONBACKEND_MemoryManagerFree: GPU memory is not available on this server");
  }
  return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG, "TRITONBACKEND_MemoryManagerFree: unknown memory type %d",
                      (int)memory_type);
}
