/*
 * modelcontrol.c: the entry points of the modelcontrol backend, and its
 * model-control commands (modelcontrol.h says what each command does).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "modelcontrol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error_code_name.h"

static uint64_t
now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}


bool
mc_record(cJSON* report, TRITONSERVER_Error* err)
{
  cJSON_AddBoolToObject(report, "ok", err == NULL);
  if (err == NULL)
    return true;
  cJSON_AddStringToObject(
      report, "code", thost_error_code_name(TRITONSERVER_ErrorCode(err)));
  cJSON_AddStringToObject(report, "message", TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
  return false;
}

static const char*
string_member(const cJSON* command, const char* name)
{
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(command, name);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int64_t
version_member(const cJSON* command)
{
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(command, "version");
  return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
}

/* load: the model, with a "config" parameter and a "file:<path>" parameter
 * per entry of "files", as python backend's pb_utils.load_model passes them. */
static void
load(mc_model* model, const cJSON* command, cJSON* report)
{
  const char* name = string_member(command, "model");
  const char* config = string_member(command, "config");
  const cJSON* files = cJSON_GetObjectItemCaseSensitive(command, "files");
  int count = (config != NULL ? 1 : 0) + cJSON_GetArraySize(files);
  TRITONSERVER_Parameter** params = calloc(count + 1, sizeof(*params));
  int n = 0;
  if (config != NULL) {
    params[n++] = TRITONSERVER_ParameterNew(
        "config", TRITONSERVER_PARAMETER_STRING, config);
  }
  const cJSON* f;
  cJSON_ArrayForEach(f, files)
  {
    char key[512];
    snprintf(key, sizeof(key), "file:%s", f->string);
    const char* data = cJSON_IsString(f) ? f->valuestring : "";
    params[n++] = TRITONSERVER_ParameterBytesNew(key, data, strlen(data));
  }
  mc_record(
      report, TRITONSERVER_ServerLoadModelWithParameters(
                  model->server, name, (const TRITONSERVER_Parameter**)params,
                  (uint64_t)n));
  for (int i = 0; i < n; i++) TRITONSERVER_ParameterDelete(params[i]);
  free(params);
}

static void
unload(mc_model* model, const cJSON* command, cJSON* report)
{
  const char* name = string_member(command, "model");
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(command, "dependents"))) {
    mc_record(
        report,
        TRITONSERVER_ServerUnloadModelAndDependents(model->server, name));
  } else {
    mc_record(report, TRITONSERVER_ServerUnloadModel(model->server, name));
  }
}

static void
ready(mc_model* model, const cJSON* command, cJSON* report)
{
  bool is_ready = false;
  if (mc_record(
          report, TRITONSERVER_ServerModelIsReady(
                      model->server, string_member(command, "model"),
                      version_member(command), &is_ready))) {
    cJSON_AddBoolToObject(report, "ready", is_ready);
  }
}

/* txn: whether the model is decoupled, as python backend asks before a
 * call (a decoupled callee streams its responses). */
static void
txn(mc_model* model, const cJSON* command, cJSON* report)
{
  uint32_t flags = 0;
  void* voidp = &flags; /* the server sets it to NULL */
  if (mc_record(
          report, TRITONSERVER_ServerModelTransactionProperties(
                      model->server, string_member(command, "model"),
                      version_member(command), &flags, &voidp))) {
    cJSON_AddNumberToObject(report, "flags", flags);
    cJSON_AddBoolToObject(
        report, "decoupled", (flags & TRITONSERVER_TXN_DECOUPLED) != 0);
    cJSON_AddBoolToObject(report, "voidp_null", voidp == NULL);
  }
}

/* Adds a message's JSON to report as 'key', and deletes the message. */
static void
add_message(cJSON* report, const char* key, TRITONSERVER_Message* msg)
{
  const char* base = NULL;
  size_t size = 0;
  if (TRITONSERVER_MessageSerializeToJson(msg, &base, &size) == NULL) {
    cJSON_AddItemToObject(report, key, cJSON_ParseWithLength(base, size));
  }
  TRITONSERVER_ErrorDelete(TRITONSERVER_MessageDelete(msg));
}

/* server: what the server says of itself: liveness, readiness, metadata,
 * the index of ready models, and whether its metrics count requests. */
