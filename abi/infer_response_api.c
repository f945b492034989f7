// TRITONSERVER_InferenceResponse* functions: reading a response delivered
// to a backend's response callback, and deleting it. How such a response is
// built is in infer_response_build.c. Pure C.
#include <stdlib.h>
#include <string.h>

#include "inprocess.h"

#define RESPONSE(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_INFER_RESPONSE, "inference response")

TRITONSERVER_Error*
TRITONSERVER_InferenceResponseDelete(
    TRITONSERVER_InferenceResponse* inference_response)
{
  if (inference_response == NULL)
    return NULL;  // as deleting a null pointer in Triton
  struct thost_infer_response* r;
  RESPONSE(r, inference_response);
  thost_iresp_free(r);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceResponseError(
    TRITONSERVER_InferenceResponse* inference_response)
{
  struct thost_infer_response* r;
  RESPONSE(r, inference_response);
  // A new error on every call, which the caller owns and deletes, as in
  // Triton: backends delete it and then the response, so handing out the
  // response's own error would free it twice.
  if (r->error == NULL)
    return NULL;
  return TRITONSERVER_ErrorNew(r->error->code, r->error->msg);
}

TRITONSERVER_Error*
TRITONSERVER_InferenceResponseModel(
    TRITONSERVER_InferenceResponse* inference_response, const char** model_name,
    int64_t* model_version)
{
  struct thost_infer_response* r;
  RESPONSE(r, inference_response);
  THOST_CHECK_ARG(
      model_name != NULL && model_version != NULL,
      "model_name or model_version is NULL");
  *model_name = r->model_name;
  *model_version = r->model_version;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceResponseId(
    TRITONSERVER_InferenceResponse* inference_response, const char** request_id)
{
  struct thost_infer_response* r;
  RESPONSE(r, inference_response);
  THOST_CHECK_ARG(request_id != NULL, "request_id is NULL");
  *request_id = r->id;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceResponseParameterCount(
    TRITONSERVER_InferenceResponse* inference_response, uint32_t* count)
{
  struct thost_infer_response* r;
  RESPONSE(r, inference_response);
  THOST_CHECK_ARG(count != NULL, "count is NULL");
  *count = r->param_count;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceResponseParameter(
    TRITONSERVER_InferenceResponse* inference_response, const uint32_t index,
    const char** name, TRITONSERVER_ParameterType* type, const void** vvalue)
{
  struct thost_infer_response* r;
  RESPONSE(r, inference_response);
  THOST_CHECK_ARG(
      name != NULL && type != NULL && vvalue != NULL,
      "name, type or vvalue is NULL");
  if (index >= r->param_count) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "out of bounds index %u: response has %u parameters", index,
        r->param_count);
  }
  struct thost_iresp_param* p = &r->params[index];
  *name = p->name;
  *type = p->type;
  switch (p->type) {
    case TRITONSERVER_PARAMETER_STRING:
      *vvalue = p->s;
      break;
    case TRITONSERVER_PARAMETER_INT:
      *vvalue = &p->i;
      break;
    case TRITONSERVER_PARAMETER_BOOL:
      *vvalue = &p->b;
      break;
    default:
      *vvalue = &p->d;
      break;
  }
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceResponseOutputCount(
    TRITONSERVER_InferenceResponse* inference_response, uint32_t* count)
{
  struct thost_infer_response* r;
  RESPONSE(r, inference_response);
  THOST_CHECK_ARG(count != NULL, "count is NULL");
  *count = r->output_count;
  return NULL;
}

static TRITONSERVER_Error*
out_of_bounds(uint32_t index, uint32_t count)
{
  return thost_errorf(
      TRITONSERVER_ERROR_INVALID_ARG,
      "out of bounds index %u: response has %u outputs", index, count);
}

TRITONSERVER_Error*
TRITONSERVER_InferenceResponseOutput(
    TRITONSERVER_InferenceResponse* inference_response, const uint32_t index,
    const char** name, TRITONSERVER_DataType* datatype, const int64_t** shape,
    uint64_t* dim_count, const void** base, size_t* byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id, void** userp)
{
  struct thost_infer_response* r;
  RESPONSE(r, inference_response);
  THOST_CHECK_ARG(
      name != NULL && datatype != NULL && shape != NULL && dim_count != NULL &&
          base != NULL && byte_size != NULL && memory_type != NULL &&
          memory_type_id != NULL && userp != NULL,
      "NULL argument");
  if (index >= r->output_count)
    return out_of_bounds(index, r->output_count);
  struct thost_iresp_output* o = &r->outputs[index];
  *name = o->name;
  *datatype = o->datatype;
  *shape = o->shape;
  *dim_count = o->dims_count;
  *base = o->base;
  *byte_size = o->byte_size;
  *memory_type = o->memory_type;
  *memory_type_id = o->memory_type_id;
  *userp = o->buffer_userp;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceResponseOutputClassificationLabel(
    TRITONSERVER_InferenceResponse* inference_response, const uint32_t index,
    const size_t class_index, const char** label)
{
  struct thost_infer_response* r;
  RESPONSE(r, inference_response);
  THOST_CHECK_ARG(label != NULL, "label is NULL");
  if (index >= r->output_count)
    return out_of_bounds(index, r->output_count);
  (void)class_index;  // no label files are loaded: every class has no label
  *label = NULL;
  return NULL;
}
