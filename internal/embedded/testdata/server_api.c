/*
 * server_api.c: calls every function of the in-process API that an
 * application embedding a server uses (server options, the server object,
 * model queries and control, repositories, metrics, traces) with good and
 * bad arguments, linked with libtritonserver.so, and prints one line per
 * call:
 *
 *     <function> <case> <result>
 *
 * <result> is OK for success (NULL) or the error code's name without
 * TRITONSERVER_ERROR_. Lines "value <key>=<value>" report what a call
 * handed back. server_api_test.go compares them with a table.
 *
 * Usage: server_api <model repository> <backend directory> <spare dir>
 * The repository holds "identity" (loads) and "broken" (fails to load);
 * the spare directory is a second repository holding "spare".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_code_name.h" /* backends_c/ */
#include "triton/core/tritonserver.h"

static const char*
code(TRITONSERVER_Error* err)
{
  return err == NULL ? "OK"
                     : thost_error_code_name(TRITONSERVER_ErrorCode(err));
}

/* Prints the line of one call and deletes its error; true on success. */
static int
report(const char* fn, const char* kase, TRITONSERVER_Error* err)
{
  printf("%s %s %s\n", fn, kase, code(err));
  if (err != NULL) {
    printf("value error.%s.%s=%s\n", fn, kase, TRITONSERVER_ErrorMessage(err));
    TRITONSERVER_ErrorDelete(err);
    return 0;
  }
  return 1;
}

#define CHECK(FN, KASE, ...) report(#FN, KASE, FN(__VA_ARGS__))

/* A value that is no handle at all. */
#define MADE_UP ((void*)(uintptr_t)0x1234)

static const char* repo;
static const char* backends;
static const char* spare;

/* Options for a server on 'repo' with quiet logging. */
static TRITONSERVER_ServerOptions*
options(TRITONSERVER_ModelControlMode mode)
{
  TRITONSERVER_ServerOptions* o = NULL;
  TRITONSERVER_ServerOptionsNew(&o);
  TRITONSERVER_ServerOptionsSetModelRepositoryPath(o, repo);
  TRITONSERVER_ServerOptionsSetBackendDirectory(o, backends);
  TRITONSERVER_ServerOptionsSetModelControlMode(o, mode);
  TRITONSERVER_ServerOptionsSetLogInfo(o, false);
  TRITONSERVER_ServerOptionsSetExitOnError(o, false);
  return o;
}

