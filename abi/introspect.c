// TRITONBACKEND_* functions that read back what a request or a response
// under construction carries, and the memory-usage reports. Pure C except
// the reports, which cross into Go once per call.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "objects.h"

TRITONSERVER_Error*
TRITONBACKEND_InferenceRequestTimeoutMicroseconds(
    TRITONBACKEND_Request* request, uint64_t* timeout)
{
  struct thost_request* r;
  THOST_OBJECT(r, request, THOST_KIND_REQUEST, "request");
  THOST_CHECK_ARG(timeout != NULL, "timeout is NULL");
  *timeout = r->timeout_us;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_InferenceResponseOutput(
    TRITONBACKEND_Response* response, const uint32_t index, const char** name,
    TRITONSERVER_DataType* datatype, const int64_t** shape, uint64_t* dim_count)
{
  struct thost_response* r;
  THOST_OBJECT(r, response, THOST_KIND_RESPONSE, "response");
  THOST_CHECK_ARG(
      name != NULL && datatype != NULL && shape != NULL && dim_count != NULL,
      "NULL argument");
  if (index >= r->output_count) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "output index %u is out of range, the response has %u outputs", index,
        r->output_count);
  }
  const struct thost_output* out = r->outputs[index];
  *name = out->name;
  *datatype = out->datatype;
  *shape = out->shape;
  *dim_count = out->dims_count;
  return NULL;
}

// Copies the caller's buffer attributes into a plain array for Go; NULL,
// invalid handles and invalid memory types are refused before anything is
// recorded.
static TRITONSERVER_Error*
report_usage(
    struct thost_host* host, int owner, uint64_t key,
    TRITONSERVER_BufferAttributes** usage, uint32_t usage_size)
{
  THOST_CHECK_ARG(usage != NULL || usage_size == 0, "usage is NULL");
  struct thost_usage* list = NULL;
  if (usage_size > 0) {
    list = calloc(usage_size, sizeof(*list));
    if (list == NULL)
      return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  }
  for (uint32_t i = 0; i < usage_size; i++) {
    const struct thost_buffer_attributes* a =
        thost_handle_object(usage[i], THOST_KIND_BUFFER_ATTRIBUTES);
    if (a == NULL || (unsigned)a->memory_type > TRITONSERVER_MEMORY_GPU) {
      free(list);
      return thost_errorf(
          TRITONSERVER_ERROR_INVALID_ARG,
          "memory usage entry %u is not valid buffer attributes or has an "
          "invalid memory type",
          i);
    }
    list[i].memory_type = (int32_t)a->memory_type;
    list[i].memory_type_id = a->memory_type_id;
    list[i].byte_size = a->byte_size;
  }
  TRITONSERVER_Error* err =
      thostReportMemoryUsage(host, owner, key, list, usage_size);
  free(list);
  return err;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelReportMemoryUsage(
    TRITONBACKEND_Model* model, TRITONSERVER_BufferAttributes** usage,
    uint32_t usage_size)
{
  struct thost_model* m;
  THOST_OBJECT(m, model, THOST_KIND_MODEL, "model");
  return report_usage(m->backend->host, 0, m->key, usage, usage_size);
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceReportMemoryUsage(
    TRITONBACKEND_ModelInstance* instance,
    TRITONSERVER_BufferAttributes** usage, uint32_t usage_size)
{
  struct thost_instance* i;
  THOST_OBJECT(i, instance, THOST_KIND_INSTANCE, "model instance");
  return report_usage(i->model->backend->host, 1, i->key, usage, usage_size);
}
