// TRITONBACKEND_* functions on models and model instances. Getters and
// setters read and write the C objects; ModelSetConfig and the statistics
// reports cross into Go. The objects are created and freed by the Go side
// (library.go).
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "block_pool.h"
#include "objects.h"

#define MODEL(var, h) THOST_OBJECT(var, h, THOST_KIND_MODEL, "model")
#define INSTANCE(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_INSTANCE, "model instance")

// ---- Model ------------------------------------------------------------------

TRITONSERVER_Error*
TRITONBACKEND_ModelName(TRITONBACKEND_Model* model, const char** name)
{
  struct thost_model* m;
  MODEL(m, model);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  *name = m->name;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelVersion(TRITONBACKEND_Model* model, uint64_t* version)
{
  struct thost_model* m;
  MODEL(m, model);
  THOST_CHECK_ARG(version != NULL, "version is NULL");
  *version = m->version;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelRepository(
    TRITONBACKEND_Model* model, TRITONBACKEND_ArtifactType* artifact_type,
    const char** location)
{
  struct thost_model* m;
  MODEL(m, model);
  THOST_CHECK_ARG(
      artifact_type != NULL && location != NULL,
      "artifact_type or location is NULL");
  *artifact_type = TRITONBACKEND_ARTIFACT_FILESYSTEM;
  *location = m->repository;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelConfig(
    TRITONBACKEND_Model* model, const uint32_t config_version,
    TRITONSERVER_Message** model_config)
{
  struct thost_model* m;
  MODEL(m, model);
  THOST_CHECK_ARG(model_config != NULL, "model_config is NULL");
  if (config_version != 1) {  // Triton's ModelConfigToJson / JsonToModelConfig
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "model configuration version %u not supported, supported versions "
        "are: 1",
        config_version);
  }
  pthread_mutex_lock(&m->config_mu);
  struct thost_message* msg =
      thost_message_new(m->config_json, m->config_len, NULL);
  pthread_mutex_unlock(&m->config_mu);
  if (msg == NULL)
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", __func__);
  *model_config = THOST_AS_HANDLE(TRITONSERVER_Message, msg->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelAutoCompleteConfig(
    TRITONBACKEND_Model* model, bool* auto_complete_config)
{
  struct thost_model* m;
  MODEL(m, model);
  THOST_CHECK_ARG(auto_complete_config != NULL, "auto_complete_config is NULL");
  *auto_complete_config = m->auto_complete;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelSetConfig(
    TRITONBACKEND_Model* model, const uint32_t config_version,
    TRITONSERVER_Message* model_config)
{
  struct thost_model* m;
  struct thost_message* msg;
  MODEL(m, model);
  THOST_OBJECT(msg, model_config, THOST_KIND_MESSAGE, "model_config message");
  if (config_version != 1) {  // Triton's ModelConfigToJson / JsonToModelConfig
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "model configuration version %u not supported, supported versions "
        "are: 1",
        config_version);
  }
  return thostModelSetConfig(m, msg->json, msg->len);
}

TRITONSERVER_Error*
TRITONBACKEND_ModelServer(
    TRITONBACKEND_Model* model, TRITONSERVER_Server** server)
{
  struct thost_model* m;
  MODEL(m, model);
  THOST_CHECK_ARG(server != NULL, "server is NULL");
  *server = THOST_AS_HANDLE(TRITONSERVER_Server, m->backend->host->server);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelBackend(
    TRITONBACKEND_Model* model, TRITONBACKEND_Backend** backend)
{
  struct thost_model* m;
  MODEL(m, model);
  THOST_CHECK_ARG(backend != NULL, "backend is NULL");
  *backend = THOST_AS_HANDLE(TRITONBACKEND_Backend, m->backend->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelState(TRITONBACKEND_Model* model, void** state)
{
  struct thost_model* m;
  MODEL(m, model);
  THOST_CHECK_ARG(state != NULL, "state is NULL");
  *state = __atomic_load_n(&m->state, __ATOMIC_ACQUIRE);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelSetState(TRITONBACKEND_Model* model, void* state)
{
  struct thost_model* m;
  MODEL(m, model);
  __atomic_store_n(&m->state, state, __ATOMIC_RELEASE);
  return NULL;
}

// ---- Model instance ---------------------------------------------------------

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceName(
    TRITONBACKEND_ModelInstance* instance, const char** name)
{
  struct thost_instance* i;
  INSTANCE(i, instance);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  *name = i->name;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceKind(
    TRITONBACKEND_ModelInstance* instance, TRITONSERVER_InstanceGroupKind* kind)
{
  struct thost_instance* i;
  INSTANCE(i, instance);
  THOST_CHECK_ARG(kind != NULL, "kind is NULL");
  *kind = i->kind;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceDeviceId(
    TRITONBACKEND_ModelInstance* instance, int32_t* device_id)
{
  struct thost_instance* i;
  INSTANCE(i, instance);
  THOST_CHECK_ARG(device_id != NULL, "device_id is NULL");
  *device_id = i->device_id;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceHostPolicy(
    TRITONBACKEND_ModelInstance* instance, TRITONSERVER_Message** host_policy)
{
  struct thost_instance* i;
  INSTANCE(i, instance);
  THOST_CHECK_ARG(host_policy != NULL, "host_policy is NULL");
  *host_policy = THOST_AS_HANDLE(TRITONSERVER_Message, i->host_policy->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceIsPassive(
    TRITONBACKEND_ModelInstance* instance, bool* is_passive)
{
  struct thost_instance* i;
  INSTANCE(i, instance);
  THOST_CHECK_ARG(is_passive != NULL, "is_passive is NULL");
  *is_passive = i->passive;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceProfileCount(
    TRITONBACKEND_ModelInstance* instance, uint32_t* count)
{
  struct thost_instance* i;
  INSTANCE(i, instance);
  THOST_CHECK_ARG(count != NULL, "count is NULL");
  *count = i->profile_count;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceProfileName(
    TRITONBACKEND_ModelInstance* instance, const uint32_t index,
    const char** profile_name)
{
  struct thost_instance* i;
  INSTANCE(i, instance);
  THOST_CHECK_ARG(profile_name != NULL, "profile_name is NULL");
  if (index >= i->profile_count) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "profile index %u is out of range, the instance has %u", index,
        i->profile_count);
  }
  *profile_name = i->profiles[index];
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceSecondaryDeviceCount(
    TRITONBACKEND_ModelInstance* instance, uint32_t* count)
{
  struct thost_instance* i;
  INSTANCE(i, instance);
  THOST_CHECK_ARG(count != NULL, "count is NULL");
  *count = 0;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceSecondaryDeviceProperties(
    TRITONBACKEND_ModelInstance* instance, uint32_t index, const char** kind,
    int64_t* id)
{
  struct thost_instance* i;
  INSTANCE(i, instance);
  (void)kind;
  (void)id;
  return thost_errorf(
      TRITONSERVER_ERROR_INVALID_ARG,
      "secondary device index %u is out of range, the instance has 0", index);
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceModel(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Model** model)
{
  struct thost_instance* i;
  INSTANCE(i, instance);
  THOST_CHECK_ARG(model != NULL, "model is NULL");
  *model = THOST_AS_HANDLE(
      TRITONBACKEND_Model,
      __atomic_load_n(&i->model->handle, __ATOMIC_ACQUIRE));
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceState(
    TRITONBACKEND_ModelInstance* instance, void** state)
{
  struct thost_instance* i;
  INSTANCE(i, instance);
  THOST_CHECK_ARG(state != NULL, "state is NULL");
  *state = __atomic_load_n(&i->state, __ATOMIC_ACQUIRE);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceSetState(
    TRITONBACKEND_ModelInstance* instance, void* state)
{
  struct thost_instance* i;
  INSTANCE(i, instance);
  __atomic_store_n(&i->state, state, __ATOMIC_RELEASE);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceReportStatistics(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request* request,
    const bool success, const uint64_t exec_start_ns,
    const uint64_t compute_start_ns, const uint64_t compute_end_ns,
    const uint64_t exec_end_ns)
{
  struct thost_instance* i;
  struct thost_request* r;
  INSTANCE(i, instance);
  THOST_OBJECT(r, request, THOST_KIND_REQUEST, "request");
  // Buffered in the request's context: it reaches Go with the request's
  // next crossing, normally its release.
  struct thost_rstat* s = thost_block_get(THOST_POOL_RSTAT);
  if (s == NULL)
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  s->kind = THOST_RSTAT_REQUEST;
  s->instance_key = i->key;
  s->start = exec_start_ns;
  s->compute_output_start = compute_start_ns;
  s->compute_end = compute_end_ns;
  s->end = exec_end_ns;
  s->has_error = !success;
  s->error_code = 0;
  return thost_reqctx_push_stat(r->ctx, s);
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceReportBatchStatistics(
    TRITONBACKEND_ModelInstance* instance, const uint64_t batch_size,
    const uint64_t exec_start_ns, const uint64_t compute_start_ns,
    const uint64_t compute_end_ns, const uint64_t exec_end_ns)
{
  struct thost_instance* i;
  INSTANCE(i, instance);
  // On the thread executing the instance, the report waits in the
  // instance for Execute to return (execute.go); elsewhere, or past
  // THOST_BATCH_STATS, it goes to Go now, after those waiting.
  bool executing = thost_executing_instance == i;
  if (executing && i->batch_count < THOST_BATCH_STATS) {
    i->batch[i->batch_count++] = (struct thost_batch_stat){
        .batch_size = batch_size,
        .exec_start = exec_start_ns,
        .compute_start = compute_start_ns,
        .compute_end = compute_end_ns,
        .exec_end = exec_end_ns,
    };
    return NULL;
  }
  return thostReportBatchStatistics(
      i, executing, batch_size, exec_start_ns, compute_start_ns, compute_end_ns,
      exec_end_ns);
}
