/* A C backend: the header compiles as C11. */
#include "triton/core/tritonbackend.h"

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  (void)instance;
  for (uint32_t r = 0; r < request_count; ++r) {
    TRITONSERVER_Error* err = TRITONBACKEND_RequestRelease(
        requests[r], TRITONSERVER_REQUEST_RELEASE_ALL);
    if (err != NULL) {
      return err;
    }
  }
  return NULL;
}
