// TRITONSERVER_ServerOptions* functions: the C side checks the handle and
// the pointers, Go keeps and checks the settings (options.go).
#include "server_options.h"

#include <stdlib.h>

#include "_cgo_export.h"

static TRITONSERVER_Error*
set(const char* fn, TRITONSERVER_ServerOptions* options,
    enum thost_option which, struct thost_option_value v)
{
  struct thost_server_options* o =
      thost_handle_object(options, THOST_KIND_SERVER_OPTIONS);
  if (o == NULL) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG, "%s: invalid server options", fn);
  }
  return thostOptionsSet(o->key, (int)which, &v, (char*)fn);
}

// Sets option WHICH to the value whose fields follow.
#define SET(WHICH, ...) \
  return set(__func__, options, WHICH, (struct thost_option_value){__VA_ARGS__})
#define NOT_NULL(X) THOST_CHECK_ARG((X) != NULL, #X " is NULL")

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsNew(TRITONSERVER_ServerOptions** options)
{
  NOT_NULL(options);
  struct thost_server_options* o = calloc(1, sizeof(*o));
  if (o == NULL) {
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", __func__);
  }
  o->handle = thost_handle_new(THOST_KIND_SERVER_OPTIONS, o);
  if (o->handle == 0) {
    free(o);
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL, "%s: out of handles", __func__);
  }
  o->key = thostOptionsNew();
  *options = THOST_AS_HANDLE(TRITONSERVER_ServerOptions, o->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsDelete(TRITONSERVER_ServerOptions* options)
{
  if (options == NULL)
    return NULL;  // as deleting a null pointer in Triton
  struct thost_server_options* o;
  THOST_OBJECT(o, options, THOST_KIND_SERVER_OPTIONS, "server options");
  thostOptionsDelete(o->key);
  thost_handle_free(o->handle);
  free(o);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetServerId(
    TRITONSERVER_ServerOptions* options, const char* server_id)
{
  NOT_NULL(server_id);
  SET(THOST_OPT_SERVER_ID, .s1 = server_id);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetModelRepositoryPath(
    TRITONSERVER_ServerOptions* options, const char* model_repository_path)
{
  NOT_NULL(model_repository_path);
  SET(THOST_OPT_REPOSITORY, .s1 = model_repository_path);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetModelControlMode(
    TRITONSERVER_ServerOptions* options, TRITONSERVER_ModelControlMode mode)
{
  SET(THOST_OPT_CONTROL_MODE, .i = (int64_t)mode);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetStartupModel(
    TRITONSERVER_ServerOptions* options, const char* model_name)
{
  NOT_NULL(model_name);
  SET(THOST_OPT_STARTUP_MODEL, .s1 = model_name);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetStrictModelConfig(
    TRITONSERVER_ServerOptions* options, bool strict)
{
  SET(THOST_OPT_STRICT_CONFIG, .b = strict);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetModelConfigName(
    TRITONSERVER_ServerOptions* options, const char* model_config_name)
{
  NOT_NULL(model_config_name);
  SET(THOST_OPT_CONFIG_NAME, .s1 = model_config_name);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetRateLimiterMode(
    TRITONSERVER_ServerOptions* options, TRITONSERVER_RateLimitMode mode)
{
  SET(THOST_OPT_RATE_LIMITER, .i = (int64_t)mode);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsAddRateLimiterResource(
    TRITONSERVER_ServerOptions* options, const char* resource_name,
    const size_t resource_count, const int device)
{
  NOT_NULL(resource_name);
  SET(THOST_OPT_RATE_LIMITER_RESOURCE, .s1 = resource_name, .u = resource_count,
      .i = device);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize(
    TRITONSERVER_ServerOptions* options, uint64_t size)
{
  SET(THOST_OPT_PINNED_POOL, .u = size);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize(
    TRITONSERVER_ServerOptions* options, int gpu_device, uint64_t size)
{
  SET(THOST_OPT_CUDA_POOL, .i = gpu_device, .u = size);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize(
    TRITONSERVER_ServerOptions* options, int gpu_device,
    size_t cuda_virtual_address_size)
{
  SET(THOST_OPT_CUDA_VIRTUAL_ADDRESS, .i = gpu_device,
      .u = cuda_virtual_address_size);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetResponseCacheByteSize(
    TRITONSERVER_ServerOptions* options, uint64_t size)
{
  SET(THOST_OPT_RESPONSE_CACHE_SIZE, .u = size);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetCacheConfig(
    TRITONSERVER_ServerOptions* options, const char* cache_name,
    const char* config_json)
{
  NOT_NULL(cache_name);
  NOT_NULL(config_json);
  SET(THOST_OPT_CACHE_CONFIG, .s1 = cache_name, .s2 = config_json);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetCacheDirectory(
    TRITONSERVER_ServerOptions* options, const char* cache_dir)
{
  NOT_NULL(cache_dir);
  SET(THOST_OPT_CACHE_DIRECTORY, .s1 = cache_dir);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability(
    TRITONSERVER_ServerOptions* options, double cc)
{
  SET(THOST_OPT_MIN_COMPUTE_CAPABILITY, .d = cc);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetExitOnError(
    TRITONSERVER_ServerOptions* options, bool exit)
{
  SET(THOST_OPT_EXIT_ON_ERROR, .b = exit);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetStrictReadiness(
    TRITONSERVER_ServerOptions* options, bool strict)
{
  SET(THOST_OPT_STRICT_READINESS, .b = strict);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetExitTimeout(
    TRITONSERVER_ServerOptions* options, unsigned int timeout)
{
  SET(THOST_OPT_EXIT_TIMEOUT, .u = timeout);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetBufferManagerThreadCount(
    TRITONSERVER_ServerOptions* options, unsigned int thread_count)
{
  SET(THOST_OPT_BUFFER_MANAGER_THREADS, .u = thread_count);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetModelLoadThreadCount(
    TRITONSERVER_ServerOptions* options, unsigned int thread_count)
{
  SET(THOST_OPT_LOAD_THREADS, .u = thread_count);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetModelLoadRetryCount(
    TRITONSERVER_ServerOptions* options, unsigned int retry_count)
{
  SET(THOST_OPT_LOAD_RETRIES, .u = retry_count);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetModelNamespacing(
    TRITONSERVER_ServerOptions* options, bool enable_namespace)
{
  SET(THOST_OPT_NAMESPACING, .b = enable_namespace);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetEnablePeerAccess(
    TRITONSERVER_ServerOptions* options, bool enable_peer_access)
{
  SET(THOST_OPT_PEER_ACCESS, .b = enable_peer_access);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetLogFile(
    TRITONSERVER_ServerOptions* options, const char* file)
{
  NOT_NULL(file);
  SET(THOST_OPT_LOG_FILE, .s1 = file);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetLogInfo(
    TRITONSERVER_ServerOptions* options, bool log)
{
  SET(THOST_OPT_LOG_INFO, .b = log);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetLogWarn(
    TRITONSERVER_ServerOptions* options, bool log)
{
  SET(THOST_OPT_LOG_WARN, .b = log);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetLogError(
    TRITONSERVER_ServerOptions* options, bool log)
{
  SET(THOST_OPT_LOG_ERROR, .b = log);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetLogFormat(
    TRITONSERVER_ServerOptions* options, const TRITONSERVER_LogFormat format)
{
  SET(THOST_OPT_LOG_FORMAT, .i = (int64_t)format);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetLogVerbose(
    TRITONSERVER_ServerOptions* options, int level)
{
  SET(THOST_OPT_LOG_VERBOSE, .i = level);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetMetrics(
    TRITONSERVER_ServerOptions* options, bool metrics)
{
  SET(THOST_OPT_METRICS, .b = metrics);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetGpuMetrics(
    TRITONSERVER_ServerOptions* options, bool gpu_metrics)
{
  SET(THOST_OPT_GPU_METRICS, .b = gpu_metrics);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetCpuMetrics(
    TRITONSERVER_ServerOptions* options, bool cpu_metrics)
{
  SET(THOST_OPT_CPU_METRICS, .b = cpu_metrics);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetMetricsInterval(
    TRITONSERVER_ServerOptions* options, uint64_t metrics_interval_ms)
{
  SET(THOST_OPT_METRICS_INTERVAL, .u = metrics_interval_ms);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetBackendDirectory(
    TRITONSERVER_ServerOptions* options, const char* backend_dir)
{
  NOT_NULL(backend_dir);
  SET(THOST_OPT_BACKEND_DIRECTORY, .s1 = backend_dir);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetRepoAgentDirectory(
    TRITONSERVER_ServerOptions* options, const char* repoagent_dir)
{
  NOT_NULL(repoagent_dir);
  SET(THOST_OPT_REPOAGENT_DIRECTORY, .s1 = repoagent_dir);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit(
    TRITONSERVER_ServerOptions* options,
    const TRITONSERVER_InstanceGroupKind kind, const int device_id,
    const double fraction)
{
  SET(THOST_OPT_LOAD_DEVICE_LIMIT, .u = (uint64_t)kind, .i = device_id,
      .d = fraction);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetBackendConfig(
    TRITONSERVER_ServerOptions* options, const char* backend_name,
    const char* setting, const char* value)
{
  NOT_NULL(backend_name);
  NOT_NULL(setting);
  NOT_NULL(value);
  SET(THOST_OPT_BACKEND_CONFIG, .s1 = backend_name, .s2 = setting, .s3 = value);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetHostPolicy(
    TRITONSERVER_ServerOptions* options, const char* policy_name,
    const char* setting, const char* value)
{
  NOT_NULL(policy_name);
  NOT_NULL(setting);
  NOT_NULL(value);
  SET(THOST_OPT_HOST_POLICY, .s1 = policy_name, .s2 = setting, .s3 = value);
}

TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetMetricsConfig(
    TRITONSERVER_ServerOptions* options, const char* name, const char* setting,
    const char* value)
{
  NOT_NULL(name);
  NOT_NULL(setting);
  NOT_NULL(value);
  SET(THOST_OPT_METRICS_CONFIG, .s1 = name, .s2 = setting, .s3 = value);
}
