/*
 * identity_execute.c: answers each request of a batch on its own with one
 * FINAL response in which every requested OUTPUT<n> is a bit-identical copy
 * of INPUT<n> (same data type, shape and bytes; BYTES included). A
 * requested output whose input the request lacks (an optional input) is
 * left out. A request that fails gets a FINAL error response instead.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "identity.h"

/* CLOCK_MONOTONIC nanoseconds: the steady clock statistics use. */
static uint64_t
now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
sleep_ms(uint64_t ms)
{
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
    /* interrupted by a signal: sleep for the rest */
  }
}

/* The request's input called 'name', or NULL if it has none. Looks by
 * name first so that an absent (optional) input is not an error. */
static TRITONSERVER_Error*
find_input(
    TRITONBACKEND_Request* request, const char* name,
    TRITONBACKEND_Input** input)
{
  uint32_t count = 0;
  *input = NULL;
  RETURN_IF_ERROR(TRITONBACKEND_RequestInputCount(request, &count));
  for (uint32_t i = 0; i < count; i++) {
    const char* input_name = NULL;
    RETURN_IF_ERROR(TRITONBACKEND_RequestInputName(request, i, &input_name));
    if (strcmp(input_name, name) == 0) {
      return TRITONBACKEND_RequestInputByIndex(request, i, input);
    }
  }
  return NULL;
}

/* Concatenates the input's buffers into 'dst' (exactly byte_size bytes),
 * host memory, or GPU memory when 'htod' is set (the CUDA driver's copy). */
static TRITONSERVER_Error*
copy_input(
    TRITONBACKEND_Input* input, const char* name, uint32_t buffer_count,
    char* dst, uint64_t byte_size, identity_htod_fn htod)
{
  uint64_t offset = 0;
  for (uint32_t b = 0; b < buffer_count; b++) {
    const void* src = NULL;
    uint64_t size = 0;
    TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
    int64_t type_id = 0;
    RETURN_IF_ERROR(
        TRITONBACKEND_InputBuffer(input, b, &src, &size, &type, &type_id));
    if (type == TRITONSERVER_MEMORY_GPU) {
      return identity_error(
          TRITONSERVER_ERROR_UNSUPPORTED,
          "input '%s' is in GPU memory; identity copies CPU memory only", name);
    }
    if (size > byte_size - offset) {
      return identity_error(
          TRITONSERVER_ERROR_INTERNAL,
          "buffers of input '%s' hold more than its byte size %llu", name,
          (unsigned long long)byte_size);
    }
    if (size > 0 && htod != NULL) {
      int rc = htod((unsigned long long)(uintptr_t)(dst + offset), src, size);
      if (rc != 0) {
        return identity_error(
            TRITONSERVER_ERROR_INTERNAL,
            "copying input '%s' to the GPU failed: CUDA error %d", name, rc);
      }
    } else if (size > 0) {
      memcpy(dst + offset, src, size);
    }
    offset += size;
  }
  if (offset != byte_size) {
    return identity_error(
        TRITONSERVER_ERROR_INTERNAL,
        "buffers of input '%s' hold %llu bytes, its byte size is %llu", name,
        (unsigned long long)offset, (unsigned long long)byte_size);
  }
  return NULL;
}

/* Adds OUTPUT<n> to 'response' as a copy of INPUT<n>, if the request has
 * that input. */
static TRITONSERVER_Error*
add_output(
    const identity_instance* instance, TRITONBACKEND_Request* request,
    TRITONBACKEND_Response* response, const char* output_name)
{
  if (strncmp(output_name, "OUTPUT", 6) != 0) {
    return identity_error(
        TRITONSERVER_ERROR_INVALID_ARG,
        "identity backend: requested output '%s' is not named OUTPUT<n>",
        output_name);
  }
  char* input_name = malloc(strlen(output_name)); /* "INPUT" is 1 shorter */
  if (input_name == NULL) {
    return identity_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  }
  memcpy(input_name, "INPUT", 5);
  strcpy(input_name + 5, output_name + 6);

  TRITONBACKEND_Input* input = NULL;
  TRITONSERVER_Error* err = find_input(request, input_name, &input);
  if (err == NULL && input == NULL) {
    /* As Triton's identity: a requested output needs its input. A request
     * that names no outputs asks for all of them, so leaving out an
     * optional input means naming the outputs that are wanted. */
    err = identity_error(
        TRITONSERVER_ERROR_UNSUPPORTED, "failed to get input '%s'", input_name);
  }
  if (err == NULL) {
    TRITONSERVER_DataType datatype = TRITONSERVER_TYPE_INVALID;
    const int64_t* shape = NULL;
    uint32_t dims_count = 0, buffer_count = 0;
    uint64_t byte_size = 0;
    TRITONBACKEND_Output* output = NULL;
    void* dst = NULL;
    /* A GPU instance prefers its GPU's memory; the server may give host
     * memory instead. */
    const bool on_gpu = instance->kind == TRITONSERVER_INSTANCEGROUPKIND_GPU;
    TRITONSERVER_MemoryType type =
        on_gpu ? TRITONSERVER_MEMORY_GPU : TRITONSERVER_MEMORY_CPU;
    int64_t type_id = on_gpu ? instance->device_id : 0;
    err = TRITONBACKEND_InputProperties(
        input, NULL, &datatype, &shape, &dims_count, &byte_size, &buffer_count);
    if (err == NULL) {
      err = TRITONBACKEND_ResponseOutput(
          response, &output, output_name, datatype, shape, dims_count);
    }
    if (err == NULL) {
      err =
          TRITONBACKEND_OutputBuffer(output, &dst, byte_size, &type, &type_id);
    }
    if (err == NULL && type == TRITONSERVER_MEMORY_GPU &&
        instance->htod == NULL) {
      err = identity_error(
          TRITONSERVER_ERROR_UNSUPPORTED,
          "output '%s' got a GPU buffer but the instance has no CUDA driver",
          output_name);
    }
    if (err == NULL) {
      err = copy_input(
          input, input_name, buffer_count, dst, byte_size,
          type == TRITONSERVER_MEMORY_GPU ? instance->htod : NULL);
    }
  }
  free(input_name);
  return err;
}