static void
check_options(void)
{
  TRITONSERVER_ServerOptions* o = NULL;
  CHECK(TRITONSERVER_ServerOptionsNew, "null_out", NULL);
  if (!CHECK(TRITONSERVER_ServerOptionsNew, "good", &o))
    return;
  /* Every setter with a good value; those of features the host lacks at
   * their default. */
  CHECK(TRITONSERVER_ServerOptionsSetServerId, "good", o, "embedded");
  CHECK(TRITONSERVER_ServerOptionsSetModelRepositoryPath, "good", o, repo);
  CHECK(
      TRITONSERVER_ServerOptionsSetModelControlMode, "good", o,
      TRITONSERVER_MODEL_CONTROL_EXPLICIT);
  CHECK(TRITONSERVER_ServerOptionsSetStartupModel, "good", o, "identity");
  CHECK(TRITONSERVER_ServerOptionsSetStrictModelConfig, "good", o, true);
  CHECK(TRITONSERVER_ServerOptionsSetModelConfigName, "default", o, "");
  CHECK(
      TRITONSERVER_ServerOptionsSetRateLimiterMode, "exec_count", o,
      TRITONSERVER_RATE_LIMIT_EXEC_COUNT);
  CHECK(TRITONSERVER_ServerOptionsAddRateLimiterResource, "good", o, "r", 1, 0);
  CHECK(
      TRITONSERVER_ServerOptionsAddRateLimiterResource, "every_device", o, "r",
      1, -1);
  CHECK(
      TRITONSERVER_ServerOptionsSetRateLimiterMode, "off", o,
      TRITONSERVER_RATE_LIMIT_OFF);
  CHECK(
      TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize, "good", o,
      1 << 20);
  CHECK(
      TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize, "good", o, 0,
      1 << 20);
  CHECK(TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize, "zero", o, 0, 0);
  CHECK(TRITONSERVER_ServerOptionsSetResponseCacheByteSize, "zero", o, 0);
  CHECK(TRITONSERVER_ServerOptionsSetCacheDirectory, "good", o, "/tmp");
  CHECK(
      TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability, "good", o,
      7.0);
  CHECK(TRITONSERVER_ServerOptionsSetExitOnError, "good", o, false);
  CHECK(TRITONSERVER_ServerOptionsSetStrictReadiness, "good", o, true);
  CHECK(TRITONSERVER_ServerOptionsSetExitTimeout, "good", o, 5);
  CHECK(TRITONSERVER_ServerOptionsSetBufferManagerThreadCount, "zero", o, 0);
  CHECK(TRITONSERVER_ServerOptionsSetModelLoadThreadCount, "good", o, 2);
  CHECK(TRITONSERVER_ServerOptionsSetModelLoadRetryCount, "zero", o, 0);
  CHECK(TRITONSERVER_ServerOptionsSetModelNamespacing, "off", o, false);
  CHECK(TRITONSERVER_ServerOptionsSetEnablePeerAccess, "good", o, true);
  CHECK(TRITONSERVER_ServerOptionsSetLogFile, "stderr", o, "");
  CHECK(TRITONSERVER_ServerOptionsSetLogInfo, "good", o, true);
  CHECK(TRITONSERVER_ServerOptionsSetLogWarn, "good", o, true);
  CHECK(TRITONSERVER_ServerOptionsSetLogError, "good", o, true);
  CHECK(
      TRITONSERVER_ServerOptionsSetLogFormat, "good", o,
      TRITONSERVER_LOG_ISO8601);
  CHECK(TRITONSERVER_ServerOptionsSetLogVerbose, "good", o, 1);
  CHECK(TRITONSERVER_ServerOptionsSetMetrics, "good", o, true);
  CHECK(TRITONSERVER_ServerOptionsSetGpuMetrics, "good", o, false);
  CHECK(TRITONSERVER_ServerOptionsSetCpuMetrics, "good", o, true);
  CHECK(TRITONSERVER_ServerOptionsSetMetricsInterval, "good", o, 500);
  CHECK(TRITONSERVER_ServerOptionsSetBackendDirectory, "good", o, backends);
  CHECK(TRITONSERVER_ServerOptionsSetRepoAgentDirectory, "good", o, "/tmp");
  CHECK(
      TRITONSERVER_ServerOptionsSetBackendConfig, "good", o, "identity", "k",
      "v");

  /* Values the host refuses. */
  CHECK(
      TRITONSERVER_ServerOptionsSetModelControlMode, "unknown_mode", o,
      (TRITONSERVER_ModelControlMode)7);
  CHECK(TRITONSERVER_ServerOptionsSetModelConfigName, "custom", o, "other");
  CHECK(
      TRITONSERVER_ServerOptionsSetRateLimiterMode, "unknown_mode", o,
      (TRITONSERVER_RateLimitMode)7);
  CHECK(
      TRITONSERVER_ServerOptionsAddRateLimiterResource, "null_name", o, NULL, 1,
      0);
  CHECK(
      TRITONSERVER_ServerOptionsAddRateLimiterResource, "bad_device", o, "r", 1,
      -2);
  CHECK(
      TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize, "negative_device", o,
      -1, 1);
  CHECK(
      TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize, "some", o, 0,
      1 << 20);
  CHECK(TRITONSERVER_ServerOptionsSetResponseCacheByteSize, "some", o, 1 << 20);
  CHECK(TRITONSERVER_ServerOptionsSetCacheConfig, "good", o, "local", "{}");
  CHECK(
      TRITONSERVER_ServerOptionsSetCacheConfig, "null_config", o, "local",
      NULL);
  CHECK(TRITONSERVER_ServerOptionsSetCacheConfig, "not_json", o, "local", "{");
  /* The servers made below have no cache. */
  CHECK(TRITONSERVER_ServerOptionsSetResponseCacheByteSize, "clear", o, 0);
  CHECK(
      TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability, "negative", o,
      -1.0);
  CHECK(TRITONSERVER_ServerOptionsSetBufferManagerThreadCount, "some", o, 2);
  CHECK(TRITONSERVER_ServerOptionsSetModelLoadRetryCount, "some", o, 2);
  CHECK(TRITONSERVER_ServerOptionsSetModelNamespacing, "on", o, true);
  /* The servers made below keep one namespace. */
  CHECK(TRITONSERVER_ServerOptionsSetModelNamespacing, "reset", o, false);
  CHECK(
      TRITONSERVER_ServerOptionsSetLogFormat, "unknown_format", o,
      (TRITONSERVER_LogFormat)7);
  CHECK(TRITONSERVER_ServerOptionsSetMetricsInterval, "zero", o, 0);
  CHECK(
      TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit, "gpu", o,
      TRITONSERVER_INSTANCEGROUPKIND_GPU, 0, 0.5);
  CHECK(
      TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit, "negative_device", o,
      TRITONSERVER_INSTANCEGROUPKIND_GPU, -1, 0.5);
  CHECK(
      TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit, "fraction_above_1", o,
      TRITONSERVER_INSTANCEGROUPKIND_GPU, 0, 1.5);
  CHECK(
      TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit, "cpu", o,
      TRITONSERVER_INSTANCEGROUPKIND_CPU, 0, 0.5);
  CHECK(
      TRITONSERVER_ServerOptionsSetHostPolicy, "numa_node", o, "p", "numa-node",
      "0");
  CHECK(
      TRITONSERVER_ServerOptionsSetHostPolicy, "unknown_setting", o, "p",
      "nope", "0");
  CHECK(
      TRITONSERVER_ServerOptionsSetMetricsConfig, "good", o, "",
      "summary_latencies", "true");
  CHECK(TRITONSERVER_ServerOptionsSetServerId, "null_id", o, NULL);
  CHECK(TRITONSERVER_ServerOptionsSetModelRepositoryPath, "null_path", o, NULL);
  CHECK(TRITONSERVER_ServerOptionsSetStartupModel, "null_name", o, NULL);
  CHECK(TRITONSERVER_ServerOptionsSetLogFile, "null_file", o, NULL);
  CHECK(TRITONSERVER_ServerOptionsSetBackendDirectory, "null_dir", o, NULL);
  CHECK(TRITONSERVER_ServerOptionsSetRepoAgentDirectory, "null_dir", o, NULL);
  CHECK(TRITONSERVER_ServerOptionsSetCacheDirectory, "null_dir", o, NULL);
  CHECK(
      TRITONSERVER_ServerOptionsSetBackendConfig, "null_setting", o, "identity",
      NULL, "v");
  CHECK(
      TRITONSERVER_ServerOptionsSetHostPolicy, "null_value", o, "p",
      "numa-node", NULL);
  CHECK(
      TRITONSERVER_ServerOptionsSetMetricsConfig, "null_name", o, NULL, "s",
      "v");

  /* Handles that are not live options. */
  CHECK(TRITONSERVER_ServerOptionsSetExitOnError, "null_options", NULL, true);
  CHECK(TRITONSERVER_ServerOptionsSetLogVerbose, "made_up_options", MADE_UP, 1);
  CHECK(TRITONSERVER_ServerOptionsDelete, "good", o);
  CHECK(TRITONSERVER_ServerOptionsDelete, "twice", o);
  CHECK(
      TRITONSERVER_ServerOptionsSetStrictReadiness, "deleted_options", o, true);
  CHECK(TRITONSERVER_ServerOptionsDelete, "null_options", NULL);
}