static void
server_state(mc_model* model, cJSON* report)
{
  bool live = false, ready = false;
  TRITONSERVER_Message* metadata = NULL;
  TRITONSERVER_Message* index = NULL;
  TRITONSERVER_Metrics* metrics = NULL;
  const char* text = NULL;
  size_t size = 0;
  TRITONSERVER_Error* err = TRITONSERVER_ServerIsLive(model->server, &live);
  if (err == NULL)
    err = TRITONSERVER_ServerIsReady(model->server, &ready);
  if (err == NULL)
    err = TRITONSERVER_ServerMetadata(model->server, &metadata);
  if (err == NULL) {
    err = TRITONSERVER_ServerModelIndex(
        model->server, TRITONSERVER_INDEX_FLAG_READY, &index);
  }
  if (err == NULL)
    err = TRITONSERVER_ServerMetrics(model->server, &metrics);
  if (err == NULL) {
    err = TRITONSERVER_MetricsFormatted(
        metrics, TRITONSERVER_METRIC_PROMETHEUS, &text, &size);
  }
  if (mc_record(report, err)) {
    cJSON_AddBoolToObject(report, "live", live);
    cJSON_AddBoolToObject(report, "ready", ready);
    cJSON_AddBoolToObject(
        report, "metrics_count_requests",
        strstr(text, "nv_inference_request_success{") != NULL);
  }
  if (metadata != NULL)
    add_message(report, "metadata", metadata);
  if (index != NULL)
    add_message(report, "index", index);
  if (metrics != NULL)
    TRITONSERVER_ErrorDelete(TRITONSERVER_MetricsDelete(metrics));
}

/* stats and batch: a model's statistics and batching. */
static void
model_state(mc_model* model, const cJSON* command, cJSON* report)
{
  const char* name = string_member(command, "model");
  TRITONSERVER_Message* stats = NULL;
  uint32_t flags = 0;
  TRITONSERVER_Error* err = TRITONSERVER_ServerModelStatistics(
      model->server, name != NULL ? name : "", version_member(command), &stats);
  if (err == NULL && name != NULL) {
    err = TRITONSERVER_ServerModelBatchProperties(
        model->server, name, version_member(command), &flags, NULL);
  }
  if (mc_record(report, err))
    cJSON_AddNumberToObject(report, "batch_flags", flags);
  if (stats != NULL)
    add_message(report, "statistics", stats);
}

/* The JSON object in the request's COMMAND input; NULL (and the reason in
 * report) when there is none. */
static cJSON*
read_command(TRITONBACKEND_Request* request, cJSON* report)
{
  TRITONBACKEND_Input* input;
  uint64_t byte_size = 0;
  uint32_t buffers = 0;
  const void* base = NULL;
  uint64_t size = 0;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
  int64_t type_id = 0;
  uint32_t len = 0;
  TRITONSERVER_Error* err =
      TRITONBACKEND_RequestInput(request, "COMMAND", &input);
  if (err == NULL) {
    err = TRITONBACKEND_InputProperties(
        input, NULL, NULL, NULL, NULL, &byte_size, &buffers);
  }
  if (err == NULL && buffers != 1) {
    err = TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INVALID_ARG, "COMMAND must come in one buffer");
  }
  if (err == NULL) {
    err = TRITONBACKEND_InputBuffer(input, 0, &base, &size, &type, &type_id);
  }
  if (err == NULL && size >= 4)
    memcpy(&len, base, 4);
  if (err == NULL && (size < 4 || len > size - 4)) {
    err = TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INVALID_ARG, "COMMAND is not one BYTES element");
  }
  if (err != NULL) {
    mc_record(report, err);
    return NULL;
  }
  cJSON* command = cJSON_ParseWithLength((const char*)base + 4, len);
  if (command == NULL) {
    mc_record(
        report, TRITONSERVER_ErrorNew(
                    TRITONSERVER_ERROR_INVALID_ARG, "COMMAND is not JSON"));
  }
  return command;
}

/* Sends report as the request's one response, in REPORT, or an error
 * response when 'failure' is set. */
