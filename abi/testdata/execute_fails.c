// A backend whose Execute always fails, so the host must answer and release
// every request itself.
#include "triton/core/tritonbackend.h"

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  (void)instance;
  (void)requests;
  (void)request_count;
  return TRITONSERVER_ErrorNew(
      TRITONSERVER_ERROR_UNAVAILABLE, "execute failed on purpose");
}
