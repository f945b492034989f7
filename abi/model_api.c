// TRITONBACKEND_* functions on models and model instances. Getters and
// setters read and write the C objects; ModelSetConfig and the statistics
// reports cross into Go. The objects are created and freed by the Go side
// (handles.go).
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "handles.h"

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
