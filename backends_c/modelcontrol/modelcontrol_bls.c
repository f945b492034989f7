/*
 * modelcontrol_bls.c: the "trace" and "probe" commands of the modelcontrol
 * backend, and the allocator of the requests it makes.
 *
 * "trace" passes a command on to another model, as python backend does for
 * a business-logic-scripting call from a Python model: it takes the trace
 * of the request it serves (TRITONBACKEND_RequestTrace), reads its context
 * (TRITONSERVER_InferenceTraceContext) and spawns a child of it
 * (TRITONSERVER_InferenceTraceSpawnChildTrace) for the new request. When
 * its request is not traced (a server without a tracer), it makes its own
 * trace (TRITONSERVER_InferenceTraceNew) and spawns the child from that, as
 * an application tracing its requests would; the child then reports the
 * callee's activities to this backend, and comes back through the release
 * function. Report: "request_traced", "request_context", "parent_id" (the
 * id of the trace the child was spawned from), "child_id",
 * "child_parent_id", "activities" (the names the activity function
 * received, custom ones resolved through the trace's context),
 * "trace_released" and "released_trace_id", and "probe", the callee's own
 * report.
 *
 * "probe" reports the trace of the request it serves: "traced", and "id",
 * "parent_id", "context", "model", "version" and "request_id", and records
 * a custom activity named by the command's "activity", if any.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, clock_gettime */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "modelcontrol.h"

/* How long a call waits for the callee (it answers at once). */
#define MC_CALL_TIMEOUT_S 30

typedef struct mc_call {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool released;   /* the callee handed the request back */
  bool own_trace;  /* the child came from this backend's own trace */
  bool trace_back; /* ... and came back through the release function */
  uint64_t released_trace_id;
  TRITONSERVER_InferenceResponse* response; /* the first one */
  cJSON* activities;
  char* input; /* the request's COMMAND buffer, which must outlive it */
} mc_call;

static void
on_response(
    TRITONSERVER_InferenceResponse* response, const uint32_t flags, void* userp)
{
  (void)flags;
  mc_call* call = userp;
  pthread_mutex_lock(&call->mu);
  if (response != NULL && call->response == NULL) {
    call->response = response;
    response = NULL;
  }
  pthread_mutex_unlock(&call->mu);
  if (response != NULL)
    TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceResponseDelete(response));
}

static void
on_release(
    TRITONSERVER_InferenceRequest* request, const uint32_t flags, void* userp)
{
  (void)request;
  (void)flags;
  mc_call* call = userp;
  pthread_mutex_lock(&call->mu);
  call->released = true;
  pthread_cond_broadcast(&call->cv);
  pthread_mutex_unlock(&call->mu);
}

/* The name of a custom activity: its timestamp's entry in the trace's
 * context. */
static char*
custom_name(TRITONSERVER_InferenceTrace* trace, uint64_t timestamp)
{
  const char* context = NULL;
  TRITONSERVER_Error* err = TRITONSERVER_InferenceTraceContext(trace, &context);
  if (err != NULL) {
    TRITONSERVER_ErrorDelete(err);
    return NULL;
  }
  cJSON* json = cJSON_Parse(context);
  char key[32];
  snprintf(key, sizeof(key), "%llu", (unsigned long long)timestamp);
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(json, key);
  char* name = cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
  cJSON_Delete(json);
  return name;
}

static void
on_activity(
    TRITONSERVER_InferenceTrace* trace,
    TRITONSERVER_InferenceTraceActivity activity, uint64_t timestamp_ns,
    void* userp)
{
  mc_call* call = userp;
  char* custom = NULL;
  if (activity == TRITONSERVER_TRACE_CUSTOM_ACTIVITY)
    custom = custom_name(trace, timestamp_ns);
  const char* name = custom != NULL
                         ? custom
                         : TRITONSERVER_InferenceTraceActivityString(activity);
  pthread_mutex_lock(&call->mu);
  cJSON_AddItemToArray(call->activities, cJSON_CreateString(name));
  pthread_mutex_unlock(&call->mu);
  free(custom);
}

