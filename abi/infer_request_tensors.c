// TRITONSERVER_InferenceRequest* functions on inputs, their data and the
// requested outputs. Names and shapes are copied; input data is not (the
// caller keeps it valid until the release callback, see tritonserver.h).
// Pure C.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "infer_request.h"

// Makes room for one more element of 'size' bytes in *array; false when out
// of memory.
static bool
grow(void** array, uint32_t* cap, uint32_t count, size_t size)
{
  if (count < *cap)
    return true;
  uint32_t n = *cap ? *cap * 2 : 4;
  void* p = realloc(*array, n * size);
  if (p == NULL)
    return false;
  *array = p;
  *cap = n;
  return true;
}

static struct thost_ireq_input*
find_input(struct thost_infer_request* r, const char* name)
{
  for (uint32_t i = 0; i < r->input_count; i++) {
    if (strcmp(r->inputs[i].name, name) == 0)
      return &r->inputs[i];
  }
  return NULL;
}

static TRITONSERVER_Error*
no_input(const char* fn, const char* name)
{
  return thost_errorf(
      TRITONSERVER_ERROR_INVALID_ARG,
      "%s: input '%s' does not exist in request", fn, name);
}

static void
clear_buffers(struct thost_ireq_input* in)
{
  for (uint32_t k = 0; k < in->buffer_count; k++)
    free(in->buffers[k].host_policy);
  in->buffer_count = 0;
}

static void
free_input(struct thost_ireq_input* in)
{
  clear_buffers(in);
  free(in->buffers);
  free(in->shape);
  free(in->name);
}

void
thost_ireq_clear_inputs(struct thost_infer_request* r)
{
  for (uint32_t i = 0; i < r->input_count; i++) free_input(&r->inputs[i]);
  r->input_count = 0;
}

void
thost_ireq_clear_outputs(struct thost_infer_request* r)
{
  for (uint32_t i = 0; i < r->output_count; i++) free(r->outputs[i]);
  r->output_count = 0;
}

// Adds an input without data; raw inputs take no type or shape.
static TRITONSERVER_Error*
add_input(
    struct thost_infer_request* r, const char* fn, const char* name, bool raw,
    TRITONSERVER_DataType datatype, const int64_t* shape, uint64_t dims)
{
  if (find_input(r, name) != NULL) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: input '%s' already exists in request", fn, name);
  }
  if (r->input_count > 0 && (raw || r->inputs[0].raw)) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: a raw input must be the only input of a request", fn);
  }
  if (dims > UINT32_MAX)
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG, "%s: too many dimensions", fn);
  if (!grow(
          (void**)&r->inputs, &r->input_cap, r->input_count,
          sizeof(*r->inputs)))
    return out_of_memory(fn);
  struct thost_ireq_input in = {.raw = raw, .datatype = datatype};
  in.name = strdup(name);
  in.shape = malloc((dims > 0 ? dims : 1) * sizeof(int64_t));
  if (in.name == NULL || in.shape == NULL) {
    free_input(&in);
    return out_of_memory(fn);
  }
  if (dims > 0)
    memcpy(in.shape, shape, dims * sizeof(int64_t));
  in.dims_count = (uint32_t)dims;
  r->inputs[r->input_count++] = in;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestAddInput(
    TRITONSERVER_InferenceRequest* inference_request, const char* name,
    const TRITONSERVER_DataType datatype, const int64_t* shape,
    uint64_t dim_count)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  THOST_CHECK_ARG(shape != NULL || dim_count == 0, "shape is NULL");
  THOST_CHECK_ARG(
      datatype > TRITONSERVER_TYPE_INVALID &&
          datatype <= TRITONSERVER_TYPE_BF16,
      "invalid datatype");
  MUTABLE(r);
  return add_input(r, __func__, name, false, datatype, shape, dim_count);
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestAddRawInput(
    TRITONSERVER_InferenceRequest* inference_request, const char* name)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  MUTABLE(r);
  return add_input(r, __func__, name, true, TRITONSERVER_TYPE_INVALID, NULL, 0);
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestRemoveInput(
    TRITONSERVER_InferenceRequest* inference_request, const char* name)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  MUTABLE(r);
  struct thost_ireq_input* in = find_input(r, name);
  if (in == NULL)
    return no_input(__func__, name);
  free_input(in);
  *in = r->inputs[--r->input_count];
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestRemoveAllInputs(
    TRITONSERVER_InferenceRequest* inference_request)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  MUTABLE(r);
  thost_ireq_clear_inputs(r);
  return NULL;
}

// ---- Input data -------------------------------------------------------------

