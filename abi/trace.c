// TRITONSERVER_InferenceTrace* functions. A trace is either the trace of a
// request a backend serves (TRITONBACKEND_RequestTrace: inside the request
// block, it lives until the request is released) or a trace a caller owns
// (TraceNew, TraceTensorNew, SpawnChildTrace: malloc'd here, with a Go
// record in traces.go holding its core.Trace). The getters are pure C;
// creating, spawning, activities and contexts cross into Go, as does the
// end of a traced request (inprocess.go), which calls the callbacks below.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "inprocess.h"

#define TRACE(var, h)           \
  THOST_OBJECT(                 \
      var, h, THOST_KIND_TRACE, \
      "trace (deleted, or the request it follows was released)")

const char*
TRITONSERVER_InferenceTraceLevelString(TRITONSERVER_InferenceTraceLevel level)
{
  switch (level) {
    case TRITONSERVER_TRACE_LEVEL_DISABLED:
      return "DISABLED";
    case TRITONSERVER_TRACE_LEVEL_MIN:
      return "MIN";
    case TRITONSERVER_TRACE_LEVEL_MAX:
      return "MAX";
    case TRITONSERVER_TRACE_LEVEL_TIMESTAMPS:
      return "TIMESTAMPS";
    case TRITONSERVER_TRACE_LEVEL_TENSORS:
      return "TENSORS";
  }
  return "<unknown>";
}

