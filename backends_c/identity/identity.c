/*
 * identity.c: the "identity" backend (libtriton_identity.so) in plain C11,
 * and its entry points.
 *
 * Every output OUTPUT<n> is a copy of input INPUT<n>: same data type, same
 * shape, same bytes. The model configuration rules are in
 * identity_config.c, the request handling in identity_execute.c.
 * Execute blocks until every request of the batch has been answered and
 * released, and then returns success.
 */
#include "identity.h"

#include <dlfcn.h>
#include <stdlib.h>

/* ---- backend ---------------------------------------------------------- */

/* Refuses a host whose backend API is not compatible with the header this
 * backend was built with: same major, and at least the same minor. */
static TRITONSERVER_Error*
check_api_version(void)
{
  uint32_t major = 0, minor = 0;
  RETURN_IF_ERROR(TRITONBACKEND_ApiVersion(&major, &minor));
  IDENTITY_LOG(
      TRITONSERVER_LOG_INFO,
      "Triton TRITONBACKEND API version: %u.%u; identity built for %u.%u",
      (unsigned)major, (unsigned)minor,
      (unsigned)TRITONBACKEND_API_VERSION_MAJOR,
      (unsigned)TRITONBACKEND_API_VERSION_MINOR);
  if (major != TRITONBACKEND_API_VERSION_MAJOR ||
      minor < TRITONBACKEND_API_VERSION_MINOR) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_UNSUPPORTED,
        "triton backend API version does not support this backend");
  }
  return NULL;
}

/* Logs the backend's configuration ("--backend-config" settings). The
 * message belongs to the host and is not deleted here. */
static TRITONSERVER_Error*
log_backend_config(TRITONBACKEND_Backend* backend)
{
  TRITONSERVER_Message* config = NULL;
  const char* json = NULL;
  size_t size = 0;
  RETURN_IF_ERROR(TRITONBACKEND_BackendConfig(backend, &config));
  RETURN_IF_ERROR(TRITONSERVER_MessageSerializeToJson(config, &json, &size));
  IDENTITY_LOG(
      TRITONSERVER_LOG_VERBOSE, "backend configuration:\n%.*s", (int)size,
      json);
  return NULL;
}

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend)
{
  const char* name = NULL;
  RETURN_IF_ERROR(TRITONBACKEND_BackendName(backend, &name));
  IDENTITY_LOG(TRITONSERVER_LOG_INFO, "TRITONBACKEND_Initialize: %s", name);
  RETURN_IF_ERROR(check_api_version());
  return log_backend_config(backend);
}

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_Finalize(TRITONBACKEND_Backend* backend)
{
  (void)backend; /* no backend-wide state to free */
  IDENTITY_LOG(TRITONSERVER_LOG_INFO, "TRITONBACKEND_Finalize: identity");
  return NULL;
}

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_GetBackendAttribute(
    TRITONBACKEND_Backend* backend,
    TRITONBACKEND_BackendAttribute* backend_attributes)
{
  (void)backend;
  /* Instances share nothing mutable, so they may be created in parallel. */
  return TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading(
      backend_attributes, true);
}

/* ---- model ------------------------------------------------------------ */

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model)
{
  identity_model* state = NULL;
  RETURN_IF_ERROR(identity_model_new(model, &state));
  TRITONSERVER_Error* err = TRITONBACKEND_ModelSetState(model, state);
  if (err != NULL) {
    identity_model_delete(state);
  }
  return err;
}

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model)
{
  void* state = NULL;
  RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &state));
  identity_model_delete(state);
  return NULL;
}

/* ---- instance --------------------------------------------------------- */

static void
instance_delete(identity_instance* instance)
{
  if (instance != NULL) {
    if (instance->cuda != NULL) {
      dlclose(instance->cuda);
    }
    free(instance->name);
    free(instance);
  }
}

static TRITONSERVER_Error*
instance_fill(identity_instance* st, TRITONBACKEND_ModelInstance* instance)
{
  TRITONBACKEND_Model* model = NULL;
  void* model_state = NULL;
  const char* name = NULL;
  TRITONSERVER_InstanceGroupKind kind = TRITONSERVER_INSTANCEGROUPKIND_CPU;
  int32_t device_id = 0;
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
  RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &model_state));
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceName(instance, &name));
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceKind(instance, &kind));
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceDeviceId(instance, &device_id));
  IDENTITY_LOG(
      TRITONSERVER_LOG_INFO,
      "TRITONBACKEND_ModelInstanceInitialize: %s (%s device %d)", name,
      TRITONSERVER_InstanceGroupKindString(kind), (int)device_id);
  if (model_state == NULL) {
    return identity_error(
        TRITONSERVER_ERROR_INTERNAL, "identity backend: model has no state");
  }
  if (kind != TRITONSERVER_INSTANCEGROUPKIND_CPU &&
      kind != TRITONSERVER_INSTANCEGROUPKIND_MODEL &&
      kind != TRITONSERVER_INSTANCEGROUPKIND_GPU) {
    return identity_error(
        TRITONSERVER_ERROR_UNSUPPORTED,
        "identity backend: instance '%s' has kind %s; only KIND_CPU, KIND_GPU "
        "and KIND_MODEL are supported",
        name, TRITONSERVER_InstanceGroupKindString(kind));
  }
  if (kind == TRITONSERVER_INSTANCEGROUPKIND_GPU) {
    st->cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (st->cuda == NULL) {
      return identity_error(
          TRITONSERVER_ERROR_UNAVAILABLE,
          "identity backend: instance '%s' is on GPU %d but the CUDA driver "
          "cannot be loaded: %s",
          name, (int)device_id, dlerror());
    }
    st->htod = (identity_htod_fn)dlsym(st->cuda, "cuMemcpyHtoD_v2");
    if (st->htod == NULL) {
      return identity_error(
          TRITONSERVER_ERROR_UNAVAILABLE,
          "identity backend: the CUDA driver lacks cuMemcpyHtoD_v2");
    }
  }
  st->kind = kind;
  st->instance = instance;
  st->device_id = device_id;
  st->model = model_state;
  st->name = identity_strdup(name);
  if (st->name == NULL) {
    return identity_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  }
  return NULL;
}

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance* instance)
{
  identity_instance* state = calloc(1, sizeof(*state));
  TRITONSERVER_Error* err =
      (state != NULL)
          ? instance_fill(state, instance)
          : identity_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  if (err == NULL) {
    err = TRITONBACKEND_ModelInstanceSetState(instance, state);
  }
  if (err != NULL) {
    instance_delete(state);
  }
  return err;
}

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance* instance)
{
  void* state = NULL;
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &state));
  instance_delete(state);
  return NULL;
}

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  void* state = NULL;
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &state));
  identity_execute(state, requests, request_count);
  return NULL; /* every request was answered and released */
}