static void
on_trace_release(TRITONSERVER_InferenceTrace* trace, void* userp)
{
  mc_call* call = userp;
  uint64_t id = 0;
  TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceTraceId(trace, &id));
  TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceTraceDelete(trace));
  pthread_mutex_lock(&call->mu);
  call->trace_back = true;
  call->released_trace_id = id;
  pthread_cond_broadcast(&call->cv);
  pthread_mutex_unlock(&call->mu);
}

/* Waits until the callee handed the request (and a trace of this backend's
 * own) back; false when it did not in time. */
static bool
await_call(mc_call* call)
{
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += MC_CALL_TIMEOUT_S;
  pthread_mutex_lock(&call->mu);
  int rc = 0;
  while (rc != ETIMEDOUT &&
         !(call->released && (!call->own_trace || call->trace_back))) {
    rc = pthread_cond_timedwait(&call->cv, &call->mu, &deadline);
  }
  bool done = call->released && (!call->own_trace || call->trace_back);
  pthread_mutex_unlock(&call->mu);
  return done;
}

/* The callee's report, from its REPORT output. */
static cJSON*
callee_report(TRITONSERVER_InferenceResponse* response)
{
  const char* name;
  TRITONSERVER_DataType datatype;
  const int64_t* shape;
  uint64_t dims;
  const void* base;
  size_t size;
  TRITONSERVER_MemoryType type;
  int64_t type_id;
  void* userp;
  TRITONSERVER_Error* err = TRITONSERVER_InferenceResponseError(response);
  if (err == NULL) {
    err = TRITONSERVER_InferenceResponseOutput(
        response, 0, &name, &datatype, &shape, &dims, &base, &size, &type,
        &type_id, &userp);
  }
  if (err != NULL) {
    cJSON* failed = cJSON_CreateObject();
    mc_record(failed, err);
    return failed;
  }
  uint32_t len = 0;
  if (size >= 4)
    memcpy(&len, base, 4);
  if (size < 4 || len > size - 4)
    return cJSON_CreateString("not one BYTES element");
  return cJSON_ParseWithLength((const char*)base + 4, len);
}

/* Builds and submits the request of a call with 'child' (which the server
 * takes whatever happens). */
static TRITONSERVER_Error*
submit(
    mc_model* model, const char* callee, const char* command, mc_call* call,
    TRITONSERVER_InferenceRequest** out, TRITONSERVER_InferenceTrace* child)
{
  TRITONSERVER_InferenceRequest* inner = NULL;
  const int64_t shape[1] = {1};
  size_t len = strlen(command);
  char* data = malloc(4 + len);
  uint32_t n = (uint32_t)len;
  memcpy(data, &n, 4);
  memcpy(data + 4, command, len);
  TRITONSERVER_Error* err =
      TRITONSERVER_InferenceRequestNew(&inner, model->server, callee, -1);
  if (err == NULL)
    err = TRITONSERVER_InferenceRequestSetId(inner, "traced-call");
  if (err == NULL) {
    err = TRITONSERVER_InferenceRequestAddInput(
        inner, "COMMAND", TRITONSERVER_TYPE_BYTES, shape, 1);
  }
  if (err == NULL) {
    err = TRITONSERVER_InferenceRequestAppendInputData(
        inner, "COMMAND", data, 4 + len, TRITONSERVER_MEMORY_CPU, 0);
  }
  if (err == NULL)
    err = TRITONSERVER_InferenceRequestAddRequestedOutput(inner, "REPORT");
  if (err == NULL) {
    err = TRITONSERVER_InferenceRequestSetReleaseCallback(
        inner, on_release, call);
  }
  if (err == NULL) {
    err = TRITONSERVER_InferenceRequestSetResponseCallback(
        inner, model->allocator, NULL, on_response, call);
  }
  if (err == NULL) {
    err = TRITONSERVER_ServerInferAsync(model->server, inner, child);
  } else if (child != NULL) {
    TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceTraceDelete(child));
    if (call->own_trace) {
      call->trace_back = true; /* it will not come through the callback */
    }
  }
  *out = inner;
  call->input = data;
  return err;
}

