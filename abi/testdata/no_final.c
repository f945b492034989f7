// A buggy backend: it releases every request without sending any response,
// so the host must notice and complete the request with an error.
#include "triton/core/tritonbackend.h"

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  (void)instance;
  for (uint32_t i = 0; i < request_count; i++) {
    TRITONSERVER_Error* err = TRITONBACKEND_RequestRelease(
        requests[i], TRITONSERVER_REQUEST_RELEASE_ALL);
    if (err != NULL)
      return err;
  }
  return NULL;
}
