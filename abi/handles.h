// Internal layout of the objects behind the opaque handles of the Triton
// backend API. Backends only ever see pointers to these; the layouts are the
// host's business and may change freely.
//
// Memory: every object here is C memory (malloc). Go code fills request
// blocks and reads responses, but no Go pointer is ever stored in these
// structs except input buffer pointers, which the Go side pins with a
// runtime.Pinner for as long as the request block lives.
//
// Threads: objects reachable from a request (request, inputs) are used by the
// backend between Execute and RequestRelease, from any thread, read-only.
// Factories, responses and outputs may be used from any thread, each by one
// thread at a time as the Triton API requires. The request context's counters
// are atomic.
#ifndef TRITONHOST_ABI_HANDLES_H
#define TRITONHOST_ABI_HANDLES_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

// Magic numbers mark live objects; a handle whose magic does not match is
// refused with INVALID_ARG instead of being used.
enum {
  THOST_MAGIC_BACKEND = 0x42434b31,
  THOST_MAGIC_ATTR = 0x41545452,
  THOST_MAGIC_MODEL = 0x4d4f444c,
  THOST_MAGIC_INSTANCE = 0x494e5354,
  THOST_MAGIC_REQUEST = 0x52455155,
  THOST_MAGIC_INPUT = 0x494e5054,
  THOST_MAGIC_FACTORY = 0x46414354,
  THOST_MAGIC_RESPONSE = 0x52455350,
  THOST_MAGIC_OUTPUT = 0x4f555450,
  THOST_MAGIC_MESSAGE = 0x4d534753,
  THOST_MAGIC_RSTATS = 0x52535441,
  THOST_MAGIC_MEMMGR = 0x4d454d4d,
  THOST_MAGIC_STATE = 0x53544154,
  THOST_MAGIC_TRACE = 0x54524143,
  THOST_MAGIC_DEAD = 0x44454144,
};

struct TRITONSERVER_Error {
  TRITONSERVER_Error_Code code;
  char msg[];  // NUL-terminated
};

struct TRITONSERVER_Message {
  uint32_t magic;
  bool host_owned;  // BackendConfig / HostPolicy: the backend must not delete
  size_t len;       // bytes of json, without the NUL
  char json[];      // NUL-terminated
};

struct TRITONSERVER_BufferAttributes {
  TRITONSERVER_MemoryType memory_type;
  int64_t memory_type_id;
  uint64_t byte_size;
  void* cuda_ipc_handle;
};

struct TRITONSERVER_Parameter {
  char* name;
  TRITONSERVER_ParameterType type;
  int64_t i;
  double d;
  bool b;
  char* s;      // STRING value (NUL-terminated)
  void* bytes;  // BYTES value
  uint64_t byte_size;
};

// The server object backends get from TRITONBACKEND_ModelServer; it only has
// an identity (the in-process server API is not offered to backends).
struct TRITONSERVER_Server {
  uint32_t magic;
};

struct TRITONBACKEND_MemoryManager {
  uint32_t magic;
};

struct TRITONBACKEND_Backend {
  uint32_t magic;
  char* name;
  char* artifacts;  // directory of the backend library
  TRITONSERVER_Message* config;  // host-owned {"cmdline":{...}}
  TRITONBACKEND_ExecutionPolicy policy;
  void* state;
  TRITONBACKEND_MemoryManager* memory_manager;
};

struct thost_preferred_group {
  TRITONSERVER_InstanceGroupKind kind;
  uint64_t count;
  uint64_t device_count;
  uint64_t* device_ids;
};

struct TRITONBACKEND_BackendAttribute {
  uint32_t magic;
  bool parallel_instance_loading;
  uint32_t group_count;
  struct thost_preferred_group groups[16];
};

struct TRITONBACKEND_Model {
  uint32_t magic;
  uint64_t key;  // Go model table key
  char* name;
  uint64_t version;
  char* repository;  // the model's directory
  TRITONBACKEND_Backend* backend;
  void* state;
  bool auto_complete;
  pthread_mutex_t config_mu;
  char* config_json;  // NUL-terminated, replaced by ModelSetConfig
  size_t config_len;
};

struct TRITONBACKEND_ModelInstance {
  uint32_t magic;
  uint64_t key;  // Go instance table key
  char* name;
  TRITONSERVER_InstanceGroupKind kind;
  int32_t device_id;
  bool passive;
  TRITONBACKEND_Model* model;
  void* state;
  TRITONSERVER_Message* host_policy;  // host-owned {"<policy>":{}}
  uint32_t profile_count;
  char** profiles;
};

// A response-statistics report waiting to reach Go.
struct thost_rstat {
  uint64_t instance_key;
  uint64_t start;
  uint64_t compute_output_start;
  uint64_t end;
  int32_t has_error;
  int32_t error_code;
};

// Reports buffered per request before they ride along with the request's
// next crossing into Go (a send, a final flag, the context's end), so a
// decoupled backend that reports statistics for every response does not
// pay a second crossing per response.
#define THOST_PENDING_RSTATS 16

// The trace of a traced request, inside its request block (so it lives
// until the request is released).
struct TRITONSERVER_InferenceTrace {
  uint32_t magic;
  uint64_t request_key;  // the request context key, to report activities
  uint64_t id;
  uint64_t parent_id;
  int64_t model_version;
  const char* model_name;
  const char* request_id;
};

// Per-request context shared by the request block, its factories and its
// unsent responses. When the last reference goes, the Go side learns that
// the backend has let go of the request.
struct thost_reqctx {
  uint64_t key;        // Go request table key
  int32_t refs;        // atomic
  int32_t cancelled;   // atomic, set by Go when the client cancels
  pthread_mutex_t mu;  // guards pending
  uint32_t npending;
  struct thost_rstat pending[THOST_PENDING_RSTATS];
};