static void
check_new_and_delete(void)
{
  TRITONSERVER_Server* s = NULL;
  TRITONSERVER_ServerOptions* o = options(TRITONSERVER_MODEL_CONTROL_NONE);
  CHECK(TRITONSERVER_ServerNew, "null_out", NULL, o);
  CHECK(TRITONSERVER_ServerNew, "null_options", &s, NULL);
  /* "broken" fails to load: with exit-on-error, so does the server. */
  TRITONSERVER_ServerOptionsSetExitOnError(o, true);
  CHECK(TRITONSERVER_ServerNew, "exit_on_error", &s, o);
  TRITONSERVER_ServerOptionsSetExitOnError(o, false);
  TRITONSERVER_ServerOptionsSetLogFile(o, "/no/such/dir/log");
  CHECK(TRITONSERVER_ServerNew, "log_file_unwritable", &s, o);
  TRITONSERVER_ServerOptionsSetLogFile(o, "");
  TRITONSERVER_ServerOptionsSetStrictReadiness(o, false);
  if (CHECK(TRITONSERVER_ServerNew, "without_exit_on_error", &s, o)) {
    bool ready = false;
    /* Without strict readiness a server is ready with a model down. */
    if (CHECK(TRITONSERVER_ServerIsReady, "not_strict", s, &ready))
      printf("value not_strict.ready=%s\n", ready ? "true" : "false");
    CHECK(TRITONSERVER_ServerStop, "good", s);
    CHECK(TRITONSERVER_ServerStop, "twice", s);
    if (CHECK(TRITONSERVER_ServerIsLive, "stopped", s, &ready))
      printf("value stopped.live=%s\n", ready ? "true" : "false");
    CHECK(TRITONSERVER_ServerDelete, "good", s);
    CHECK(TRITONSERVER_ServerDelete, "twice", s);
    CHECK(TRITONSERVER_ServerIsLive, "deleted_server", s, &ready);
  }
  TRITONSERVER_ServerOptionsDelete(o);
  CHECK(TRITONSERVER_ServerNew, "deleted_options", &s, o);
  CHECK(TRITONSERVER_ServerDelete, "null_server", NULL);
  CHECK(TRITONSERVER_ServerStop, "made_up_server", MADE_UP);
}

