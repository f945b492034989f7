// A backend whose TRITONBACKEND_Initialize refuses to start.
#include "triton/core/tritonbackend.h"

TRITONSERVER_Error*
TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend)
{
  (void)backend;
  return TRITONSERVER_ErrorNew(
      TRITONSERVER_ERROR_UNSUPPORTED, "this backend refuses to initialize");
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  (void)instance;
  (void)requests;
  (void)request_count;
  return NULL;
}
