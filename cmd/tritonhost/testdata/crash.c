// A decoupled backend that misbehaves as each request's IN asks, for the
// isolation tests: it crashes its process in the ways a real backend does.
//
//   IN = 0  one response, OUT = 0 (it behaves)
//   IN = 1  dereferences NULL in TRITONBACKEND_ModelInstanceExecute
//   IN = 2  sends two responses from a thread of its own, then dereferences
//           NULL on that thread
//   IN = 3  abort()
//   IN = 4  exit(3)
//   IN = 5  never returns from Execute
//   IN = 6  allocates (and touches) memory until malloc fails, then answers
//           with an error naming how much it got
#define _DEFAULT_SOURCE

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "triton/core/tritonbackend.h"

static TRITONSERVER_Error*
send_value(
    TRITONBACKEND_ResponseFactory* factory, int32_t value, uint32_t flags)
{
  TRITONBACKEND_Response* response;
  TRITONSERVER_Error* err =
      TRITONBACKEND_ResponseNewFromFactory(&response, factory);
  if (err != NULL)
    return err;
  TRITONBACKEND_Output* output;
  const int64_t shape[1] = {1};
  err = TRITONBACKEND_ResponseOutput(
      response, &output, "OUT", TRITONSERVER_TYPE_INT32, shape, 1);
  if (err == NULL) {
    void* buffer;
    TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
    int64_t type_id = 0;
    err = TRITONBACKEND_OutputBuffer(output, &buffer, 4, &type, &type_id);
    if (err == NULL)
      memcpy(buffer, &value, 4);
  }
  if (err != NULL) {
    TRITONBACKEND_ResponseDelete(response);
    return err;
  }
  return TRITONBACKEND_ResponseSend(response, flags, NULL);
}

static void*
crash_after_two(void* arg)
{
  TRITONBACKEND_ResponseFactory* factory = arg;
  TRITONSERVER_ErrorDelete(send_value(factory, 1, 0));
  TRITONSERVER_ErrorDelete(send_value(factory, 2, 0));
  usleep(100 * 1000);  // the responses reach the server first
  volatile int* p = NULL;
  *p = 2;
  return NULL;
}

static TRITONSERVER_Error*
grow(TRITONBACKEND_ResponseFactory* factory)
{
  size_t total = 0;
  for (;;) {
    char* block = malloc(16 << 20);
    if (block == NULL)
      break;
    memset(block, 1, 16 << 20);
    total += 16 << 20;
  }
  char msg[128];
  snprintf(msg, sizeof(msg), "out of memory after %zu MiB", total >> 20);
  TRITONBACKEND_Response* response;
  TRITONSERVER_Error* err =
      TRITONBACKEND_ResponseNewFromFactory(&response, factory);
  if (err != NULL)
    return err;
  TRITONSERVER_Error* failure =
      TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNAVAILABLE, msg);
  err = TRITONBACKEND_ResponseSend(
      response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, failure);
  TRITONSERVER_ErrorDelete(failure);
  return err;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  (void)instance;
  for (uint32_t i = 0; i < request_count; i++) {
    TRITONBACKEND_Request* request = requests[i];
    TRITONBACKEND_Input* input;
    const void* base;
    uint64_t size;
    TRITONSERVER_MemoryType type;
    int64_t type_id;
    int32_t mode = 0;
    TRITONSERVER_Error* err = TRITONBACKEND_RequestInput(request, "IN", &input);
    if (err == NULL)
      err = TRITONBACKEND_InputBuffer(input, 0, &base, &size, &type, &type_id);
    if (err != NULL)
      return err;
    if (size >= 4)
      memcpy(&mode, base, 4);
    TRITONBACKEND_ResponseFactory* factory;
    err = TRITONBACKEND_ResponseFactoryNew(&factory, request);
    if (err != NULL)
      return err;
    err =
        TRITONBACKEND_RequestRelease(request, TRITONSERVER_REQUEST_RELEASE_ALL);
    if (err != NULL)
      return err;
    switch (mode) {
      case 1: {
        volatile int* p = NULL;
        *p = 1;
        break;
      }
      case 2: {
        pthread_t t;
        pthread_create(&t, NULL, crash_after_two, factory);
        pthread_detach(t);
        continue;  // the thread owns the factory
      }
      case 3:
        abort();
      case 4:
        exit(3);
      case 5:
        for (;;) pause();
      case 6:
        err = grow(factory);
        break;
      default:
        err = send_value(factory, 0, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
    }
    TRITONSERVER_ErrorDelete(err);
    TRITONBACKEND_ResponseFactoryDelete(factory);
  }
  return NULL;
}