static void
print_json(const char* key, TRITONSERVER_Message* msg)
{
  const char* base;
  size_t size;
  if (TRITONSERVER_MessageSerializeToJson(msg, &base, &size) == NULL)
    printf("value %s=%.*s\n", key, (int)size, base);
  TRITONSERVER_ErrorDelete(TRITONSERVER_MessageDelete(msg));
}

/* A server under TRITONSERVER_MODEL_CONTROL_NONE: queries, statistics,
 * metrics; model control and repositories refused. */
static void
check_queries(TRITONSERVER_Server* s)
{
  bool b = false;
  uint32_t flags = 0;
  void* voidp = &flags;
  TRITONSERVER_Message* msg = NULL;
  if (CHECK(TRITONSERVER_ServerIsLive, "good", s, &b))
    printf("value live=%s\n", b ? "true" : "false");
  CHECK(TRITONSERVER_ServerIsLive, "null_out", s, NULL);
  if (CHECK(TRITONSERVER_ServerIsReady, "good", s, &b))
    printf("value ready=%s\n", b ? "true" : "false");
  CHECK(TRITONSERVER_ServerIsReady, "null_server", NULL, &b);
  if (CHECK(TRITONSERVER_ServerMetadata, "good", s, &msg))
    print_json("metadata", msg);
  CHECK(TRITONSERVER_ServerMetadata, "null_out", s, NULL);
  if (CHECK(TRITONSERVER_ServerModelIndex, "all", s, 0, &msg))
    print_json("index.all", msg);
  if (CHECK(
          TRITONSERVER_ServerModelIndex, "ready", s,
          TRITONSERVER_INDEX_FLAG_READY, &msg))
    print_json("index.ready", msg);
  CHECK(TRITONSERVER_ServerModelIndex, "null_out", s, 0, NULL);
  if (CHECK(
          TRITONSERVER_ServerModelBatchProperties, "good", s, "identity", -1,
          &flags, &voidp))
    printf(
        "value batch.flags=%u voidp=%s\n", flags,
        voidp == NULL ? "NULL" : "set");
  CHECK(
      TRITONSERVER_ServerModelBatchProperties, "unknown_model", s, "nope", -1,
      &flags, NULL);
  CHECK(
      TRITONSERVER_ServerModelBatchProperties, "unknown_version", s, "identity",
      9, &flags, NULL);
  CHECK(
      TRITONSERVER_ServerModelBatchProperties, "null_flags", s, "identity", -1,
      NULL, NULL);
  if (CHECK(TRITONSERVER_ServerModelStatistics, "good", s, "identity", 1, &msg))
    print_json("statistics", msg);
  if (CHECK(TRITONSERVER_ServerModelStatistics, "every_model", s, "", -1, &msg))
    TRITONSERVER_MessageDelete(msg);
  CHECK(
      TRITONSERVER_ServerModelStatistics, "unknown_model", s, "nope", -1, &msg);
  CHECK(
      TRITONSERVER_ServerModelStatistics, "failed_model", s, "broken", -1,
      &msg);
  CHECK(
      TRITONSERVER_ServerModelStatistics, "unknown_version", s, "identity", 9,
      &msg);
  CHECK(TRITONSERVER_ServerModelStatistics, "null_name", s, NULL, -1, &msg);

  TRITONSERVER_Metrics* m = NULL;
  const char* text = NULL;
  size_t size = 0;
  CHECK(TRITONSERVER_ServerMetrics, "null_out", s, NULL);
  if (CHECK(TRITONSERVER_ServerMetrics, "good", s, &m)) {
    if (CHECK(
            TRITONSERVER_MetricsFormatted, "prometheus", m,
            TRITONSERVER_METRIC_PROMETHEUS, &text, &size)) {
      printf(
          "value metrics.counts_identity=%s\n",
          strstr(text, "nv_inference_request_success{model=\"identity\"")
              ? "true"
              : "false");
    }
    CHECK(
        TRITONSERVER_MetricsFormatted, "unknown_format", m,
        (TRITONSERVER_MetricFormat)3, &text, &size);
    CHECK(
        TRITONSERVER_MetricsFormatted, "null_base", m,
        TRITONSERVER_METRIC_PROMETHEUS, NULL, &size);
    CHECK(TRITONSERVER_MetricsDelete, "good", m);
    CHECK(TRITONSERVER_MetricsDelete, "twice", m);
    CHECK(
        TRITONSERVER_MetricsFormatted, "deleted_metrics", m,
        TRITONSERVER_METRIC_PROMETHEUS, &text, &size);
  }
  CHECK(TRITONSERVER_MetricsDelete, "null_metrics", NULL);

  CHECK(TRITONSERVER_ServerLoadModel, "not_explicit", s, "identity");
  CHECK(
      TRITONSERVER_ServerRegisterModelRepository, "not_explicit", s, spare,
      NULL, 0);
  CHECK(TRITONSERVER_ServerUnregisterModelRepository, "not_explicit", s, spare);
  CHECK(TRITONSERVER_ServerPollModelRepository, "not_poll", s);
  CHECK(TRITONSERVER_ServerSetExitTimeout, "good", s, 3);
  CHECK(TRITONSERVER_ServerSetExitTimeout, "null_server", NULL, 3);
}

