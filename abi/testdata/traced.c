#define _POSIX_C_SOURCE 200809L
// A backend that reads the trace of each request, reports a custom activity
// and its memory usage, and answers with what it saw as a BYTES output:
// "traced=<0|1> id=<id> model=<name> version=<v> request=<id>".
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "triton/core/tritonbackend.h"

static uint64_t
now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static TRITONSERVER_Error*
report_usage(TRITONBACKEND_ModelInstance* instance)
{
  TRITONSERVER_BufferAttributes* attrs[2];
  TRITONSERVER_BufferAttributesNew(&attrs[0]);
  TRITONSERVER_BufferAttributesSetMemoryType(attrs[0], TRITONSERVER_MEMORY_CPU);
  TRITONSERVER_BufferAttributesSetByteSize(attrs[0], 1000);
  TRITONSERVER_BufferAttributesNew(&attrs[1]);
  TRITONSERVER_BufferAttributesSetMemoryType(
      attrs[1], TRITONSERVER_MEMORY_CPU_PINNED);
  TRITONSERVER_BufferAttributesSetByteSize(attrs[1], 24);
  TRITONSERVER_Error* err =
      TRITONBACKEND_ModelInstanceReportMemoryUsage(instance, attrs, 2);
  TRITONSERVER_BufferAttributesDelete(attrs[0]);
  TRITONSERVER_BufferAttributesDelete(attrs[1]);
  return err;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance* instance)
{
  return report_usage(instance);
}

static TRITONSERVER_Error*
describe(TRITONBACKEND_Request* request, char* buf, size_t n)
{
  TRITONSERVER_InferenceTrace* trace;
  TRITONSERVER_Error* err = TRITONBACKEND_RequestTrace(request, &trace);
  if (err != NULL)
    return err;
  if (trace == NULL) {
    snprintf(buf, n, "traced=0");
    return NULL;
  }
  err = TRITONSERVER_InferenceTraceReportActivity(
      trace, now_ns(), "BACKEND_STEP");
  if (err != NULL)
    return err;
  uint64_t id, parent;
  int64_t version;
  const char *model, *rid;
  if ((err = TRITONSERVER_InferenceTraceId(trace, &id)) != NULL)
    return err;
  if ((err = TRITONSERVER_InferenceTraceParentId(trace, &parent)) != NULL)
    return err;
  if ((err = TRITONSERVER_InferenceTraceModelName(trace, &model)) != NULL)
    return err;
  if ((err = TRITONSERVER_InferenceTraceModelVersion(trace, &version)) != NULL)
    return err;
  if ((err = TRITONSERVER_InferenceTraceRequestId(trace, &rid)) != NULL)
    return err;
  snprintf(
      buf, n, "traced=1 id=%llu parent=%llu model=%s version=%lld request=%s",
      (unsigned long long)id, (unsigned long long)parent, model,
      (long long)version, rid);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  for (uint32_t i = 0; i < request_count; i++) {
    uint64_t start = now_ns();
    char text[256];
    TRITONSERVER_Error* err = describe(requests[i], text, sizeof(text));
    TRITONBACKEND_Response* response;
    TRITONSERVER_Error* rerr =
        TRITONBACKEND_ResponseNew(&response, requests[i]);
    if (rerr != NULL)
      return rerr;
    if (err == NULL) {
      TRITONBACKEND_Output* output;
      const int64_t shape[1] = {1};
      err = TRITONBACKEND_ResponseOutput(
          response, &output, "OUT", TRITONSERVER_TYPE_BYTES, shape, 1);
      if (err == NULL) {
        uint32_t len = (uint32_t)strlen(text);
        void* buffer;
        TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
        int64_t mid = 0;
        err = TRITONBACKEND_OutputBuffer(output, &buffer, 4 + len, &mt, &mid);
        if (err == NULL) {
          memcpy(buffer, &len, 4);
          memcpy((char*)buffer + 4, text, len);
        }
      }
    }
    TRITONBACKEND_ResponseSend(
        response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err);
    if (err != NULL)
      TRITONSERVER_ErrorDelete(err);
    uint64_t end = now_ns();
    TRITONBACKEND_ModelInstanceReportStatistics(
        instance, requests[i], true, start, start + 1, end - 1, end);
    TRITONBACKEND_RequestRelease(requests[i], TRITONSERVER_REQUEST_RELEASE_ALL);
  }
  return NULL;
}
