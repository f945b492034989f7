// A stateful test backend with implicit state (sequence_batching.state):
// each request adds its INPUT to the state input INPUT_STATE, answers
// OUTPUT = the sum and stores the sum as OUTPUT_STATE, which the host hands
// to the next request of the sequence. It also checks the START control
// input the host adds against the request's flags. A few INPUT values exercise
// the other paths of the state API:
//   -1: TRITONBACKEND_StateNew with a name that is not a configured state;
//       the host's error goes back as the response.
//   -2: creates and fills OUTPUT_STATE but never updates it; the host frees
//       it at release and the sequence keeps its state (OUTPUT = the state).
#include <stdint.h>
#include <string.h>

#include "triton/core/tritonbackend.h"

#define RETURN_IF_ERROR(x)           \
  do {                               \
    TRITONSERVER_Error* err__ = (x); \
    if (err__ != NULL)               \
      return err__;                  \
  } while (0)

static TRITONSERVER_Error*
read_int32(
    TRITONBACKEND_Request* request, const char* name, int32_t* value,
    const int64_t** shape, uint32_t* dims)
{
  TRITONBACKEND_Input* input;
  RETURN_IF_ERROR(TRITONBACKEND_RequestInput(request, name, &input));
  TRITONSERVER_DataType datatype;
  uint64_t byte_size;
  uint32_t buffer_count;
  RETURN_IF_ERROR(TRITONBACKEND_InputProperties(
      input, NULL, &datatype, shape, dims, &byte_size, &buffer_count));
  if (datatype != TRITONSERVER_TYPE_INT32 || byte_size != 4 ||
      buffer_count != 1) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INVALID_ARG,
        "accumulate: expected one INT32 element");
  }
  const void* buffer;
  uint64_t size;
  TRITONSERVER_MemoryType memory_type;
  int64_t memory_type_id;
  RETURN_IF_ERROR(TRITONBACKEND_InputBuffer(
      input, 0, &buffer, &size, &memory_type, &memory_type_id));
  memcpy(value, buffer, sizeof(*value));
  return NULL;
}

// Computes the running sum of one request and hands the next state over.
static TRITONSERVER_Error*
accumulate(
    TRITONBACKEND_Request* request, int32_t* sum, const int64_t** shape,
    uint32_t* dims)
{
  int32_t in, state;
  const int64_t* state_shape;
  uint32_t state_dims;
  RETURN_IF_ERROR(read_int32(request, "INPUT", &in, shape, dims));
  RETURN_IF_ERROR(
      read_int32(request, "INPUT_STATE", &state, &state_shape, &state_dims));

  // The host adds the START control; it must agree with the request flags.
  uint32_t flags;
  int32_t start;
  const int64_t* start_shape;
  uint32_t start_dims;
  RETURN_IF_ERROR(TRITONBACKEND_RequestFlags(request, &flags));
  RETURN_IF_ERROR(
      read_int32(request, "START", &start, &start_shape, &start_dims));
  if (start != ((flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_START) ? 1 : 0)) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INTERNAL,
        "accumulate: START control does not match the flags");
  }

  TRITONBACKEND_State* next;
  if (in == -1) {
    TRITONSERVER_Error* err = TRITONBACKEND_StateNew(
        &next, request, "NOT_A_STATE", TRITONSERVER_TYPE_INT32, state_shape,
        state_dims);
    if (err == NULL)
      return TRITONSERVER_ErrorNew(
          TRITONSERVER_ERROR_INTERNAL,
          "accumulate: StateNew took an unknown name");
    return err;
  }
  *sum = state + in;
  RETURN_IF_ERROR(TRITONBACKEND_StateNew(
      &next, request, "OUTPUT_STATE", TRITONSERVER_TYPE_INT32, state_shape,
      state_dims));
  void* buffer;
  TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
  int64_t memory_type_id = 0;
  RETURN_IF_ERROR(TRITONBACKEND_StateBuffer(
      next, &buffer, sizeof(*sum), &memory_type, &memory_type_id));
  TRITONSERVER_BufferAttributes* attrs;
  RETURN_IF_ERROR(TRITONBACKEND_StateBufferAttributes(next, &attrs));
  size_t attr_size;
  RETURN_IF_ERROR(TRITONSERVER_BufferAttributesByteSize(attrs, &attr_size));
  if (memory_type != TRITONSERVER_MEMORY_CPU || attr_size != sizeof(*sum)) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INTERNAL, "accumulate: unexpected state buffer");
  }
  memcpy(buffer, sum, sizeof(*sum));
  if (in == -2) {
    *sum = state;  // the state is dropped at release, not updated
    return NULL;
  }
  RETURN_IF_ERROR(TRITONBACKEND_StateUpdate(next));
  // The state stays the request's after the update, as in Triton: the same
  // buffer, still holding what was written.
  void* again;
  RETURN_IF_ERROR(TRITONBACKEND_StateBuffer(
      next, &again, sizeof(*sum), &memory_type, &memory_type_id));
  if (again != buffer || memcmp(again, sum, sizeof(*sum)) != 0) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INTERNAL,
        "accumulate: the state's buffer changed after the update");
  }
  return NULL;
}

static TRITONSERVER_Error*
respond(
    TRITONBACKEND_Response* response, int32_t sum, const int64_t* shape,
    uint32_t dims)
{
  TRITONBACKEND_Output* output;
  RETURN_IF_ERROR(TRITONBACKEND_ResponseOutput(
      response, &output, "OUTPUT", TRITONSERVER_TYPE_INT32, shape, dims));
  void* buffer;
  TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
  int64_t memory_type_id = 0;
  RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(
      output, &buffer, sizeof(sum), &memory_type, &memory_type_id));
  memcpy(buffer, &sum, sizeof(sum));
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  (void)instance;
  for (uint32_t i = 0; i < request_count; i++) {
    TRITONBACKEND_Request* request = requests[i];
    int32_t sum = 0;
    const int64_t* shape = NULL;
    uint32_t dims = 0;
    TRITONSERVER_Error* err = accumulate(request, &sum, &shape, &dims);
    TRITONBACKEND_Response* response;
    RETURN_IF_ERROR(TRITONBACKEND_ResponseNew(&response, request));
    if (err == NULL)
      err = respond(response, sum, shape, dims);
    TRITONSERVER_Error* send_err = TRITONBACKEND_ResponseSend(
        response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err);
    if (err != NULL)
      TRITONSERVER_ErrorDelete(err);
    if (send_err != NULL)
      TRITONSERVER_ErrorDelete(send_err);
    RETURN_IF_ERROR(TRITONBACKEND_RequestRelease(
        request, TRITONSERVER_REQUEST_RELEASE_ALL));
  }
  return NULL;
}