static TRITONSERVER_Error*
append_data(
    struct thost_infer_request* r, const char* fn, const char* name,
    const void* base, size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id, const char* host_policy)
{
  struct thost_ireq_input* in = find_input(r, name);
  if (in == NULL)
    return no_input(fn, name);
  switch (memory_type) {
    case TRITONSERVER_MEMORY_CPU:
    case TRITONSERVER_MEMORY_CPU_PINNED:
      break;
    case TRITONSERVER_MEMORY_GPU:
      return thost_errorf(
          TRITONSERVER_ERROR_UNSUPPORTED,
          "%s: input '%s': data in GPU memory is not supported for requests "
          "backends submit; pass CPU memory",
          fn, name);
    default:
      return thost_errorf(
          TRITONSERVER_ERROR_INVALID_ARG,
          "%s: input '%s': unknown memory type %d", fn, name, (int)memory_type);
  }
  (void)memory_type_id;  // 0 for CPU memory; nothing depends on it
  if (!grow(
          (void**)&in->buffers, &in->buffer_cap, in->buffer_count,
          sizeof(*in->buffers)))
    return out_of_memory(fn);
  struct thost_ireq_buffer b = {
      .base = base,
      .byte_size = byte_size,
      .memory_type = memory_type,
      .memory_type_id = memory_type_id,
  };
  if (host_policy != NULL && (b.host_policy = strdup(host_policy)) == NULL)
    return out_of_memory(fn);
  in->buffers[in->buffer_count++] = b;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestAppendInputData(
    TRITONSERVER_InferenceRequest* inference_request, const char* name,
    const void* base, size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  THOST_CHECK_ARG(base != NULL || byte_size == 0, "base is NULL");
  MUTABLE(r);
  return append_data(
      r, __func__, name, base, byte_size, memory_type, memory_type_id, NULL);
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy(
    TRITONSERVER_InferenceRequest* inference_request, const char* name,
    const void* base, size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id, const char* host_policy_name)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(
      name != NULL && host_policy_name != NULL,
      "name or host_policy_name is NULL");
  THOST_CHECK_ARG(base != NULL || byte_size == 0, "base is NULL");
  MUTABLE(r);
  return append_data(
      r, __func__, name, base, byte_size, memory_type, memory_type_id,
      host_policy_name);
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(
    TRITONSERVER_InferenceRequest* inference_request, const char* name,
    const void* base, TRITONSERVER_BufferAttributes* buffer_attributes)
{
  struct thost_infer_request* r;
  struct thost_buffer_attributes* a;
  REQUEST(r, inference_request);
  THOST_OBJECT(
      a, buffer_attributes, THOST_KIND_BUFFER_ATTRIBUTES, "buffer_attributes");
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  THOST_CHECK_ARG(base != NULL || a->byte_size == 0, "base is NULL");
  MUTABLE(r);
  return append_data(
      r, __func__, name, base, (size_t)a->byte_size, a->memory_type,
      a->memory_type_id, NULL);
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestRemoveAllInputData(
    TRITONSERVER_InferenceRequest* inference_request, const char* name)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  MUTABLE(r);
  struct thost_ireq_input* in = find_input(r, name);
  if (in == NULL)
    return no_input(__func__, name);
  clear_buffers(in);
  return NULL;
}

// ---- Requested outputs ------------------------------------------------------

static int64_t
find_output(struct thost_infer_request* r, const char* name)
{
  for (uint32_t i = 0; i < r->output_count; i++) {
    if (strcmp(r->outputs[i], name) == 0)
      return i;
  }
  return -1;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestAddRequestedOutput(
    TRITONSERVER_InferenceRequest* inference_request, const char* name)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  MUTABLE(r);
  if (find_output(r, name) >= 0)
    return NULL;  // a set in Triton: asking twice is asking once
  if (!grow(
          (void**)&r->outputs, &r->output_cap, r->output_count,
          sizeof(*r->outputs)))
    return out_of_memory(__func__);
  if ((r->outputs[r->output_count] = strdup(name)) == NULL)
    return out_of_memory(__func__);
  r->output_count++;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestRemoveRequestedOutput(
    TRITONSERVER_InferenceRequest* inference_request, const char* name)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  MUTABLE(r);
  int64_t i = find_output(r, name);
  if (i < 0) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: output '%s' does not exist in request", __func__, name);
  }
  free(r->outputs[i]);
  memmove(
      &r->outputs[i], &r->outputs[i + 1],
      (r->output_count - (uint32_t)i - 1) * sizeof(*r->outputs));
  r->output_count--;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs(
    TRITONSERVER_InferenceRequest* inference_request)
{
  struct thost_infer_request* r;
  REQUEST(r, inference_request);
  MUTABLE(r);
  thost_ireq_clear_outputs(r);
  return NULL;
}
