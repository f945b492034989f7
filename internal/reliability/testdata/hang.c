// A backend that never returns from one of its calls, chosen by the
// model's name: a model named "hang_init..." hangs in
// TRITONBACKEND_ModelInitialize, one named "hang_fini..." in
// TRITONBACKEND_ModelFinalize, one named "hang_exec..." in
// TRITONBACKEND_ModelInstanceExecute. Any other model answers each request with
// an empty response. It stands for a backend stuck on a device or a lock.
// Before it hangs it logs "<model> hangs in <call>", for a test to wait on.
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "triton/core/tritonbackend.h"

static void
hang_if(TRITONBACKEND_Model* model, const char* prefix, const char* call)
{
  const char* name = NULL;
  if (TRITONBACKEND_ModelName(model, &name) != NULL || name == NULL ||
      strncmp(name, prefix, strlen(prefix)) != 0) {
    return;
  }
  char msg[256];
  snprintf(msg, sizeof msg, "%s hangs in %s", name, call);
  TRITONSERVER_Error* err =
      TRITONSERVER_LogMessage(TRITONSERVER_LOG_INFO, __FILE__, __LINE__, msg);
  if (err != NULL) {
    TRITONSERVER_ErrorDelete(err);
  }
  for (;;) {
    struct timespec second = {1, 0};
    nanosleep(&second, NULL);
  }
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model)
{
  hang_if(model, "hang_init", "TRITONBACKEND_ModelInitialize");
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model)
{
  hang_if(model, "hang_fini", "TRITONBACKEND_ModelFinalize");
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  TRITONBACKEND_Model* model = NULL;
  if (TRITONBACKEND_ModelInstanceModel(instance, &model) == NULL) {
    hang_if(model, "hang_exec", "TRITONBACKEND_ModelInstanceExecute");
  }
  for (uint32_t i = 0; i < request_count; i++) {
    TRITONBACKEND_Response* response = NULL;
    if (TRITONBACKEND_ResponseNew(&response, requests[i]) == NULL) {
      TRITONBACKEND_ResponseSend(
          response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, NULL);
    }
    TRITONBACKEND_RequestRelease(requests[i], TRITONSERVER_REQUEST_RELEASE_ALL);
  }
  return NULL;
}
