// A backend whose TRITONBACKEND_ModelInstanceInitialize fails after it set
// its instance's state: TRITONBACKEND_ModelInstanceFinalize, which the host
// still calls (as Triton does), frees the state and logs that it did.
#include <stdlib.h>

#include "triton/core/tritonbackend.h"

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance* instance)
{
  TRITONSERVER_Error* err =
      TRITONBACKEND_ModelInstanceSetState(instance, malloc(64));
  if (err != NULL)
    return err;
  return TRITONSERVER_ErrorNew(
      TRITONSERVER_ERROR_INTERNAL, "the instance initialized halfway");
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance* instance)
{
  void* state = NULL;
  TRITONSERVER_Error* err = TRITONBACKEND_ModelInstanceState(instance, &state);
  if (err != NULL)
    return err;
  if (state != NULL) {
    free(state);
    TRITONSERVER_LogMessage(
        TRITONSERVER_LOG_INFO, __FILE__, __LINE__,
        "instance_init_fails: finalize freed the state of a failed initialize");
  }
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  (void)instance;
  (void)requests;
  (void)request_count;
  return TRITONSERVER_ErrorNew(
      TRITONSERVER_ERROR_INTERNAL, "no instance ever initialized");
}
