/*
 * checks_backend.c: the backend handle, its memory manager and the backend
 * attributes. Run from TRITONBACKEND_Initialize and
 * TRITONBACKEND_GetBackendAttribute.
 */
#include <stdio.h>
#include <string.h>

#include "cJSON.h"
#include "conformance.h"

/* Records every "cmdline" setting of the backend configuration as a value
 * "backend.config.<setting>=<value>". */
static void
config_values(conf_report* r, TRITONSERVER_Message* config)
{
  const char* json = NULL;
  size_t size = 0;
  cJSON* root = NULL;
  if (TRITONSERVER_MessageSerializeToJson(config, &json, &size) != NULL ||
      (root = cJSON_ParseWithLength(json, size)) == NULL) {
    conf_value(r, "backend.config", "unreadable");
    return;
  }
  const cJSON* cmdline = cJSON_GetObjectItemCaseSensitive(root, "cmdline");
  /* cJSON_GetArraySize counts an object's members too. */
  conf_value(r, "backend.config.members", "%d", cJSON_GetArraySize(root));
  for (const cJSON* m = cJSON_IsObject(cmdline) ? cmdline->child : NULL;
       m != NULL; m = m->next) {
    char key[128];
    snprintf(key, sizeof(key), "backend.config.%s", m->string);
    if (cJSON_IsString(m)) {
      conf_value(r, key, "%s", m->valuestring);
    } else {
      conf_value(r, key, "(not a string)");
    }
  }
  cJSON_Delete(root);
}

static void
check_backend_getters(conf_report* r, TRITONBACKEND_Backend* b)
{
  const char* name = NULL;
  if (CONF_CHECK(r, TRITONBACKEND_BackendName, "good", b, &name)) {
    conf_value(r, "backend.name", "%s", name);
  }
  CONF_CHECK(r, TRITONBACKEND_BackendName, "null_backend", NULL, &name);
  CONF_CHECK(r, TRITONBACKEND_BackendName, "null_out", b, NULL);

  TRITONSERVER_Message* config = NULL;
  if (CONF_CHECK(r, TRITONBACKEND_BackendConfig, "good", b, &config)) {
    config_values(r, config);
    /* Host-owned: the host must refuse to delete it. */
    CONF_CHECK(r, TRITONSERVER_MessageDelete, "backend_config", config);
  }
  CONF_CHECK(r, TRITONBACKEND_BackendConfig, "null_backend", NULL, &config);
  CONF_CHECK(r, TRITONBACKEND_BackendConfig, "null_out", b, NULL);

  TRITONBACKEND_ArtifactType type = (TRITONBACKEND_ArtifactType)7;
  const char* location = NULL;
  if (CONF_CHECK(
          r, TRITONBACKEND_BackendArtifacts, "good", b, &type, &location)) {
    conf_value(r, "backend.artifacts.type", "%d", (int)type);
    conf_value(r, "backend.artifacts.location", "%s", location);
  }
  CONF_CHECK(
      r, TRITONBACKEND_BackendArtifacts, "null_backend", NULL, &type,
      &location);
  CONF_CHECK(r, TRITONBACKEND_BackendArtifacts, "null_out", b, &type, NULL);
}

static void
check_execution_policy(conf_report* r, TRITONBACKEND_Backend* b)
{
  TRITONBACKEND_ExecutionPolicy policy = (TRITONBACKEND_ExecutionPolicy)7;
  if (CONF_CHECK(
          r, TRITONBACKEND_BackendExecutionPolicy, "default", b, &policy)) {
    conf_value(r, "backend.execution_policy.default", "%d", (int)policy);
  }
  CONF_CHECK(
      r, TRITONBACKEND_BackendSetExecutionPolicy, "device_blocking", b,
      TRITONBACKEND_EXECUTION_DEVICE_BLOCKING);
  if (CONF_CHECK(
          r, TRITONBACKEND_BackendExecutionPolicy, "after_set", b, &policy)) {
    conf_value(r, "backend.execution_policy.after_set", "%d", (int)policy);
  }
  CONF_CHECK(
      r, TRITONBACKEND_BackendSetExecutionPolicy, "unknown_policy", b,
      (TRITONBACKEND_ExecutionPolicy)7);
  CONF_CHECK(
      r, TRITONBACKEND_BackendSetExecutionPolicy, "null_backend", NULL,
      TRITONBACKEND_EXECUTION_BLOCKING);
  CONF_CHECK(
      r, TRITONBACKEND_BackendSetExecutionPolicy, "blocking", b,
      TRITONBACKEND_EXECUTION_BLOCKING);
  CONF_CHECK(
      r, TRITONBACKEND_BackendExecutionPolicy, "null_backend", NULL, &policy);
  CONF_CHECK(r, TRITONBACKEND_BackendExecutionPolicy, "null_out", b, NULL);
}

/* Allocates, writes every byte, frees: both calls are checks. */
static void
alloc_and_free(
    conf_report* r, TRITONBACKEND_MemoryManager* mm, const char* kase,
    TRITONSERVER_MemoryType type, uint64_t size)
{
  void* buffer = NULL;
  if (CONF_CHECK(
          r, TRITONBACKEND_MemoryManagerAllocate, kase, mm, &buffer, type, 0,
          size)) {
    memset(buffer, 0xab, size);
    CONF_CHECK(r, TRITONBACKEND_MemoryManagerFree, kase, mm, buffer, type, 0);
  }
}