/* The request's share of the batch: the first dim of its first input when
 * the model batches, else 1. */
static TRITONSERVER_Error*
request_batch_size(
    const identity_model* model, TRITONBACKEND_Request* request,
    uint64_t* batch_size)
{
  uint32_t count = 0;
  *batch_size = 1;
  if (model->max_batch_size <= 0) {
    return NULL;
  }
  RETURN_IF_ERROR(TRITONBACKEND_RequestInputCount(request, &count));
  if (count > 0) {
    TRITONBACKEND_Input* input = NULL;
    const int64_t* shape = NULL;
    uint32_t dims_count = 0;
    RETURN_IF_ERROR(TRITONBACKEND_RequestInputByIndex(request, 0, &input));
    RETURN_IF_ERROR(TRITONBACKEND_InputProperties(
        input, NULL, NULL, &shape, &dims_count, NULL, NULL));
    if (dims_count > 0 && shape[0] > 0) {
      *batch_size = (uint64_t)shape[0];
    }
  }
  return NULL;
}

/* Fills 'response' with every output the request asks for. */
static TRITONSERVER_Error*
fill_response(
    const identity_instance* instance, TRITONBACKEND_Request* request,
    TRITONBACKEND_Response* response)
{
  uint32_t count = 0;
  RETURN_IF_ERROR(TRITONBACKEND_RequestOutputCount(request, &count));
  for (uint32_t i = 0; i < count; i++) {
    const char* output_name = NULL;
    RETURN_IF_ERROR(TRITONBACKEND_RequestOutputName(request, i, &output_name));
    RETURN_IF_ERROR(add_output(instance, request, response, output_name));
  }
  return NULL;
}

/* Sends the request's one FINAL response; true if it carries no error. */
static bool
respond(
    const identity_instance* instance, TRITONBACKEND_Request* request,
    uint64_t* batch_size)
{
  const identity_model* model = instance->model;
  TRITONBACKEND_Response* response = NULL;
  TRITONSERVER_Error* err = TRITONBACKEND_ResponseNew(&response, request);
  if (err == NULL) {
    err = request_batch_size(model, request, batch_size);
  }
  if (err == NULL) {
    err = fill_response(instance, request, response);
  }
  if (err == NULL) {
    /* Response parameters, as Triton's identity attaches to show them. */
    IDENTITY_LOG_IF_ERROR(
        TRITONBACKEND_ResponseSetStringParameter(
            response, "param0", "an example string parameter"),
        "failed to set a string parameter");
    IDENTITY_LOG_IF_ERROR(
        TRITONBACKEND_ResponseSetIntParameter(response, "param1", 42),
        "failed to set an integer parameter");
    IDENTITY_LOG_IF_ERROR(
        TRITONBACKEND_ResponseSetBoolParameter(response, "param2", false),
        "failed to set a boolean parameter");
  }
  if (response != NULL) {
    /* On error, outputs already added are dropped with the response. */
    IDENTITY_LOG_IF_ERROR(
        TRITONBACKEND_ResponseSend(
            response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err),
        "failed to send response");
  }
  if (err != NULL) {
    IDENTITY_LOG_IF_ERROR(err, "identity request failed");
    return false;
  }
  return true;
}

void
identity_execute(
    identity_instance* instance, TRITONBACKEND_Request** requests,
    uint32_t request_count)
{
  /* The delay comes before the execution's timestamps, as in Triton's
   * identity: it shows as queue time. With instance_wise_delay_multiplier
   * set, instances on device d wait d times as long. */
  if (instance->model->execute_delay_ms > 0) {
    uint64_t multiplier = 1;
    if (instance->model->delay_multiplier > 0 && instance->device_id > 1) {
      multiplier = (uint64_t)instance->device_id;
    }
    sleep_ms(instance->model->execute_delay_ms * multiplier);
  }
  const uint64_t exec_start_ns = now_ns();
  const uint64_t compute_start_ns = now_ns();
  uint64_t total_batch_size = 0;
  for (uint32_t r = 0; r < request_count; r++) {
    uint64_t batch_size = 1;
    bool ok = respond(instance, requests[r], &batch_size);
    total_batch_size += batch_size;
    const uint64_t end_ns = now_ns();
    /* Statistics must be reported before the request is released. */
    IDENTITY_LOG_IF_ERROR(
        TRITONBACKEND_ModelInstanceReportStatistics(
            instance->instance, requests[r], ok, exec_start_ns,
            compute_start_ns, end_ns, end_ns),
        "failed to report request statistics");
    IDENTITY_LOG_IF_ERROR(
        TRITONBACKEND_RequestRelease(
            requests[r], TRITONSERVER_REQUEST_RELEASE_ALL),
        "failed to release request");
  }
  const uint64_t exec_end_ns = now_ns();
  if (request_count > 0) {
    IDENTITY_LOG_IF_ERROR(
        TRITONBACKEND_ModelInstanceReportBatchStatistics(
            instance->instance, total_batch_size, exec_start_ns,
            compute_start_ns, exec_end_ns, exec_end_ns),
        "failed to report batch statistics");
  }
}
