// TRITONBACKEND_* functions on backends, backend attributes, the memory
// manager, models and model instances. Getters and setters read and write
// the C objects directly; only ModelSetConfig and the statistics reports
// cross into Go. Objects are created and freed by the Go side (model.go).
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

// ---- Model ------------------------------------------------------------------

TRITONSERVER_Error* TRITONBACKEND_ModelName(TRITONBACKEND_Model* model, const char** name) {
  THOST_CHECK_HANDLE(model, THOST_MAGIC_MODEL, "model");
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  *name = model->name;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelVersion(TRITONBACKEND_Model* model, uint64_t* version) {
  THOST_CHECK_HANDLE(model, THOST_MAGIC_MODEL, "model");
  THOST_CHECK_ARG(version != NULL, "version is NULL");
  *version = model->version;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelRepository(
    TRITONBACKEND_Model* model, TRITONBACKEND_ArtifactType* artifact_type, const char** location) {
  THOST_CHECK_HANDLE(model, THOST_MAGIC_MODEL, "model");
  THOST_CHECK_ARG(artifact_type != NULL && location != NULL, "artifact_type or location is NULL");
  *artifact_type = TRITONBACKEND_ARTIFACT_FILESYSTEM;
  *location = model->repository;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelConfig(
    TRITONBACKEND_Model* model, const uint32_t config_version, TRITONSERVER_Message** model_config) {
  THOST_CHECK_HANDLE(model, THOST_MAGIC_MODEL, "model");
  THOST_CHECK_ARG(model_config != NULL, "model_config is NULL");
  if (config_version != 1) {  // INVALID_ARG, as Triton's ModelConfigToJson / JsonToModelConfig
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG,
                        "model configuration version %u is not supported, only version 1 is", config_version);
  }
  pthread_mutex_lock(&model->config_mu);
  *model_config = thost_message_new(model->config_json, model->config_len, false);
  pthread_mutex_unlock(&model->config_mu);
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelAutoCompleteConfig(TRITONBACKEND_Model* model, bool* auto_complete_config) {
  THOST_CHECK_HANDLE(model, THOST_MAGIC_MODEL, "model");
  THOST_CHECK_ARG(auto_complete_config != NULL, "auto_complete_config is NULL");
  *auto_complete_config = model->auto_complete;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelSetConfig(
    TRITONBACKEND_Model* model, const uint32_t config_version, TRITONSERVER_Message* model_config) {
  THOST_CHECK_HANDLE(model, THOST_MAGIC_MODEL, "model");
  THOST_CHECK_HANDLE(model_config, THOST_MAGIC_MESSAGE, "model_config message");
  if (config_version != 1) {  // INVALID_ARG, as Triton's ModelConfigToJson / JsonToModelConfig
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG,
                        "model configuration version %u is not supported, only version 1 is", config_version);
  }
  return thostModelSetConfig(model, model_config->json, model_config->len);
}

TRITONSERVER_Error* TRITONBACKEND_ModelServer(TRITONBACKEND_Model* model, TRITONSERVER_Server** server) {
  static TRITONSERVER_Server the_server = {THOST_MAGIC_BACKEND};
  THOST_CHECK_HANDLE(model, THOST_MAGIC_MODEL, "model");
  THOST_CHECK_ARG(server != NULL, "server is NULL");
  *server = &the_server;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelBackend(TRITONBACKEND_Model* model, TRITONBACKEND_Backend** backend) {
  THOST_CHECK_HANDLE(model, THOST_MAGIC_MODEL, "model");
  THOST_CHECK_ARG(backend != NULL, "backend is NULL");
  *backend = model->backend;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelState(TRITONBACKEND_Model* model, void** state) {
  THOST_CHECK_HANDLE(model, THOST_MAGIC_MODEL, "model");
  THOST_CHECK_ARG(state != NULL, "state is NULL");
  *state = __atomic_load_n(&model->state, __ATOMIC_ACQUIRE);
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelSetState(TRITONBACKEND_Model* model, void* state) {
  THOST_CHECK_HANDLE(model, THOST_MAGIC_MODEL, "model");
  __atomic_store_n(&model->state, state, __ATOMIC_RELEASE);
  return NULL;
}

// ---- Model instance ---------------------------------------------------------

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceName(TRITONBACKEND_ModelInstance* instance, const char** name) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  *name = instance->name;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceKind(
    TRITONBACKEND_ModelInstance* instance, TRITONSERVER_InstanceGroupKind* kind) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  THOST_CHECK_ARG(kind != NULL, "kind is NULL");
  *kind = instance->kind;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceDeviceId(TRITONBACKEND_ModelInstance* instance, int32_t* device_id) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  THOST_CHECK_ARG(device_id != NULL, "device_id is NULL");
  *device_id = instance->device_id;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceHostPolicy(
    TRITONBACKEND_ModelInstance* instance, TRITONSERVER_Message** host_policy) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  THOST_CHECK_ARG(host_policy != NULL, "host_policy is NULL");
  *host_policy = instance->host_policy;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceIsPassive(TRITONBACKEND_ModelInstance* instance, bool* is_passive) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  THOST_CHECK_ARG(is_passive != NULL, "is_passive is NULL");
  *is_passive = instance->passive;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceProfileCount(TRITONBACKEND_ModelInstance* instance, uint32_t* count) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  THOST_CHECK_ARG(count != NULL, "count is NULL");
  *count = instance->profile_count;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceProfileName(
    TRITONBACKEND_ModelInstance* instance, const uint32_t index, const char** profile_name) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  THOST_CHECK_ARG(profile_name != NULL, "profile_name is NULL");
  if (index >= instance->profile_count) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG, "profile index %u is out of range, the instance has %u",
                        index, instance->profile_count);
  }
  *profile_name = instance->profiles[index];
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceSecondaryDeviceCount(
    TRITONBACKEND_ModelInstance* instance, uint32_t* count) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  THOST_CHECK_ARG(count != NULL, "count is NULL");
  *count = 0;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceSecondaryDeviceProperties(
    TRITONBACKEND_ModelInstance* instance, uint32_t index, const char** kind, int64_t* id) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  (void)kind;
  (void)id;
  return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG, "secondary device index %u is out of range, the instance has 0",
                      index);
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceModel(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Model** model) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  THOST_CHECK_ARG(model != NULL, "model is NULL");
  *model = instance->model;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceState(TRITONBACKEND_ModelInstance* instance, void** state) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  THOST_CHECK_ARG(state != NULL, "state is NULL");
  *state = __atomic_load_n(&instance->state, __ATOMIC_ACQUIRE);
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceSetState(TRITONBACKEND_ModelInstance* instance, void* state) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  __atomic_store_n(&instance->state, state, __ATOMIC_RELEASE);
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceReportStatistics(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request* request, const bool success,
    const uint64_t exec_start_ns, const uint64_t compute_start_ns, const uint64_t compute_end_ns,
    const uint64_t exec_end_ns) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  THOST_CHECK_HANDLE(request, THOST_MAGIC_REQUEST, "request");
  return thostReportStatistics(instance->key, request->ctx->key, success, exec_start_ns, compute_start_ns,
                               compute_end_ns, exec_end_ns);
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceReportBatchStatistics(
    TRITONBACKEND_ModelInstance* instance, const uint64_t batch_size, const uint64_t exec_start_ns,
    const uint64_t compute_start_ns, const uint64_t compute_end_ns, const uint64_t exec_end_ns) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  return thostReportBatchStatistics(instance->key, batch_size, exec_start_ns, compute_start_ns, compute_end_ns,
                                    exec_end_ns);
}

// Replaces the configuration JSON a model hands out (called by Go at model
// creation and after TRITONBACKEND_ModelSetConfig).
void thost_model_set_config_json(TRITONBACKEND_Model* model, const char* json, size_t len) {
  char* copy = thost_strndup(json, len);
  pthread_mutex_lock(&model->config_mu);
  char* old = model->config_json;
  model->config_json = copy;
  model->config_len = len;
  pthread_mutex_unlock(&model->config_mu);
  free(old);
}