/* A server under TRITONSERVER_MODEL_CONTROL_EXPLICIT: loading and
 * repositories. */
static void
check_control(TRITONSERVER_Server* s)
{
  bool ready = false;
  CHECK(TRITONSERVER_ServerLoadModel, "good", s, "identity");
  CHECK(TRITONSERVER_ServerLoadModel, "unknown_model", s, "nope");
  CHECK(TRITONSERVER_ServerLoadModel, "null_name", s, NULL);
  CHECK(TRITONSERVER_ServerLoadModel, "null_server", NULL, "identity");

  TRITONSERVER_Parameter* good = TRITONSERVER_ParameterNew(
      "spare", TRITONSERVER_PARAMETER_STRING, "renamed");
  int64_t i = 1;
  TRITONSERVER_Parameter* bad =
      TRITONSERVER_ParameterNew("spare", TRITONSERVER_PARAMETER_INT, &i);
  const TRITONSERVER_Parameter* map_good[1] = {good};
  const TRITONSERVER_Parameter* map_bad[1] = {bad};
  const TRITONSERVER_Parameter* map_twice[2] = {good, good};
  CHECK(
      TRITONSERVER_ServerRegisterModelRepository, "no_such_dir", s,
      "/no/such/dir", NULL, 0);
  CHECK(
      TRITONSERVER_ServerRegisterModelRepository, "null_mapping", s, spare,
      NULL, 1);
  CHECK(
      TRITONSERVER_ServerRegisterModelRepository, "mapping_not_string", s,
      spare, map_bad, 1);
  CHECK(
      TRITONSERVER_ServerRegisterModelRepository, "mapping_twice", s, spare,
      map_twice, 2);
  CHECK(
      TRITONSERVER_ServerRegisterModelRepository, "null_path", s, NULL, NULL,
      0);
  CHECK(
      TRITONSERVER_ServerRegisterModelRepository, "good", s, spare, map_good,
      1);
  CHECK(TRITONSERVER_ServerRegisterModelRepository, "twice", s, spare, NULL, 0);
  CHECK(TRITONSERVER_ServerLoadModel, "mapped", s, "renamed");
  if (CHECK(
          TRITONSERVER_ServerModelIsReady, "mapped", s, "renamed", -1, &ready))
    printf("value mapped.ready=%s\n", ready ? "true" : "false");
  CHECK(TRITONSERVER_ServerUnregisterModelRepository, "good", s, spare);
  CHECK(TRITONSERVER_ServerUnregisterModelRepository, "twice", s, spare);
  CHECK(TRITONSERVER_ServerUnregisterModelRepository, "null_path", s, NULL);
  TRITONSERVER_ParameterDelete(good);
  TRITONSERVER_ParameterDelete(bad);
  CHECK(TRITONSERVER_ServerPollModelRepository, "not_poll", s);
}