struct thost_buffer {
  const void* base;
  TRITONSERVER_BufferAttributes attrs;  // byte_size, CPU memory
};

struct TRITONBACKEND_Input {
  uint32_t magic;
  TRITONSERVER_DataType datatype;
  const char* name;
  const int64_t* shape;
  uint32_t dims_count;
  uint32_t buffer_count;
  uint64_t byte_size;
  struct thost_buffer* buffers;
};

struct thost_param {
  const char* name;
  TRITONSERVER_ParameterType type;
  const void* value;  // STRING: the string; INT/BOOL/DOUBLE: &i/&b/&d
  int64_t i;
  double d;
  bool b;
};

// A request block: one allocation holding everything a backend can read
// from the request. Filled by Go before Execute, freed when the backend
// releases the request.
struct TRITONBACKEND_Request {
  uint32_t magic;
  uint32_t input_count;
  uint32_t output_count;
  uint32_t param_count;
  uint32_t flags;
  struct TRITONBACKEND_Input* inputs;
  const char** output_names;
  struct thost_param* params;
  const char* id;
  const char* correlation_id_string;  // NULL when the id is numeric
  uint64_t correlation_id;
  uint64_t timeout_us;                 // 0: none
  struct thost_reqctx* ctx;
  TRITONBACKEND_ModelInstance* instance;
  struct TRITONBACKEND_State* states;  // implicit states not yet updated (state.h), guarded by ctx->mu
  TRITONSERVER_InferenceTrace* trace;  // NULL when the request is not traced
};

struct TRITONBACKEND_ResponseFactory {
  uint32_t magic;
  struct thost_reqctx* ctx;
};

#define THOST_INLINE_OUTPUT_BYTES 64

struct TRITONBACKEND_Output {
  uint32_t magic;
  TRITONSERVER_DataType datatype;
  char* name;
  int64_t* shape;
  uint32_t dims_count;
  bool has_buffer;
  void* buffer;  // inline or malloc'd
  uint64_t byte_size;
  TRITONSERVER_BufferAttributes attrs;
  unsigned char inline_data[THOST_INLINE_OUTPUT_BYTES];
};

struct TRITONBACKEND_Response {
  uint32_t magic;
  uint32_t output_count;
  uint32_t output_cap;
  uint32_t param_count;
  uint32_t param_cap;
  struct thost_reqctx* ctx;
  struct TRITONBACKEND_Output** outputs;  // inline_outputs until more are needed
  struct TRITONSERVER_Parameter* params;
  struct TRITONBACKEND_Output* inline_outputs[2];
};

struct TRITONBACKEND_ModelInstanceResponseStatistics {
  uint32_t magic;
  TRITONBACKEND_ModelInstance* instance;
  TRITONBACKEND_ResponseFactory* factory;
  uint64_t response_start;
  uint64_t compute_output_start;
  uint64_t response_end;
  bool has_error;
  TRITONSERVER_Error_Code error_code;
};

// One memory-usage entry as reported to Go.
struct thost_usage {
  int32_t memory_type;
  int64_t memory_type_id;
  uint64_t byte_size;
};

// Live-object counters for leak checks (atomic).
enum {
  THOST_COUNT_REQUEST,
  THOST_COUNT_CONTEXT,
  THOST_COUNT_FACTORY,
  THOST_COUNT_RESPONSE,
  THOST_COUNT_RSTATS,
  THOST_COUNT_HOST_MESSAGE,
  THOST_COUNT_STATE,
  THOST_COUNT_MAX
};
extern int64_t thost_live[THOST_COUNT_MAX];
static inline void thost_count(int which, int64_t delta) {
  __atomic_add_fetch(&thost_live[which], delta, __ATOMIC_RELAXED);
}

static inline int64_t thost_live_count(int which) {
  return __atomic_load_n(&thost_live[which], __ATOMIC_RELAXED);
}

// Host-side helpers (defined in the .c files, hidden from backends).
TRITONSERVER_Error* thost_error_new_n(TRITONSERVER_Error_Code code, const char* msg, size_t len);
TRITONSERVER_Error* thost_errorf(TRITONSERVER_Error_Code code, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
TRITONSERVER_Message* thost_message_new(const char* json, size_t len, bool host_owned);
void thost_message_free(TRITONSERVER_Message* msg);
char* thost_strndup(const char* s, size_t n);

struct thost_reqctx* thost_reqctx_new(uint64_t key);
uint32_t thost_reqctx_take_stats(struct thost_reqctx* ctx, struct thost_rstat* out);
void thost_reqctx_ref(struct thost_reqctx* ctx);
void thost_reqctx_unref(struct thost_reqctx* ctx);
void thost_request_free(TRITONBACKEND_Request* req);
void thost_request_free_states(TRITONBACKEND_Request* req);  // state.c

void thost_log_set_enabled(int level, bool on);
void thost_model_set_config_json(TRITONBACKEND_Model* model, const char* json, size_t len);

// Invalid-handle checks used by every entry point.
#define THOST_CHECK_ARG(cond, what)                                             \
  do {                                                                         \
    if (!(cond))                                                               \
      return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG, "%s: %s", __func__, what); \
  } while (0)

#define THOST_CHECK_HANDLE(ptr, MAGIC, what)                                   \
  THOST_CHECK_ARG((ptr) != NULL && (ptr)->magic == (MAGIC), "invalid " what)

#endif  // TRITONHOST_ABI_HANDLES_H