static TRITONSERVER_Error*
respond(TRITONBACKEND_Request* request, cJSON* report, const char* failure)
{
  char* text = cJSON_PrintUnformatted(report);
  size_t len = strlen(text);
  TRITONBACKEND_Response* response;
  TRITONSERVER_Error* err = TRITONBACKEND_ResponseNew(&response, request);
  if (err != NULL) {
    free(text);
    return err;
  }
  TRITONBACKEND_Output* output;
  const int64_t shape[1] = {1};
  void* buffer = NULL;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
  int64_t type_id = 0;
  err = TRITONBACKEND_ResponseOutput(
      response, &output, "REPORT", TRITONSERVER_TYPE_BYTES, shape, 1);
  if (err == NULL) {
    err = TRITONBACKEND_OutputBuffer(output, &buffer, 4 + len, &type, &type_id);
  }
  if (err == NULL) {
    uint32_t n = (uint32_t)len;
    memcpy(buffer, &n, 4);
    memcpy((char*)buffer + 4, text, len);
  }
  free(text);
  if (err == NULL && failure != NULL)
    err = TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, failure);
  /* The response takes what it needs of err; err stays this backend's. */
  TRITONSERVER_Error* sent = TRITONBACKEND_ResponseSend(
      response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err);
  TRITONSERVER_ErrorDelete(err);
  return sent;
}

/* Runs one request's command, answers it, reports its statistics (so that
 * a traced request records its compute activities) and releases it. */
static void
run(mc_model* model, TRITONBACKEND_ModelInstance* instance,
    TRITONBACKEND_Request* request)
{
  const uint64_t start = now_ns();
  cJSON* report = cJSON_CreateObject();
  cJSON* command = read_command(request, report);
  const char* op = string_member(command, "op");
  const char* failure = NULL;
  if (op == NULL) {
    if (!cJSON_HasObjectItem(report, "ok")) {
      mc_record(
          report, TRITONSERVER_ErrorNew(
                      TRITONSERVER_ERROR_INVALID_ARG, "the command has no op"));
    }
  } else if (strcmp(op, "load") == 0) {
    load(model, command, report);
  } else if (strcmp(op, "unload") == 0) {
    unload(model, command, report);
  } else if (strcmp(op, "ready") == 0) {
    ready(model, command, report);
  } else if (strcmp(op, "txn") == 0) {
    txn(model, command, report);
  } else if (strcmp(op, "server") == 0) {
    server_state(model, report);
  } else if (strcmp(op, "model") == 0) {
    model_state(model, command, report);
  } else if (strcmp(op, "trace") == 0) {
    mc_traced_call(model, request, command, report);
  } else if (strcmp(op, "probe") == 0) {
    mc_probe(request, report);
  } else if (strcmp(op, "fail") == 0) {
    failure = "failed as the command asked";
  } else {
    mc_record(
        report,
        TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, "unknown op"));
  }
  const uint64_t compute_end = now_ns();
  TRITONSERVER_Error* err = respond(request, report, failure);
  const uint64_t end = now_ns();
  if (err == NULL) {
    err = TRITONBACKEND_ModelInstanceReportStatistics(
        instance, request, true, start, start, compute_end, end);
  }
  if (err == NULL) {
    err = TRITONBACKEND_ModelInstanceReportBatchStatistics(
        instance, 1, start, start, compute_end, end);
  }
  if (err != NULL) {
    TRITONSERVER_LogMessage(
        TRITONSERVER_LOG_ERROR, __FILE__, __LINE__,
        TRITONSERVER_ErrorMessage(err));
    TRITONSERVER_ErrorDelete(err);
  }
  cJSON_Delete(command);
  cJSON_Delete(report);
  TRITONBACKEND_RequestRelease(request, TRITONSERVER_REQUEST_RELEASE_ALL);
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model)
{
  mc_model* m = calloc(1, sizeof(*m));
  if (m == NULL) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  }
  TRITONSERVER_Error* err = TRITONBACKEND_ModelServer(model, &m->server);
  if (err == NULL)
    err = mc_allocator_new(&m->allocator);
  if (err == NULL)
    err = TRITONBACKEND_ModelSetState(model, m);
  if (err != NULL) {
    if (m->allocator != NULL)
      TRITONSERVER_ErrorDelete(
          TRITONSERVER_ResponseAllocatorDelete(m->allocator));
    free(m);
  }
  return err;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model)
{
  void* state = NULL;
  TRITONSERVER_Error* err = TRITONBACKEND_ModelState(model, &state);
  if (err != NULL)
    return err;
  mc_model* m = state;
  err = TRITONSERVER_ResponseAllocatorDelete(m->allocator);
  free(m);
  return err;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  TRITONBACKEND_Model* model;
  void* state = NULL;
  TRITONSERVER_Error* err = TRITONBACKEND_ModelInstanceModel(instance, &model);
  if (err == NULL)
    err = TRITONBACKEND_ModelState(model, &state);
  if (err != NULL)
    return err;
  for (uint32_t i = 0; i < request_count; i++)
    run((mc_model*)state, instance, requests[i]);
  return NULL;
}