/* ---- Traces ------------------------------------------------------------ */

static void
on_activity(
    TRITONSERVER_InferenceTrace* trace, TRITONSERVER_InferenceTraceActivity a,
    uint64_t ts, void* userp)
{
  (void)trace;
  (void)a;
  (void)ts;
  (void)userp;
}

static void
on_release(TRITONSERVER_InferenceTrace* trace, void* userp)
{
  (void)userp;
  TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceTraceDelete(trace));
}

static int released;

static void
count_release(TRITONSERVER_InferenceTrace* trace, void* userp)
{
  (void)trace;
  (void)userp;
  released++;
}

static TRITONSERVER_Error*
alloc_host(
    TRITONSERVER_ResponseAllocator* a, const char* name, size_t size,
    TRITONSERVER_MemoryType type, int64_t id, void* userp, void** buffer,
    void** buffer_userp, TRITONSERVER_MemoryType* actual_type,
    int64_t* actual_id)
{
  (void)a;
  (void)name;
  (void)type;
  (void)id;
  (void)userp;
  *buffer = malloc(size > 0 ? size : 1);
  *buffer_userp = NULL;
  *actual_type = TRITONSERVER_MEMORY_CPU;
  *actual_id = 0;
  return NULL;
}

static TRITONSERVER_Error*
free_host(
    TRITONSERVER_ResponseAllocator* a, void* buffer, void* buffer_userp,
    size_t size, TRITONSERVER_MemoryType type, int64_t id)
{
  (void)a;
  (void)buffer_userp;
  (void)size;
  (void)type;
  (void)id;
  free(buffer);
  return NULL;
}

