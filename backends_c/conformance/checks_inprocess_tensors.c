/*
 * checks_inprocess_tensors.c: inputs, input data and requested outputs of
 * an inference request that is never submitted (checks_inprocess.c makes
 * it), with good and bad arguments.
 */
#include <stdint.h>
#include <string.h>

#include "conformance.h"

static void
check_inputs(conf_report* r, TRITONSERVER_InferenceRequest* q)
{
  const int64_t shape[1] = {3};
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAddInput, "good", q, "DATA",
      TRITONSERVER_TYPE_INT32, shape, 1);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAddInput, "duplicate", q, "DATA",
      TRITONSERVER_TYPE_INT32, shape, 1);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAddInput, "null_name", q, NULL,
      TRITONSERVER_TYPE_INT32, shape, 1);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAddInput, "null_shape", q, "X",
      TRITONSERVER_TYPE_INT32, NULL, 1);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAddInput, "invalid_type", q, "X",
      TRITONSERVER_TYPE_INVALID, shape, 1);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAddRawInput, "with_others", q, "R");
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAddInput, "scalar", q, "EXTRA",
      TRITONSERVER_TYPE_FP32, NULL, 0);
  CONF_CHECK(r, TRITONSERVER_InferenceRequestRemoveInput, "good", q, "EXTRA");
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestRemoveInput, "unknown", q, "EXTRA");
  CONF_CHECK(r, TRITONSERVER_InferenceRequestRemoveInput, "null_name", q, NULL);
}

static void
check_input_data(conf_report* r, TRITONSERVER_InferenceRequest* q)
{
  static const int32_t data[3] = {1, 2, 3};
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAppendInputData, "good", q, "DATA", data,
      sizeof(data), TRITONSERVER_MEMORY_CPU, 0);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAppendInputData, "cpu_pinned", q, "DATA",
      data, 0, TRITONSERVER_MEMORY_CPU_PINNED, 0);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAppendInputData, "unknown_input", q,
      "NOPE", data, sizeof(data), TRITONSERVER_MEMORY_CPU, 0);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAppendInputData, "null_base", q, "DATA",
      NULL, 4, TRITONSERVER_MEMORY_CPU, 0);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAppendInputData, "gpu", q, "DATA", data,
      sizeof(data), TRITONSERVER_MEMORY_GPU, 0);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAppendInputData, "unknown_memory_type", q,
      "DATA", data, sizeof(data), (TRITONSERVER_MemoryType)9, 0);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy, "good", q,
      "DATA", data, sizeof(data), TRITONSERVER_MEMORY_CPU, 0, "cpu");
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy,
      "null_policy", q, "DATA", data, sizeof(data), TRITONSERVER_MEMORY_CPU, 0,
      NULL);
  TRITONSERVER_BufferAttributes* attrs = NULL;
  if (TRITONSERVER_BufferAttributesNew(&attrs) == NULL) {
    TRITONSERVER_ErrorDelete(
        TRITONSERVER_BufferAttributesSetByteSize(attrs, sizeof(data)));
    CONF_CHECK(
        r, TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes,
        "good", q, "DATA", data, attrs);
    TRITONSERVER_ErrorDelete(TRITONSERVER_BufferAttributesDelete(attrs));
    CONF_CHECK(
        r, TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes,
        "deleted_attributes", q, "DATA", data, attrs);
  }
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestRemoveAllInputData, "good", q, "DATA");
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestRemoveAllInputData, "unknown_input", q,
      "NOPE");
  CONF_CHECK(r, TRITONSERVER_InferenceRequestRemoveAllInputs, "good", q);
  CONF_CHECK(r, TRITONSERVER_InferenceRequestAddRawInput, "good", q, "RAW");
  const int64_t shape[1] = {1};
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAddInput, "after_raw", q, "X",
      TRITONSERVER_TYPE_INT32, shape, 1);
  CONF_CHECK(r, TRITONSERVER_InferenceRequestAddRawInput, "null_name", q, NULL);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestRemoveAllInputs, "null_request", NULL);
}

static void
check_outputs(conf_report* r, TRITONSERVER_InferenceRequest* q)
{
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAddRequestedOutput, "good", q,
      "AUTO_OUT");
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAddRequestedOutput, "twice", q,
      "AUTO_OUT");
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestAddRequestedOutput, "null_name", q, NULL);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestRemoveRequestedOutput, "good", q,
      "AUTO_OUT");
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestRemoveRequestedOutput, "unknown", q,
      "AUTO_OUT");
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs, "good", q);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs, "null_request",
      NULL);
}

static void
check_callbacks(conf_report* r, TRITONSERVER_InferenceRequest* q)
{
  TRITONSERVER_ResponseAllocator* a = NULL;
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetReleaseCallback, "good", q,
      conf_request_released, NULL);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetReleaseCallback, "null_request", NULL,
      conf_request_released, NULL);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetResponseCallback, "null_allocator", q,
      NULL, NULL, conf_response_complete, NULL);
  if (TRITONSERVER_ResponseAllocatorNew(
          &a, conf_alloc_fn, conf_release_fn, NULL) == NULL) {
    CONF_CHECK(
        r, TRITONSERVER_InferenceRequestSetResponseCallback, "good", q, a, NULL,
        conf_response_complete, NULL);
    CONF_CHECK(
        r, TRITONSERVER_InferenceRequestSetResponseCallback, "null_response_fn",
        q, a, NULL, NULL, NULL);
    TRITONSERVER_ErrorDelete(TRITONSERVER_ResponseAllocatorDelete(a));
  }
  bool cancelled = false;
  CONF_CHECK(r, TRITONSERVER_InferenceRequestCancel, "not_submitted", q);
  if (CONF_CHECK(
          r, TRITONSERVER_InferenceRequestIsCancelled, "not_submitted", q,
          &cancelled)) {
    conf_value(
        r, "inprocess.cancelled_before_submission", "%s",
        cancelled ? "true" : "false");
  }
  CONF_CHECK(r, TRITONSERVER_InferenceRequestCancel, "null_request", NULL);
  CONF_CHECK(r, TRITONSERVER_InferenceRequestIsCancelled, "null_out", q, NULL);
}

void
conf_check_inprocess_tensors(conf_report* r, TRITONSERVER_InferenceRequest* q)
{
  check_inputs(r, q);
  check_input_data(r, q);
  check_outputs(r, q);
  check_callbacks(r, q);
}
