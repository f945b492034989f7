// A backend exercising backend attributes and policies:
//  - GetBackendAttribute prefers a KIND_CPU group of 3 instances;
//  - Initialize sets TRITONBACKEND_EXECUTION_DEVICE_BLOCKING when the
//    backend config (--backend-config attributes,policy=device) asks;
//  - Execute records how many executions ran at once (it sleeps 30 ms) and
//    answers OUT = the most seen so far;
//  - ModelInstanceReady fails for instances whose name starts with "sick".
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "triton/core/tritonbackend.h"

static int running, most;

TRITONSERVER_Error*
TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend)
{
  TRITONSERVER_Message* cfg;
  TRITONSERVER_Error* err = TRITONBACKEND_BackendConfig(backend, &cfg);
  if (err != NULL)
    return err;
  const char* json;
  size_t len;
  if ((err = TRITONSERVER_MessageSerializeToJson(cfg, &json, &len)) != NULL)
    return err;
  if (strstr(json, "\"policy\":\"device\"") != NULL) {
    return TRITONBACKEND_BackendSetExecutionPolicy(
        backend, TRITONBACKEND_EXECUTION_DEVICE_BLOCKING);
  }
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_GetBackendAttribute(
    TRITONBACKEND_Backend* backend, TRITONBACKEND_BackendAttribute* attributes)
{
  (void)backend;
  TRITONSERVER_Error* err =
      TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
          attributes, TRITONSERVER_INSTANCEGROUPKIND_CPU, 3, NULL, 0);
  if (err != NULL)
    return err;
  return TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading(
      attributes, true);
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceReady(TRITONBACKEND_ModelInstance* instance)
{
  const char* name;
  TRITONSERVER_Error* err = TRITONBACKEND_ModelInstanceName(instance, &name);
  if (err != NULL)
    return err;
  if (strncmp(name, "sick", 4) == 0)
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_UNAVAILABLE, "feeling unwell");
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  (void)instance;
  int now = __atomic_add_fetch(&running, 1, __ATOMIC_SEQ_CST);
  int seen = __atomic_load_n(&most, __ATOMIC_SEQ_CST);
  while (now > seen &&
         !__atomic_compare_exchange_n(
             &most, &seen, now, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  struct timespec pause = {0, 30 * 1000 * 1000};
  nanosleep(&pause, NULL);
  __atomic_sub_fetch(&running, 1, __ATOMIC_SEQ_CST);
  int32_t answer = __atomic_load_n(&most, __ATOMIC_SEQ_CST);
  for (uint32_t i = 0; i < request_count; i++) {
    TRITONBACKEND_Response* response;
    TRITONSERVER_Error* err = TRITONBACKEND_ResponseNew(&response, requests[i]);
    if (err != NULL)
      return err;
    TRITONBACKEND_Output* out;
    const int64_t shape[1] = {1};
    err = TRITONBACKEND_ResponseOutput(
        response, &out, "OUT", TRITONSERVER_TYPE_INT32, shape, 1);
    void* buf;
    TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
    int64_t id = 0;
    if (err == NULL)
      err = TRITONBACKEND_OutputBuffer(out, &buf, 4, &mt, &id);
    if (err == NULL)
      memcpy(buf, &answer, 4);
    TRITONBACKEND_ResponseSend(
        response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err);
    if (err != NULL)
      TRITONSERVER_ErrorDelete(err);
    TRITONBACKEND_RequestRelease(requests[i], TRITONSERVER_REQUEST_RELEASE_ALL);
  }
  return NULL;
}