static void
ignore_response(
    TRITONSERVER_InferenceResponse* r, const uint32_t flags, void* userp)
{
  (void)flags;
  (void)userp;
  TRITONSERVER_InferenceResponseDelete(r);
}

static void
ignore_release(
    TRITONSERVER_InferenceRequest* r, const uint32_t flags, void* userp)
{
  (void)r;
  (void)flags;
  (void)userp;
}

/* A request that fails its checks (identity without its input) leaves
 * the trace given with it to the caller, unreleased, as Triton does: the
 * caller deletes it. */
static void
check_refused_request_keeps_trace(TRITONSERVER_Server* s)
{
  TRITONSERVER_InferenceRequest* req = NULL;
  TRITONSERVER_ResponseAllocator* alloc = NULL;
  TRITONSERVER_InferenceTrace* t = NULL;
  if (!CHECK(
          TRITONSERVER_InferenceRequestNew, "for_trace", &req, s, "identity",
          -1))
    return;
  TRITONSERVER_ResponseAllocatorNew(&alloc, alloc_host, free_host, NULL);
  TRITONSERVER_InferenceRequestSetReleaseCallback(req, ignore_release, NULL);
  TRITONSERVER_InferenceRequestSetResponseCallback(
      req, alloc, NULL, ignore_response, NULL);
  TRITONSERVER_InferenceTraceNew(
      &t, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 0, on_activity, count_release,
      NULL);
  released = 0;
  CHECK(TRITONSERVER_ServerInferAsync, "refused_with_trace", s, req, t);
  printf("value trace.released_by_refusal=%d\n", released);
  CHECK(TRITONSERVER_InferenceTraceDelete, "after_refusal", t);
  TRITONSERVER_InferenceRequestDelete(req);
  TRITONSERVER_ResponseAllocatorDelete(alloc);
}

