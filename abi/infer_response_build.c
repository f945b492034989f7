// How a response reaches a backend that submitted a request: the outputs
// of the serving backend's response are taken out of it when it is sent
// (thost_output_set_take; their buffers came from the submitter's
// allocator, so nothing is copied), then Go builds the delivered response
// from what the server kept of it (inprocess_response.go), or, for a
// response the server holds in its own memory, copies each output into a
// buffer of the submitter's allocator. Deleting a delivered response hands
// each buffer back to the allocator (thost_iresp_free). The accessors are
// in infer_response_api.c. Pure C.
#include <stdlib.h>
#include <string.h>

#include "inprocess.h"

// ---- Outputs taken from a serving backend's response ------------------------

void
thost_iresp_output_free(struct thost_iresp_output* o)
{
  if (o->allocated) {
    thost_log_caller_error(
        "failed to release an output buffer",
        o->release_fn(
            THOST_AS_HANDLE(TRITONSERVER_ResponseAllocator, o->allocator),
            o->base, o->buffer_userp, o->byte_size, o->memory_type,
            o->memory_type_id));
    o->allocated = false;
  }
  free(o->name);
  free(o->shape);
  o->name = NULL;
  o->shape = NULL;
}

struct thost_output_set*
thost_output_set_take(struct thost_response* r)
{
  if (r->output_count == 0)
    return NULL;
  struct thost_output_set* set =
      thost_zalloc(sizeof(*set) + r->output_count * sizeof(set->items[0]));
  if (set == NULL)
    return NULL;
  for (uint32_t i = 0; i < r->output_count; i++) {
    struct thost_output* out = r->outputs[i];
    struct thost_iresp_output* it = &set->items[i];
    it->name = strdup(out->name);
    it->shape =
        malloc((out->dims_count ? out->dims_count : 1) * sizeof(int64_t));
    if (it->name == NULL || it->shape == NULL) {
      set->count = i + 1;
      thost_output_set_free(set);  // nothing taken yet: buffers stay in r
      return NULL;
    }
    memcpy(it->shape, out->shape, out->dims_count * sizeof(int64_t));
    it->dims_count = out->dims_count;
    it->datatype = out->datatype;
    it->memory_type = out->attrs.memory_type;
    it->memory_type_id = out->attrs.memory_type_id;
  }
  // Every copy succeeded: now move the buffers, so response_free leaves them.
  for (uint32_t i = 0; i < r->output_count; i++) {
    struct thost_output* out = r->outputs[i];
    struct thost_iresp_output* it = &set->items[i];
    if (out->caller_buffer) {
      it->base = out->buffer;
      it->byte_size = (size_t)out->byte_size;
      it->buffer_userp = out->buffer_userp;
      it->allocated = true;
      it->allocator = out->caller->allocator;
      it->release_fn = out->caller->release_fn;
      out->caller_buffer = false;
      out->buffer = NULL;
    }
  }
  set->count = r->output_count;
  return set;
}

void
thost_output_set_free(struct thost_output_set* set)
{
  if (set == NULL)
    return;
  for (uint32_t i = 0; i < set->count; i++)
    thost_iresp_output_free(&set->items[i]);
  free(set);
}

// ---- Building a delivered response ------------------------------------------

struct thost_infer_response*
thost_iresp_new(
    struct thost_host* host, const char* model, size_t model_len,
    int64_t version, const char* id, size_t id_len, uint32_t outputs,
    uint32_t params)
{
  struct thost_infer_response* r = thost_zalloc(sizeof(*r));
  if (r == NULL)
    return NULL;
  r->model_name = thost_strndup(model, model_len);
  r->id = thost_strndup(id, id_len);
  r->outputs = thost_zalloc((outputs ? outputs : 1) * sizeof(*r->outputs));
  r->params = thost_zalloc((params ? params : 1) * sizeof(*r->params));
  r->handle = thost_handle_new(THOST_KIND_INFER_RESPONSE, r);
  if (r->model_name == NULL || r->id == NULL || r->outputs == NULL ||
      r->params == NULL || r->handle == 0) {
    thost_handle_free(r->handle);
    free(r->model_name);
    free(r->id);
    free(r->outputs);
    free(r->params);
    free(r);
    return NULL;
  }
  r->output_cap = outputs;
  r->param_cap = params;
  r->model_version = version;
  r->host = host;
  thost_count(host, THOST_COUNT_INFER_RESPONSE, 1);
  return r;
}

void
thost_iresp_set_error(
    struct thost_infer_response* r, int code, const char* msg, size_t len)
{
  TRITONSERVER_ErrorDelete(r->error);
  r->error = thost_error_new_n((TRITONSERVER_Error_Code)code, msg, len);
}