const char*
TRITONSERVER_InferenceTraceActivityString(
    TRITONSERVER_InferenceTraceActivity activity)
{
  switch (activity) {
    case TRITONSERVER_TRACE_REQUEST_START:
      return "REQUEST_START";
    case TRITONSERVER_TRACE_QUEUE_START:
      return "QUEUE_START";
    case TRITONSERVER_TRACE_COMPUTE_START:
      return "COMPUTE_START";
    case TRITONSERVER_TRACE_COMPUTE_INPUT_END:
      return "COMPUTE_INPUT_END";
    case TRITONSERVER_TRACE_COMPUTE_OUTPUT_START:
      return "COMPUTE_OUTPUT_START";
    case TRITONSERVER_TRACE_COMPUTE_END:
      return "COMPUTE_END";
    case TRITONSERVER_TRACE_REQUEST_END:
      return "REQUEST_END";
    case TRITONSERVER_TRACE_TENSOR_QUEUE_INPUT:
      return "TENSOR_QUEUE_INPUT";
    case TRITONSERVER_TRACE_TENSOR_BACKEND_INPUT:
      return "TENSOR_BACKEND_INPUT";
    case TRITONSERVER_TRACE_TENSOR_BACKEND_OUTPUT:
      return "TENSOR_BACKEND_OUTPUT";
    case TRITONSERVER_TRACE_CUSTOM_ACTIVITY:
      return "CUSTOM_ACTIVITY";
  }
  return "<unknown>";
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceReportActivity(
    TRITONSERVER_InferenceTrace* trace, uint64_t timestamp,
    const char* activity_name)
{
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(activity_name != NULL, "activity_name is NULL");
  return thostTraceActivity(t, timestamp, (char*)activity_name);
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceId(TRITONSERVER_InferenceTrace* trace, uint64_t* id)
{
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(id != NULL, "id is NULL");
  *id = t->id;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceParentId(
    TRITONSERVER_InferenceTrace* trace, uint64_t* parent_id)
{
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(parent_id != NULL, "parent_id is NULL");
  *parent_id = t->parent_id;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceModelName(
    TRITONSERVER_InferenceTrace* trace, const char** model_name)
{
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(model_name != NULL, "model_name is NULL");
  *model_name = t->model_name;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceModelVersion(
    TRITONSERVER_InferenceTrace* trace, int64_t* model_version)
{
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(model_version != NULL, "model_version is NULL");
  *model_version = t->model_version;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceRequestId(
    TRITONSERVER_InferenceTrace* trace, const char** request_id)
{
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(request_id != NULL, "request_id is NULL");
  *request_id = t->request_id;
  return NULL;
}

// ---- Traces a caller owns ---------------------------------------------------

// Frees a standalone trace: its Go record, handle, strings and memory.
static void
trace_free(struct thost_trace* t)
{
  thostTraceForget(t->key);
  thost_handle_free(t->handle);
  free((char*)t->model_name);
  free((char*)t->request_id);
  free((char*)t->context);
  free(t);
}

// A new standalone trace with empty strings and a handle; NULL when memory
// or handles run out. The caller fills in the rest, then registers it in Go.
static struct thost_trace*
trace_alloc(void)
{
  struct thost_trace* t = calloc(1, sizeof(*t));
  if (t == NULL)
    return NULL;
  t->standalone = true;
  t->model_name = strdup("");
  t->request_id = strdup("");
  t->context = strdup("");
  t->handle = thost_handle_new(THOST_KIND_TRACE, t);
  if (t->model_name == NULL || t->request_id == NULL || t->context == NULL ||
      t->handle == 0) {
    thost_handle_free(t->handle);
    free((char*)t->model_name);
    free((char*)t->request_id);
    free((char*)t->context);
    free(t);
    return NULL;
  }
  return t;
}

// The obsolete MIN and MAX levels count as TIMESTAMPS, as in Triton.
static TRITONSERVER_InferenceTraceLevel
normalized_level(TRITONSERVER_InferenceTraceLevel level)
{
  unsigned l = (unsigned)level;
  if (l & (TRITONSERVER_TRACE_LEVEL_MIN | TRITONSERVER_TRACE_LEVEL_MAX))
    l = (l &
         ~(unsigned)(TRITONSERVER_TRACE_LEVEL_MIN | TRITONSERVER_TRACE_LEVEL_MAX)) |
        TRITONSERVER_TRACE_LEVEL_TIMESTAMPS;
  return (TRITONSERVER_InferenceTraceLevel)l;
}

static TRITONSERVER_Error*
trace_new(
    const char* fn, TRITONSERVER_InferenceTrace** trace,
    TRITONSERVER_InferenceTraceLevel level, uint64_t parent_id,
    TRITONSERVER_InferenceTraceActivityFn_t activity_fn,
    TRITONSERVER_InferenceTraceTensorActivityFn_t tensor_fn,
    TRITONSERVER_InferenceTraceReleaseFn_t release_fn, void* userp)
{
  if (trace == NULL || release_fn == NULL) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG, "%s: %s is NULL", fn,
        trace == NULL ? "trace" : "release_fn");
  }
  struct thost_trace* t = trace_alloc();
  if (t == NULL)
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", fn);
  t->level = normalized_level(level);
  t->activity_fn = activity_fn;
  t->tensor_fn = tensor_fn;
  t->release_fn = release_fn;
  t->userp = userp;
  t->parent_id = parent_id;
  thostTraceNew(t, parent_id);
  *trace = THOST_AS_HANDLE(TRITONSERVER_InferenceTrace, t->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceNew(
    TRITONSERVER_InferenceTrace** trace, TRITONSERVER_InferenceTraceLevel level,
    uint64_t parent_id, TRITONSERVER_InferenceTraceActivityFn_t activity_fn,
    TRITONSERVER_InferenceTraceReleaseFn_t release_fn, void* trace_userp)
{
  return trace_new(
      __func__, trace, level, parent_id, activity_fn, NULL, release_fn,
      trace_userp);
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceTensorNew(
    TRITONSERVER_InferenceTrace** trace, TRITONSERVER_InferenceTraceLevel level,
    uint64_t parent_id, TRITONSERVER_InferenceTraceActivityFn_t activity_fn,
    TRITONSERVER_InferenceTraceTensorActivityFn_t tensor_activity_fn,
    TRITONSERVER_InferenceTraceReleaseFn_t release_fn, void* trace_userp)
{
  return trace_new(
      __func__, trace, level, parent_id, activity_fn, tensor_activity_fn,
      release_fn, trace_userp);
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceDelete(TRITONSERVER_InferenceTrace* trace)
{
  if (trace == NULL)
    return NULL;  // as deleting a null pointer in Triton
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(
      t->standalone,
      "the trace of a request a backend serves belongs to the server");
  THOST_CHECK_ARG(
      __atomic_load_n(&t->in_flight, __ATOMIC_ACQUIRE) == 0,
      "the trace is in flight: it comes back through its release function");
  trace_free(t);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceSpawnChildTrace(
    TRITONSERVER_InferenceTrace* trace,
    TRITONSERVER_InferenceTrace** child_trace)
{
  THOST_CHECK_ARG(child_trace != NULL, "child_trace is NULL");
  if (trace == NULL) {  // an untraced request has no child trace, as in Triton
    *child_trace = NULL;
    return NULL;
  }
  struct thost_trace* t;
  TRACE(t, trace);
  struct thost_trace* child = trace_alloc();
  if (child == NULL) {
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", __func__);
  }
  TRITONSERVER_Error* err = thostTraceSpawn(t, child);
  if (err != NULL) {
    thost_handle_free(child->handle);
    free((char*)child->model_name);
    free((char*)child->request_id);
    free((char*)child->context);
    free(child);
    return err;
  }
  *child_trace = THOST_AS_HANDLE(TRITONSERVER_InferenceTrace, child->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceSetContext(
    TRITONSERVER_InferenceTrace* trace, const char* trace_context)
{
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(trace_context != NULL, "trace_context is NULL");
  TRITONSERVER_Error* err = thostTraceSetContext(t, (char*)trace_context);
  if (err != NULL)
    return err;
  thost_trace_store_context(t, trace_context, strlen(trace_context));
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_InferenceTraceContext(
    TRITONSERVER_InferenceTrace* trace, const char** trace_context)
{
  struct thost_trace* t;
  TRACE(t, trace);
  THOST_CHECK_ARG(trace_context != NULL, "trace_context is NULL");
  *trace_context = t->context != NULL ? t->context : "";
  return NULL;
}

// ---- Used by Go -------------------------------------------------------------

void
thost_trace_inherit(struct thost_trace* child, const struct thost_trace* parent)
{
  child->level = parent->level;
  child->activity_fn = parent->activity_fn;
  child->tensor_fn = parent->tensor_fn;
  child->release_fn = parent->release_fn;
  child->userp = parent->userp;
}

void
thost_trace_store_context(struct thost_trace* t, const char* s, size_t len)
{
  char* copy = thost_strndup(s, len);
  if (copy == NULL)
    return;  // the old context stays
  if (t->standalone) {
    free((char*)t->context);
  } else {
    free(t->set_context);
    t->set_context = copy;
  }
  t->context = copy;
}

bool
thost_trace_bind(
    struct thost_trace* t, const char* model, size_t model_len, int64_t version,
    const char* id, size_t id_len)
{
  char* m = thost_strndup(model, model_len);
  char* i = thost_strndup(id, id_len);
  if (m == NULL || i == NULL) {
    free(m);
    free(i);
    return false;
  }
  free((char*)t->model_name);
  free((char*)t->request_id);
  t->model_name = m;
  t->request_id = i;
  t->model_version = version;
  return true;
}

void
thost_trace_activity(
    struct thost_trace* t, TRITONSERVER_InferenceTraceActivity activity,
    uint64_t timestamp)
{
  if (t->activity_fn != NULL) {
    t->activity_fn(
        THOST_AS_HANDLE(TRITONSERVER_InferenceTrace, t->handle), activity,
        timestamp, t->userp);
  }
}

static void
report_tensor(
    struct thost_trace* t, TRITONSERVER_InferenceTraceActivity activity,
    const char* name, TRITONSERVER_DataType datatype, const void* base,
    size_t byte_size, const int64_t* shape, uint64_t dims,
    TRITONSERVER_MemoryType memory_type, int64_t memory_type_id)
{
  t->tensor_fn(
      THOST_AS_HANDLE(TRITONSERVER_InferenceTrace, t->handle), activity, name,
      datatype, base, byte_size, shape, dims, memory_type, memory_type_id,
      t->userp);
}

bool
thost_trace_wants_tensors(const struct thost_trace* t)
{
  return t != NULL && t->tensor_fn != NULL &&
         (t->level & TRITONSERVER_TRACE_LEVEL_TENSORS) != 0;
}

void
thost_trace_inputs(struct thost_trace* t, const struct thost_infer_request* r)
{
  if (!thost_trace_wants_tensors(t))
    return;
  for (uint32_t i = 0; i < r->input_count; i++) {
    const struct thost_ireq_input* in = &r->inputs[i];
    for (uint32_t k = 0; k < in->buffer_count; k++) {
      const struct thost_ireq_buffer* b = &in->buffers[k];
      if (b->host_policy != NULL)
        continue;
      report_tensor(
          t, TRITONSERVER_TRACE_TENSOR_QUEUE_INPUT, in->name, in->datatype,
          b->base, b->byte_size, in->shape, in->dims_count, b->memory_type,
          b->memory_type_id);
    }
  }
}

void
thost_trace_outputs(struct thost_trace* t, const struct thost_infer_response* r)
{
  if (!thost_trace_wants_tensors(t) || r->error != NULL)
    return;
  for (uint32_t i = 0; i < r->output_count; i++) {
    const struct thost_iresp_output* o = &r->outputs[i];
    report_tensor(
        t, TRITONSERVER_TRACE_TENSOR_BACKEND_OUTPUT, o->name, o->datatype,
        o->base, o->byte_size, o->shape, o->dims_count, o->memory_type,
        o->memory_type_id);
  }
}

void
thost_trace_return(struct thost_trace* t)
{
  __atomic_store_n(&t->in_flight, 0, __ATOMIC_RELEASE);
  if (t->release_fn == NULL) {  // the server's child: its end is the server's
    trace_free(t);
    return;
  }
  t->release_fn(
      THOST_AS_HANDLE(TRITONSERVER_InferenceTrace, t->handle), t->userp);
}