static void
check_traces(void)
{
  TRITONSERVER_InferenceTrace *t = NULL, *child = NULL;
  const char* s = NULL;
  uint64_t id = 0, parent = 0;
  CHECK(
      TRITONSERVER_InferenceTraceNew, "null_out", NULL,
      TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 0, on_activity, on_release, NULL);
  CHECK(
      TRITONSERVER_InferenceTraceNew, "null_release_fn", &t,
      TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 0, on_activity, NULL, NULL);
  CHECK(
      TRITONSERVER_InferenceTraceTensorNew, "null_out", NULL,
      TRITONSERVER_TRACE_LEVEL_TENSORS, 0, on_activity, NULL, on_release, NULL);
  if (CHECK(
          TRITONSERVER_InferenceTraceTensorNew, "good", &t,
          TRITONSERVER_TRACE_LEVEL_TENSORS, 0, on_activity, NULL, on_release,
          NULL))
    CHECK(TRITONSERVER_InferenceTraceDelete, "tensor_trace", t);
  if (!CHECK(
          TRITONSERVER_InferenceTraceNew, "good", &t,
          TRITONSERVER_TRACE_LEVEL_MIN, 42, on_activity, on_release, NULL))
    return;
  if (CHECK(TRITONSERVER_InferenceTraceParentId, "new", t, &parent))
    printf("value trace.parent_id=%llu\n", (unsigned long long)parent);
  CHECK(TRITONSERVER_InferenceTraceContext, "empty", t, &s);
  printf("value trace.empty_context=\"%s\"\n", s != NULL ? s : "(null)");
  CHECK(TRITONSERVER_InferenceTraceSetContext, "good", t, "{\"k\":1}");
  CHECK(TRITONSERVER_InferenceTraceSetContext, "null_context", t, NULL);
  if (CHECK(TRITONSERVER_InferenceTraceContext, "good", t, &s))
    printf("value trace.context=%s\n", s);
  CHECK(TRITONSERVER_InferenceTraceContext, "null_out", t, NULL);
  CHECK(TRITONSERVER_InferenceTraceSpawnChildTrace, "null_trace", NULL, &child);
  printf("value trace.null_child=%s\n", child == NULL ? "NULL" : "set");
  CHECK(TRITONSERVER_InferenceTraceSpawnChildTrace, "null_out", t, NULL);
  CHECK(
      TRITONSERVER_InferenceTraceSpawnChildTrace, "made_up_trace", MADE_UP,
      &child);
  if (CHECK(TRITONSERVER_InferenceTraceSpawnChildTrace, "good", t, &child)) {
    TRITONSERVER_InferenceTraceId(t, &id);
    TRITONSERVER_InferenceTraceParentId(child, &parent);
    printf(
        "value trace.child_parent_is_parent=%s\n",
        parent == id ? "true" : "false");
    TRITONSERVER_InferenceTraceContext(child, &s);
    printf("value trace.child_context=\"%s\"\n", s);
    CHECK(TRITONSERVER_InferenceTraceDelete, "child", child);
  }
  CHECK(TRITONSERVER_InferenceTraceDelete, "good", t);
  CHECK(TRITONSERVER_InferenceTraceDelete, "twice", t);
  CHECK(TRITONSERVER_InferenceTraceSetContext, "deleted_trace", t, "x");
  CHECK(TRITONSERVER_InferenceTraceDelete, "null_trace", NULL);
}

int
main(int argc, char** argv)
{
  if (argc != 4) {
    fprintf(
        stderr, "usage: %s <repository> <backends> <spare repository>\n",
        argv[0]);
    return 2;
  }
  repo = argv[1];
  backends = argv[2];
  spare = argv[3];
  check_options();
  check_new_and_delete();
  check_traces();

  TRITONSERVER_Server* s = NULL;
  TRITONSERVER_ServerOptions* o = options(TRITONSERVER_MODEL_CONTROL_NONE);
  int ok =
      report("TRITONSERVER_ServerNew", "none", TRITONSERVER_ServerNew(&s, o));
  TRITONSERVER_ServerOptionsDelete(o);
  if (ok) {
    check_queries(s);
    check_refused_request_keeps_trace(s);
    TRITONSERVER_ErrorDelete(TRITONSERVER_ServerDelete(s));
  }
  o = options(TRITONSERVER_MODEL_CONTROL_POLL);
  ok = report("TRITONSERVER_ServerNew", "poll", TRITONSERVER_ServerNew(&s, o));
  TRITONSERVER_ServerOptionsDelete(o);
  if (ok) {
    CHECK(TRITONSERVER_ServerPollModelRepository, "good", s);
    CHECK(TRITONSERVER_ServerPollModelRepository, "null_server", NULL);
    CHECK(TRITONSERVER_ServerLoadModel, "poll", s, "identity");
    TRITONSERVER_ErrorDelete(TRITONSERVER_ServerDelete(s));
  }
  o = options(TRITONSERVER_MODEL_CONTROL_EXPLICIT);
  ok = report(
      "TRITONSERVER_ServerNew", "explicit", TRITONSERVER_ServerNew(&s, o));
  TRITONSERVER_ServerOptionsDelete(o);
  if (ok) {
    check_control(s);
    TRITONSERVER_ErrorDelete(TRITONSERVER_ServerDelete(s));
  }
  printf("done\n");
  return 0;
}
