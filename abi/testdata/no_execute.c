// A library that lacks TRITONBACKEND_ModelInstanceExecute, so it is not a
// usable backend.
#include "triton/core/tritonbackend.h"

TRITONSERVER_Error*
TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model)
{
  (void)model;
  return NULL;
}
