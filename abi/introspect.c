// TRITONBACKEND_* functions that read back what a request or a response
// under construction carries, and the memory-usage reports. Pure C except
// the reports, which cross into Go once per call.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "handles.h"

TRITONSERVER_Error* TRITONBACKEND_InferenceRequestTimeoutMicroseconds(TRITONBACKEND_Request* request,
                                                                      uint64_t* timeout) {
  THOST_CHECK_HANDLE(request, THOST_MAGIC_REQUEST, "request");
  THOST_CHECK_ARG(timeout != NULL, "timeout is NULL");
  *timeout = request->timeout_us;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_InferenceResponseOutput(
    TRITONBACKEND_Response* response, const uint32_t index, const char** name, TRITONSERVER_DataType* datatype,
    const int64_t** shape, uint64_t* dim_count) {
  THOST_CHECK_HANDLE(response, THOST_MAGIC_RESPONSE, "response");
  THOST_CHECK_ARG(name != NULL && datatype != NULL && shape != NULL && dim_count != NULL, "NULL argument");
  if (index >= response->output_count) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG, "output index %u is out of range, the response has %u outputs",
                        index, response->output_count);
  }
  const TRITONBACKEND_Output* out = response->outputs[index];
  *name = out->name;
  *datatype = out->datatype;
  *shape = out->shape;
  *dim_count = out->dims_count;
  return NULL;
}

// Copies the caller's buffer attributes into a plain array for Go; NULL and
// invalid memory types are refused before anything is recorded.
static TRITONSERVER_Error* report_usage(int owner, uint64_t key, TRITONSERVER_BufferAttributes** usage,
                                        uint32_t usage_size) {
  THOST_CHECK_ARG(usage != NULL || usage_size == 0, "usage is NULL");
  struct thost_usage* list = NULL;
  if (usage_size > 0) {
    list = calloc(usage_size, sizeof(*list));
    if (list == NULL) return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  }
  for (uint32_t i = 0; i < usage_size; i++) {
    const TRITONSERVER_BufferAttributes* a = usage[i];
    if (a == NULL || (unsigned)a->memory_type > TRITONSERVER_MEMORY_GPU) {
      free(list);
      return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG, "memory usage entry %u is NULL or has an invalid memory type", i);
    }
    list[i].memory_type = (int32_t)a->memory_type;
    list[i].memory_type_id = a->memory_type_id;
    list[i].byte_size = a->byte_size;
  }
  TRITONSERVER_Error* err = thostReportMemoryUsage(owner, key, list, usage_size);
  free(list);
  return err;
}

TRITONSERVER_Error* TRITONBACKEND_ModelReportMemoryUsage(TRITONBACKEND_Model* model,
                                                         TRITONSERVER_BufferAttributes** usage, uint32_t usage_size) {
  THOST_CHECK_HANDLE(model, THOST_MAGIC_MODEL, "model");
  return report_usage(0, model->key, usage, usage_size);
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceReportMemoryUsage(TRITONBACKEND_ModelInstance* instance,
                                                                 TRITONSERVER_BufferAttributes** usage,
                                                                 uint32_t usage_size) {
  THOST_CHECK_HANDLE(instance, THOST_MAGIC_INSTANCE, "model instance");
  return report_usage(1, instance->key, usage, usage_size);
}
