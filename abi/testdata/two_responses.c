// A backend that answers each request twice; in a model that is not
// decoupled the host delivers the first response and drops the second.
#include <stdint.h>

#include "triton/core/tritonbackend.h"

static TRITONSERVER_Error*
respond(TRITONBACKEND_Request* request, uint32_t flags)
{
  TRITONBACKEND_Response* response;
  TRITONSERVER_Error* err = TRITONBACKEND_ResponseNew(&response, request);
  if (err != NULL)
    return err;
  TRITONBACKEND_Output* output;
  const int64_t shape[1] = {1};
  err = TRITONBACKEND_ResponseOutput(
      response, &output, "OUT", TRITONSERVER_TYPE_INT32, shape, 1);
  if (err == NULL) {
    void* buffer;
    TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
    int64_t memory_type_id = 0;
    err = TRITONBACKEND_OutputBuffer(
        output, &buffer, 4, &memory_type, &memory_type_id);
    if (err == NULL)
      *(int32_t*)buffer = 7;
  }
  if (err != NULL) {
    TRITONBACKEND_ResponseDelete(response);
    return err;
  }
  return TRITONBACKEND_ResponseSend(response, flags, NULL);
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  (void)instance;
  for (uint32_t i = 0; i < request_count; i++) {
    TRITONSERVER_Error* first = respond(requests[i], 0);
    TRITONSERVER_Error* second =
        respond(requests[i], TRITONSERVER_RESPONSE_COMPLETE_FINAL);
    // The host takes the second response of a non-decoupled model (and
    // drops it); report any error through the log so the test can see it.
    if (second != NULL) {
      TRITONSERVER_LogMessage(
          TRITONSERVER_LOG_ERROR, __FILE__, __LINE__,
          TRITONSERVER_ErrorMessage(second));
      TRITONSERVER_ErrorDelete(second);
    }
    if (first != NULL)
      TRITONSERVER_ErrorDelete(first);
    TRITONSERVER_Error* err = TRITONBACKEND_RequestRelease(
        requests[i], TRITONSERVER_REQUEST_RELEASE_ALL);
    if (err != NULL)
      return err;
  }
  return NULL;
}
