/* A backend that breaks the protocol on purpose: it answers each request,
 * releases it, and then reads its input's shape, which the server freed
 * with the request. sanitize_test.go builds it with -fsanitize=address and
 * expects the server it runs in to die with the sanitizer's report. */
#include <stdio.h>

#include "triton/core/tritonbackend.h"

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  (void)instance;
  for (uint32_t r = 0; r < request_count; ++r) {
    TRITONBACKEND_Input* input = NULL;
    const int64_t* shape = NULL;
    TRITONSERVER_Error* err =
        TRITONBACKEND_RequestInputByIndex(requests[r], 0, &input);
    if (err == NULL) {
      err = TRITONBACKEND_InputProperties(
          input, NULL, NULL, &shape, NULL, NULL, NULL);
    }
    TRITONBACKEND_Response* response = NULL;
    if (TRITONBACKEND_ResponseNew(&response, requests[r]) == NULL) {
      TRITONBACKEND_ResponseSend(
          response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err);
    }
    TRITONBACKEND_RequestRelease(requests[r], TRITONSERVER_REQUEST_RELEASE_ALL);
    if (shape != NULL) {
      const volatile int64_t* released = shape;
      fprintf(
          stderr, "touch: IN's first dimension %lld\n", (long long)released[0]);
    }
  }
  return NULL;
}