static void
call_free(mc_call* call)
{
  free(call->input);
  pthread_cond_destroy(&call->cv);
  pthread_mutex_destroy(&call->mu);
  free(call);
}

void
mc_traced_call(
    mc_model* model, TRITONBACKEND_Request* request, const cJSON* command,
    cJSON* report)
{
  const cJSON* callee = cJSON_GetObjectItemCaseSensitive(command, "model");
  const cJSON* context = cJSON_GetObjectItemCaseSensitive(command, "context");
  mc_call* call = calloc(1, sizeof(*call));
  call->activities = cJSON_CreateArray();
  pthread_mutex_init(&call->mu, NULL);
  pthread_cond_init(&call->cv, NULL);

  /* The request's trace and context, as python backend reads them. */
  TRITONSERVER_InferenceTrace* traced = NULL;
  TRITONSERVER_InferenceTrace* own = NULL;
  TRITONSERVER_InferenceTrace* child = NULL;
  TRITONSERVER_Error* err = TRITONBACKEND_RequestTrace(request, &traced);
  cJSON_AddBoolToObject(report, "request_traced", traced != NULL);
  if (err == NULL && traced != NULL) {
    const char* ctx = NULL;
    err = TRITONSERVER_InferenceTraceContext(traced, &ctx);
    if (err == NULL)
      cJSON_AddStringToObject(report, "request_context", ctx);
  }
  if (err == NULL && traced == NULL) {
    err = TRITONSERVER_InferenceTraceNew(
        &own, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 0, on_activity,
        on_trace_release, call);
    call->own_trace = err == NULL;
  }
  uint64_t parent_id = 0, child_id = 0, child_parent = 0;
  if (err == NULL)
    err = TRITONSERVER_InferenceTraceId(
        traced != NULL ? traced : own, &parent_id);
  if (err == NULL) {
    err = TRITONSERVER_InferenceTraceSpawnChildTrace(
        traced != NULL ? traced : own, &child);
  }
  if (err == NULL && cJSON_IsString(context))
    err = TRITONSERVER_InferenceTraceSetContext(child, context->valuestring);
  if (err == NULL)
    err = TRITONSERVER_InferenceTraceId(child, &child_id);
  if (err == NULL)
    err = TRITONSERVER_InferenceTraceParentId(child, &child_parent);
  if (err != NULL && child != NULL)
    TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceTraceDelete(child));

  TRITONSERVER_InferenceRequest* inner = NULL;
  if (err == NULL) {
    const cJSON* op = cJSON_GetObjectItemCaseSensitive(command, "callee_op");
    char inner_command[128];
    snprintf(
        inner_command, sizeof(inner_command),
        "{\"op\":\"%.32s\",\"activity\":\"probe_step\"}",
        cJSON_IsString(op) ? op->valuestring : "probe");
    err = submit(
        model, cJSON_IsString(callee) ? callee->valuestring : "", inner_command,
        call, &inner, child);
    if (err != NULL)
      call->released = true; /* nothing was submitted */
  }
  if (mc_record(report, err) && !await_call(call)) {
    cJSON_ReplaceItemInObject(report, "ok", cJSON_CreateBool(false));
    cJSON_AddStringToObject(
        report, "message", "the callee did not answer in time");
    return; /* the callbacks may still come: 'call' stays, and leaks */
  }
  cJSON_AddNumberToObject(report, "parent_id", (double)parent_id);
  cJSON_AddNumberToObject(report, "child_id", (double)child_id);
  cJSON_AddNumberToObject(report, "child_parent_id", (double)child_parent);
  cJSON_AddBoolToObject(report, "trace_released", call->trace_back);
  cJSON_AddNumberToObject(
      report, "released_trace_id", (double)call->released_trace_id);
  if (call->response != NULL) {
    cJSON_AddItemToObject(report, "probe", callee_report(call->response));
    TRITONSERVER_ErrorDelete(
        TRITONSERVER_InferenceResponseDelete(call->response));
  }
  if (inner != NULL)
    TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceRequestDelete(inner));
  if (own != NULL)
    TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceTraceDelete(own));
  cJSON_AddItemToObject(report, "activities", call->activities);
  call_free(call);
}

