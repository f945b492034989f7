// A backend that answers each request with an output OUT of IN[0] INT32
// elements (all zero), however large: to check that the server refuses an
// output over its bound without copying it.
#include <stdint.h>
#include <string.h>

#include "triton/core/tritonbackend.h"

static TRITONSERVER_Error*
respond(TRITONBACKEND_Request* request)
{
  TRITONBACKEND_Input* input;
  TRITONSERVER_Error* err = TRITONBACKEND_RequestInput(request, "IN", &input);
  if (err != NULL)
    return err;
  const void* in;
  uint64_t in_size;
  TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
  int64_t memory_type_id = 0;
  err = TRITONBACKEND_InputBuffer(
      input, 0, &in, &in_size, &memory_type, &memory_type_id);
  if (err != NULL)
    return err;
  int32_t n = 0;
  if (in_size >= sizeof(n))
    memcpy(&n, in, sizeof(n));
  TRITONBACKEND_Response* response;
  if ((err = TRITONBACKEND_ResponseNew(&response, request)) != NULL)
    return err;
  TRITONBACKEND_Output* output;
  const int64_t shape[1] = {n};
  err = TRITONBACKEND_ResponseOutput(
      response, &output, "OUT", TRITONSERVER_TYPE_INT32, shape, 1);
  void* buffer;
  if (err == NULL)
    err = TRITONBACKEND_OutputBuffer(
        output, &buffer, (uint64_t)n * 4, &memory_type, &memory_type_id);
  if (err == NULL)
    memset(buffer, 0, (size_t)n * 4);
  if (err != NULL) {
    TRITONBACKEND_ResponseDelete(response);
    return err;
  }
  return TRITONBACKEND_ResponseSend(
      response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, NULL);
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  (void)instance;
  for (uint32_t i = 0; i < request_count; i++) {
    TRITONSERVER_Error* err = respond(requests[i]);
    if (err != NULL)
      TRITONSERVER_ErrorDelete(err);
    if ((err = TRITONBACKEND_RequestRelease(
             requests[i], TRITONSERVER_REQUEST_RELEASE_ALL)) != NULL)
      return err;
  }
  return NULL;
}
