// Server options (TRITONSERVER_ServerOptions*) and server objects made by
// TRITONSERVER_ServerNew: what their C side shares with Go. An options
// object is a handle to a key of the Go table that holds the settings
// (options.go); every setter crosses into Go once with the value, which Go
// checks. A metrics snapshot (TRITONSERVER_Metrics) holds its server and
// the text last formatted.
#ifndef TRITONHOST_ABI_SERVER_OPTIONS_H
#define TRITONHOST_ABI_SERVER_OPTIONS_H

#include "objects.h"

struct thost_server_options {
  uint64_t handle;
  uint64_t key;  // Go options table
};

// What a setter sets (thostOptionsSet's 'which').
enum thost_option {
  THOST_OPT_SERVER_ID,
  THOST_OPT_REPOSITORY,
  THOST_OPT_CONTROL_MODE,
  THOST_OPT_STARTUP_MODEL,
  THOST_OPT_STRICT_CONFIG,
  THOST_OPT_CONFIG_NAME,
  THOST_OPT_RATE_LIMITER,
  THOST_OPT_RATE_LIMITER_RESOURCE,
  THOST_OPT_PINNED_POOL,
  THOST_OPT_CUDA_POOL,
  THOST_OPT_CUDA_VIRTUAL_ADDRESS,
  THOST_OPT_RESPONSE_CACHE_SIZE,
  THOST_OPT_CACHE_CONFIG,
  THOST_OPT_CACHE_DIRECTORY,
  THOST_OPT_MIN_COMPUTE_CAPABILITY,
  THOST_OPT_EXIT_ON_ERROR,
  THOST_OPT_STRICT_READINESS,
  THOST_OPT_EXIT_TIMEOUT,
  THOST_OPT_BUFFER_MANAGER_THREADS,
  THOST_OPT_LOAD_THREADS,
  THOST_OPT_LOAD_RETRIES,
  THOST_OPT_NAMESPACING,
  THOST_OPT_PEER_ACCESS,
  THOST_OPT_LOG_FILE,
  THOST_OPT_LOG_INFO,
  THOST_OPT_LOG_WARN,
  THOST_OPT_LOG_ERROR,
  THOST_OPT_LOG_FORMAT,
  THOST_OPT_LOG_VERBOSE,
  THOST_OPT_METRICS,
  THOST_OPT_GPU_METRICS,
  THOST_OPT_CPU_METRICS,
  THOST_OPT_METRICS_INTERVAL,
  THOST_OPT_BACKEND_DIRECTORY,
  THOST_OPT_REPOAGENT_DIRECTORY,
  THOST_OPT_LOAD_DEVICE_LIMIT,
  THOST_OPT_BACKEND_CONFIG,
  THOST_OPT_HOST_POLICY,
  THOST_OPT_METRICS_CONFIG,
};

// The value of one setter: the strings it takes (s1..s3, NULL when
// unused), a signed and an unsigned integer, a double and a bool.
struct thost_option_value {
  const char* s1;
  const char* s2;
  const char* s3;
  int64_t i;
  uint64_t u;
  double d;
  bool b;
};

struct thost_metrics {
  uint64_t handle;
  struct thost_host* host;  // the server; may be closed by now
  char* text;               // the last formatted text (malloc'd), or NULL
  size_t len;
};

#endif  // TRITONHOST_ABI_SERVER_OPTIONS_H