static uint64_t
now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
mc_probe(TRITONBACKEND_Request* request, cJSON* report)
{
  TRITONSERVER_InferenceTrace* trace = NULL;
  if (!mc_record(report, TRITONBACKEND_RequestTrace(request, &trace)))
    return;
  cJSON_AddBoolToObject(report, "traced", trace != NULL);
  if (trace == NULL)
    return;
  uint64_t id = 0, parent = 0;
  int64_t version = 0;
  const char *context = NULL, *model = NULL, *request_id = NULL;
  TRITONSERVER_Error* err = TRITONSERVER_InferenceTraceId(trace, &id);
  if (err == NULL)
    err = TRITONSERVER_InferenceTraceParentId(trace, &parent);
  if (err == NULL)
    err = TRITONSERVER_InferenceTraceContext(trace, &context);
  if (err == NULL)
    err = TRITONSERVER_InferenceTraceModelName(trace, &model);
  if (err == NULL)
    err = TRITONSERVER_InferenceTraceModelVersion(trace, &version);
  if (err == NULL)
    err = TRITONSERVER_InferenceTraceRequestId(trace, &request_id);
  if (err == NULL) {
    cJSON_AddNumberToObject(report, "id", (double)id);
    cJSON_AddNumberToObject(report, "parent_id", (double)parent);
    cJSON_AddStringToObject(report, "context", context);
    cJSON_AddStringToObject(report, "model", model);
    cJSON_AddNumberToObject(report, "version", (double)version);
    cJSON_AddStringToObject(report, "request_id", request_id);
    err = TRITONSERVER_InferenceTraceReportActivity(
        trace, now_ns(), "probe_step");
  }
  if (err != NULL) {
    cJSON_ReplaceItemInObject(report, "ok", cJSON_CreateBool(false));
    cJSON_AddStringToObject(report, "message", TRITONSERVER_ErrorMessage(err));
    TRITONSERVER_ErrorDelete(err);
  }
}

/* ---- The allocator: host memory ---------------------------------------- */

static TRITONSERVER_Error*
alloc_fn(
    TRITONSERVER_ResponseAllocator* allocator, const char* tensor_name,
    size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id, void* userp, void** buffer, void** buffer_userp,
    TRITONSERVER_MemoryType* actual_memory_type, int64_t* actual_memory_type_id)
{
  (void)allocator;
  (void)tensor_name;
  (void)memory_type;
  (void)memory_type_id;
  (void)userp;
  *buffer = byte_size > 0 ? malloc(byte_size) : NULL;
  *buffer_userp = NULL;
  *actual_memory_type = TRITONSERVER_MEMORY_CPU;
  *actual_memory_type_id = 0;
  if (byte_size > 0 && *buffer == NULL) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  }
  return NULL;
}

static TRITONSERVER_Error*
release_fn(
    TRITONSERVER_ResponseAllocator* allocator, void* buffer, void* buffer_userp,
    size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id)
{
  (void)allocator;
  (void)buffer_userp;
  (void)byte_size;
  (void)memory_type;
  (void)memory_type_id;
  free(buffer);
  return NULL;
}

TRITONSERVER_Error*
mc_allocator_new(TRITONSERVER_ResponseAllocator** out)
{
  return TRITONSERVER_ResponseAllocatorNew(out, alloc_fn, release_fn, NULL);
}