static void
check_memory_manager(conf_report* r, TRITONBACKEND_Backend* b)
{
  TRITONBACKEND_MemoryManager* mm = NULL;
  CONF_CHECK(r, TRITONBACKEND_BackendMemoryManager, "null_backend", NULL, &mm);
  CONF_CHECK(r, TRITONBACKEND_BackendMemoryManager, "null_out", b, NULL);
  if (!CONF_CHECK(r, TRITONBACKEND_BackendMemoryManager, "good", b, &mm)) {
    return;
  }
  alloc_and_free(r, mm, "cpu", TRITONSERVER_MEMORY_CPU, 4096);
  alloc_and_free(r, mm, "cpu_pinned", TRITONSERVER_MEMORY_CPU_PINNED, 4096);
  alloc_and_free(r, mm, "zero_bytes", TRITONSERVER_MEMORY_CPU, 0);
  void* buffer = NULL;
  CONF_CHECK(
      r, TRITONBACKEND_MemoryManagerAllocate, "gpu", mm, &buffer,
      TRITONSERVER_MEMORY_GPU, 0, 64);
  CONF_CHECK(
      r, TRITONBACKEND_MemoryManagerAllocate, "cpu_nonzero_id", mm, &buffer,
      TRITONSERVER_MEMORY_CPU, 1, 64);
  CONF_CHECK(
      r, TRITONBACKEND_MemoryManagerAllocate, "unknown_type", mm, &buffer,
      (TRITONSERVER_MemoryType)7, 0, 64);
  CONF_CHECK(
      r, TRITONBACKEND_MemoryManagerAllocate, "null_buffer", mm, NULL,
      TRITONSERVER_MEMORY_CPU, 0, 64);
  CONF_CHECK(
      r, TRITONBACKEND_MemoryManagerAllocate, "null_manager", NULL, &buffer,
      TRITONSERVER_MEMORY_CPU, 0, 64);
  CONF_CHECK(
      r, TRITONBACKEND_MemoryManagerFree, "cpu_null_buffer", mm, NULL,
      TRITONSERVER_MEMORY_CPU, 0);
  CONF_CHECK(
      r, TRITONBACKEND_MemoryManagerFree, "gpu", mm, NULL,
      TRITONSERVER_MEMORY_GPU, 0);
  CONF_CHECK(
      r, TRITONBACKEND_MemoryManagerFree, "unknown_type", mm, NULL,
      (TRITONSERVER_MemoryType)7, 0);
  CONF_CHECK(
      r, TRITONBACKEND_MemoryManagerFree, "null_manager", NULL, NULL,
      TRITONSERVER_MEMORY_CPU, 0);
}

static void
check_state(conf_report* r, TRITONBACKEND_Backend* b, void* state)
{
  void* got = NULL;
  CONF_CHECK(r, TRITONBACKEND_BackendSetState, "good", b, state);
  if (CONF_CHECK(r, TRITONBACKEND_BackendState, "good", b, &got)) {
    conf_value(
        r, "backend.state_round_trip", "%s", got == state ? "true" : "false");
  }
  CONF_CHECK(r, TRITONBACKEND_BackendSetState, "null_backend", NULL, state);
  CONF_CHECK(r, TRITONBACKEND_BackendState, "null_backend", NULL, &got);
  CONF_CHECK(r, TRITONBACKEND_BackendState, "null_out", b, NULL);
}

void
conf_check_backend(
    conf_report* report, TRITONBACKEND_Backend* backend, void* state)
{
  check_backend_getters(report, backend);
  check_execution_policy(report, backend);
  check_memory_manager(report, backend);
  check_state(report, backend, state);
}

void
conf_check_backend_attributes(
    conf_report* r, TRITONBACKEND_BackendAttribute* attributes)
{
  const uint64_t devices[2] = {0, 1};
  CONF_CHECK(
      r, TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup, "cpu",
      attributes, TRITONSERVER_INSTANCEGROUPKIND_CPU, 1, NULL, 0);
  CONF_CHECK(
      r, TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup,
      "gpu_with_devices", attributes, TRITONSERVER_INSTANCEGROUPKIND_GPU, 2,
      devices, 2);
  CONF_CHECK(
      r, TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup,
      "unknown_kind", attributes, (TRITONSERVER_InstanceGroupKind)9, 1, NULL,
      0);
  CONF_CHECK(
      r, TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup,
      "null_device_ids", attributes, TRITONSERVER_INSTANCEGROUPKIND_GPU, 1,
      NULL, 2);
  CONF_CHECK(
      r, TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup,
      "null_attributes", NULL, TRITONSERVER_INSTANCEGROUPKIND_CPU, 1, NULL, 0);
  CONF_CHECK(
      r, TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading, "good",
      attributes, true);
  CONF_CHECK(
      r, TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading,
      "null_attributes", NULL, true);
}