bool
thost_iresp_take_output(
    struct thost_infer_response* r, struct thost_output_set* set,
    const char* name, size_t name_len, const int64_t* shape, uint32_t dims)
{
  if (set == NULL || r->output_count == r->output_cap)
    return false;
  for (uint32_t i = 0; i < set->count; i++) {
    struct thost_iresp_output* it = &set->items[i];
    if (it->name == NULL || strlen(it->name) != name_len ||
        memcmp(it->name, name, name_len) != 0)
      continue;
    int64_t* s = malloc((dims ? dims : 1) * sizeof(int64_t));
    if (s == NULL)
      return false;
    memcpy(s, shape, dims * sizeof(int64_t));  // the server's (reshaped) shape
    free(it->shape);
    it->shape = s;
    it->dims_count = dims;
    r->outputs[r->output_count++] = *it;
    thost_clear(it, sizeof(*it));  // moved: the set no longer owns it
    return true;
  }
  return false;
}

TRITONSERVER_Error*
thost_iresp_copy_output(
    struct thost_infer_response* r, const struct thost_caller_alloc* alloc,
    bool start, const char* name, size_t name_len, int datatype,
    const int64_t* shape, uint32_t dims, const char* data, size_t size)
{
  if (r->output_count == r->output_cap)
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "too many outputs");
  struct thost_iresp_output o = {
      .datatype = (TRITONSERVER_DataType)datatype,
      .dims_count = dims,
      .byte_size = size,
      .memory_type = TRITONSERVER_MEMORY_CPU,
      .allocator = alloc->allocator,
      .release_fn = alloc->release_fn,
  };
  o.name = thost_strndup(name, name_len);
  o.shape = malloc((dims ? dims : 1) * sizeof(int64_t));
  if (o.name == NULL || o.shape == NULL) {
    thost_iresp_output_free(&o);
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  }
  memcpy(o.shape, shape, dims * sizeof(int64_t));
  TRITONSERVER_ResponseAllocator* a =
      THOST_AS_HANDLE(TRITONSERVER_ResponseAllocator, alloc->allocator);
  if (start && alloc->start_fn != NULL) {
    thost_log_caller_error(
        "response allocation start failed", alloc->start_fn(a, alloc->userp));
  }
  TRITONSERVER_Error* err = alloc->alloc_fn(
      a, o.name, size, TRITONSERVER_MEMORY_CPU, 0, alloc->userp, &o.base,
      &o.buffer_userp, &o.memory_type, &o.memory_type_id);
  if (err != NULL) {
    thost_iresp_output_free(&o);
    return err;
  }
  o.allocated = o.base != NULL;
  if (size > 0 &&
      (o.base == NULL || o.memory_type == TRITONSERVER_MEMORY_GPU)) {
    err = thost_errorf(
        TRITONSERVER_ERROR_UNSUPPORTED,
        "output '%s': the response allocator gave %s for %zu bytes; the "
        "server copies this output on the CPU",
        o.name, o.base == NULL ? "no buffer" : "GPU memory", size);
    thost_iresp_output_free(&o);
    return err;
  }
  if (size > 0)
    memcpy(o.base, data, size);
  r->outputs[r->output_count++] = o;
  return NULL;
}

void
thost_iresp_add_param(
    struct thost_infer_response* r, const char* name, size_t name_len, int type,
    const char* s, size_t s_len, int64_t i, bool b, double d)
{
  if (r->param_count == r->param_cap)
    return;
  struct thost_iresp_param p = {
      .type = (TRITONSERVER_ParameterType)type, .i = i, .b = b, .d = d};
  p.name = thost_strndup(name, name_len);
  if (type == TRITONSERVER_PARAMETER_STRING)
    p.s = thost_strndup(s, s_len);
  if (p.name == NULL ||
      (type == TRITONSERVER_PARAMETER_STRING && p.s == NULL)) {
    free(p.name);
    free(p.s);
    return;  // out of memory: the parameter is left out
  }
  r->params[r->param_count++] = p;
}

void
thost_iresp_free(struct thost_infer_response* r)
{
  for (uint32_t i = 0; i < r->output_count; i++)
    thost_iresp_output_free(&r->outputs[i]);
  for (uint32_t i = 0; i < r->param_count; i++) {
    free(r->params[i].name);
    free(r->params[i].s);
  }
  TRITONSERVER_ErrorDelete(r->error);
  thost_handle_free(r->handle);
  thost_count(r->host, THOST_COUNT_INFER_RESPONSE, -1);
  free(r->outputs);
  free(r->params);
  free(r->model_name);
  free(r->id);
  free(r);
}
