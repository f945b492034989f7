// The server's objects behind the handles of the Triton backend API. Backends
// hold handles (handle_table.h), never these addresses; the layouts are the
// server's business and may change freely.
//
// Memory: every object here is C memory. Go fills request blocks and reads
// responses, but no Go pointer is stored here except in a request block:
// input buffers and BYTES parameter values, which Go pins (runtime.Pinner)
// until the backend releases the request.
//
// Threads: objects reachable from a request (request, inputs, trace) are used
// by the backend between Execute and RequestRelease, from any thread,
// read-only. Factories, responses and outputs may be used from any thread,
// each by one thread at a time as the API requires. Counters are atomic.
//
// Servers: every object belongs to one server (struct thost_host), reached
// through the object or its request context. Functions whose arguments name
// no object (logging, metric families, objects a backend creates from
// nothing) use the calling thread's server (thost_ambient_host).
#ifndef TRITONHOST_ABI_OBJECTS_H
#define TRITONHOST_ABI_OBJECTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "handle_table.h"
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

struct thost_caller_alloc;  // inprocess.h

// ---- Servers ----------------------------------------------------------------

// What the live counters of a server count (leak checks).
enum {
  THOST_COUNT_REQUEST,       // request blocks not yet released
  THOST_COUNT_CONTEXT,       // requests a backend still holds anything of
  THOST_COUNT_FACTORY,       // response factories not deleted
  THOST_COUNT_RESPONSE,      // responses neither sent nor deleted
  THOST_COUNT_LENT,          // sent responses whose memory the server still
                             // reads (thost_sent_response_free not yet run)
  THOST_COUNT_RSTATS,        // response statistics not deleted
  THOST_COUNT_HOST_MESSAGE,  // server-owned messages (backend config, host
                             // policy)
  THOST_COUNT_STATE,         // implicit states not yet updated
  THOST_COUNT_METRIC_FAMILY,
  THOST_COUNT_METRIC,
  THOST_COUNT_METRIC_ARGS,
  THOST_COUNT_SERIES,
  THOST_COUNT_INFER_REQUEST,   // inference requests a backend has not deleted
  THOST_COUNT_INFER_RESPONSE,  // delivered responses not deleted
  THOST_COUNT_ALLOCATOR,       // response allocators not deleted
  THOST_COUNT_MAX
};

// Host memory kept for the outputs of responses (output_cache.c).
#define THOST_OUTBUF_MIN_BYTES (64 << 10)
#define THOST_OUTBUF_MAX_COUNT 64
struct thost_outbuf;
struct thost_outbuf_cache {
  pthread_mutex_t mu;
  uint64_t max_bytes;  // 0: keeps nothing
  uint64_t bytes;
  uint32_t count;
  struct thost_outbuf* newest;
};

// A buffer of at least size bytes (*cap: how many), cached or malloc'd;
// NULL when out of memory.
void* thost_outbuf_get(
    struct thost_outbuf_cache* c, uint64_t size, uint64_t* cap);
// Keeps a buffer from thost_outbuf_get for the next ones, or frees it.
void thost_outbuf_put(struct thost_outbuf_cache* c, void* buf, uint64_t cap);

// One server's C side. Never freed: a backend thread may still remember it as
// its ambient server after the server stopped (closed is then set).
struct thost_host {
  uint64_t key;     // the Go Host's registry key
  uint64_t server;  // its TRITONSERVER_Server handle
  int closed;       // atomic
  int has_devices;  // set once by Go before any backend runs: GPU and pinned
                    // memory come from the Go side's Devices
                    // (exports_device.go)
  int log_on[4];    // atomic, by TRITONSERVER_LogLevel: mirrored from the Go
                    // logger
  int64_t live[THOST_COUNT_MAX];  // atomic; with the threads' shares
                                  // (struct thost_thread_counts)
  struct thost_outbuf_cache outbufs;
};

// A thread's share of the live counters, so that counting the objects a
// backend makes and frees for every response (a response, its statistics)
// takes no atomic read-modify-write: a server's count is its own counter
// (thost_host.live) plus those of every thread counting for it, summed
// when read (thost_host_live, under the registry's mutex). A thread counts
// on its own counters for one server at a time, the first it counts for,
// and moves to another once that one is closed; meanwhile it counts for
// any other on that server's counters. THOST_COUNT_LENT, which Go changes
// too, is always counted on the server's.
struct thost_thread_counts {
  struct thost_host* host;  // changed by the owning thread only, under the
                            // registry's mutex; NULL: not counting yet
  int64_t live[THOST_COUNT_MAX];     // atomic: stored by the owning thread
                                     // only, read by thost_host_live
  struct thost_thread_counts* next;  // the registry's list, under its mutex
};

// The calling thread's counters (host.c).
extern __thread struct thost_thread_counts thost_thread_counts;

// Counts delta for h where the calling thread's counters cannot (host.c).
void thost_count_slow(struct thost_host* h, int which, int64_t delta);

static inline void
thost_count(struct thost_host* h, int which, int64_t delta)
{
  struct thost_thread_counts* c = &thost_thread_counts;
  if (h != NULL && c->host == h && which != THOST_COUNT_LENT) {
    int64_t v = __atomic_load_n(&c->live[which], __ATOMIC_RELAXED);
    __atomic_store_n(&c->live[which], v + delta, __ATOMIC_RELAXED);
    return;
  }
  thost_count_slow(h, which, delta);
}

// The server of the calling thread: the one whose entry point or request the
// thread last worked for (thost_enter_host), else the newest open server.
// NULL when no server is open.
struct thost_host* thost_ambient_host(void);
void thost_enter_host(struct thost_host* h);

// Zero bytes for thost_clear to copy (host.c).
extern const unsigned char thost_zeros[256];

// Zeroes the first n bytes at p. A constant n of up to 256 bytes is copied
// from thost_zeros, which GCC compiles to a few vector stores, where its
// memset of more than 128 bytes at -O2 on x86-64 is a `rep stos`, whose
// start-up costs tens of cycles each time: the objects made for every
// response are cleared this way.
static inline void
thost_clear(void* p, size_t n)
{
  if (__builtin_constant_p(n) && n <= sizeof(thost_zeros))
    memcpy(p, thost_zeros, n);
  else
    memset(p, 0, n);
}

// A zeroed allocation of size bytes, as calloc(1, size), for what is made
// and freed once per request or response. glibc's calloc never takes a
// chunk from the calling thread's cache (tcache), while free fills it:
// with calloc, a steady stream of requests sends every free past the full
// cache into the arena's bins and their consolidation, and every
// allocation into the arena. NULL when out of memory.
static inline void*
thost_zalloc(size_t size)
{
  void* p = malloc(size);
  // Keeps the compiler from folding malloc and memset back into calloc.
  __asm__ volatile("" : "+r"(p));
  if (p != NULL)
    thost_clear(p, size);
  return p;
}

// ---- Messages, buffer attributes, parameters, errors ---------------------

struct TRITONSERVER_Error {
  TRITONSERVER_Error_Code code;
  char msg[];  // NUL-terminated
};

// Parameters are plain pointers (the backend owns them), as are errors.
struct TRITONSERVER_Parameter {
  char* name;
  TRITONSERVER_ParameterType type;
  int64_t i;
  double d;
  bool b;
  char* s;      // STRING value (NUL-terminated)
  void* bytes;  // BYTES value
  uint64_t byte_size;
  // The lengths of name and s (0 without s), so that Go reads them without
  // looking for their ends.
  size_t name_len;
  size_t s_len;
};

struct thost_message {
  uint64_t handle;
  struct thost_host*
      host;     // set for a server-owned message (counted), else NULL
  size_t len;   // bytes of json, without the NUL
  char json[];  // NUL-terminated
};

// Buffer attributes: made by a backend (TRITONSERVER_BufferAttributesNew),
// or owned by an input buffer, output or state (handle made on first use,
// freed with its owner).
struct thost_buffer_attributes {
  uint64_t handle;
  bool server_owned;
  TRITONSERVER_MemoryType memory_type;
  int64_t memory_type_id;
  uint64_t byte_size;
  void* cuda_ipc_handle;
};

// ---- Backends, models, instances --------------------------------------------

struct thost_backend {
  uint64_t handle;
  uint64_t memory_manager;  // TRITONBACKEND_MemoryManager handle (its object is
                            // this backend)
  struct thost_host* host;
  char* name;
  char* artifacts;               // directory of the backend library
  struct thost_message* config;  // server-owned {"cmdline":{...}}
  TRITONBACKEND_ExecutionPolicy policy;
  void* state;  // TRITONBACKEND_BackendSetState
};

struct thost_preferred_group {
  TRITONSERVER_InstanceGroupKind kind;
  uint64_t count;
  uint64_t device_count;
  uint64_t* device_ids;
};

struct thost_backend_attributes {
  uint64_t handle;
  bool parallel_instance_loading;
  uint32_t group_count;
  struct thost_preferred_group groups[16];
};

struct thost_model {
  uint64_t handle;
  uint64_t key;  // Go model table key
  struct thost_backend* backend;
  char* name;
  uint64_t version;
  char* repository;  // the model's directory
  void* state;
  bool auto_complete;
  pthread_mutex_t config_mu;
  char* config_json;  // NUL-terminated, replaced by ModelSetConfig
  size_t config_len;
};

// Batch-statistics reports an instance buffers during one Execute; more go
// to Go at once.
#define THOST_BATCH_STATS 4

struct thost_instance {
  uint64_t handle;
  uint64_t key;  // Go instance table key (a slot and its generation)
  struct thost_model* model;
  char* name;
  TRITONSERVER_InstanceGroupKind kind;
  int32_t device_id;
  bool passive;
  void* state;
  struct thost_message* host_policy;  // server-owned {"<policy>":{}}
  uint32_t profile_count;
  char** profiles;
  // For a GPU instance on a server with GPUs: ctx_fn(ctx_arg) makes its
  // device current on the calling thread (cuCtxSetCurrent and the device's
  // primary context, from package gpu) and returns a CUresult. Called
  // right before each of the instance's entry points (host.c). NULL: none.
  void* ctx_fn;
  void* ctx_arg;
  // Batch-statistics reports made on the thread executing this instance,
  // during TRITONBACKEND_ModelInstanceExecute, that Go has not read yet: Go
  // records them once the call returns, so that they take no crossing of
  // their own. Only that thread writes them while Execute runs (Execute is
  // never called concurrently for one instance), and Go reads them after
  // it returned.
  uint32_t batch_count;
  struct thost_batch_stat {
    uint64_t batch_size;
    uint64_t exec_start;
    uint64_t compute_start;
    uint64_t compute_end;
    uint64_t exec_end;
  } batch[THOST_BATCH_STATS];
};

// The instance whose Execute the calling thread is running (host.c), NULL
// outside one: TRITONBACKEND_ModelInstanceReportBatchStatistics buffers the
// reports of that instance in it.
extern __thread struct thost_instance* thost_executing_instance;

// Whether the calling thread runs an Execute (abi.OnExecutingThread).
static inline bool
thost_on_executing_thread(void)
{
  return thost_executing_instance != NULL;
}

// The instance executing on the calling thread if it has batch statistics
// waiting, else NULL: a crossing that may deliver a response (a send, a
// final flag, a release) takes them along, so that they reach Go before
// the response does, as when they crossed on their own.
static inline struct thost_instance*
thost_batch_waiting(void)
{
  struct thost_instance* i = thost_executing_instance;
  return i != NULL && i->batch_count > 0 ? i : NULL;
}

// ---- Requests ---------------------------------------------------------------

// What a buffered statistics report is.
enum {
  THOST_RSTAT_RESPONSE,  // TRITONBACKEND_ModelInstanceReportResponseStatistics
  THOST_RSTAT_REQUEST,   // TRITONBACKEND_ModelInstanceReportStatistics
};

// A statistics report waiting to reach Go: a block of THOST_POOL_RSTAT
// (block_pool.h), in its request context's pending list. A response's
// report uses start, compute_output_start, end and the error; a request's
// (THOST_RSTAT_REQUEST) uses start (execution start), compute_output_start
// (compute start), compute_end, end (execution end) and has_error (0: the
// request succeeded).
struct thost_rstat {
  struct thost_rstat* next;  // the next report in the list (older first once
                             // taken: thost_reqctx_take_stats)
  uint64_t instance_key;
  uint64_t start;
  uint64_t compute_output_start;
  uint64_t compute_end;
  uint64_t end;
  int32_t kind;  // THOST_RSTAT_*
  int32_t has_error;
  int32_t error_code;
};

// Per-request context shared by the request block, its factories and its
// unsent responses. When the last reference goes, Go learns that the backend
// has let go of the request.
struct thost_reqctx {
  uint64_t key;  // Go request table key (a slot and its generation)
  struct thost_host* host;
  int32_t refs;        // atomic
  int32_t cancelled;   // atomic, set by Go when the client cancels
  pthread_mutex_t mu;  // guards the block's states (state.c)
  // The allocator of the backend that submitted the request
  // (TRITONSERVER_ServerInferAsync), owned; NULL for other requests. Set
  // before the first block of the request is built, then read-only.
  struct thost_caller_alloc* caller;
  // Response-statistics reports not yet handed to Go, newest first: a
  // lock-free stack (pushed with a compare-and-swap by any thread, taken
  // whole with an exchange), so that a backend reporting every response
  // takes no lock. They ride along with the request's next crossing into
  // Go (a send, a final flag, the context's end).
  struct thost_rstat* pending;  // atomic
  uint32_t npending;            // atomic loads and stores, approximate (threads
                      // reporting at once, or while the list is taken, may
                      // lose counts): bounds the list
};

// Reports past this many pending go to Go at once (a backend that reports
// without ever sending), so the list stays short.
#define THOST_PENDING_RSTATS 64

struct thost_buffer {
  const void* base;
  struct thost_buffer_attributes attrs;  // byte_size, CPU memory
};

struct thost_input {
  uint64_t handle;  // made on first use
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

// A trace. Either the trace of a request a backend serves, inside its
// request block (ctx set, strings in the block; it lives until the request
// is released), or a trace a caller owns (standalone: made by
// TRITONSERVER_InferenceTraceNew/TensorNew or SpawnChildTrace, malloc'd
// with its strings; key names its Go record, traces.go). See trace.c.
struct thost_trace {
  uint64_t handle;  // made on first use in a block, at creation otherwise
  struct thost_reqctx* ctx;  // a block's trace: its request's context
  uint64_t key;              // a standalone trace: its Go record
  uint64_t id;
  uint64_t parent_id;
  int64_t model_version;
  const char* model_name;
  const char* request_id;
  const char* context;  // "" when none; replaced by SetContext
  char* set_context;    // a block's trace: the context SetContext gave
  bool standalone;
  int32_t in_flight;  // atomic: given to ServerInferAsync, not yet back
  TRITONSERVER_InferenceTraceLevel level;  // TIMESTAMPS and/or TENSORS bits
  TRITONSERVER_InferenceTraceActivityFn_t activity_fn;      // may be NULL
  TRITONSERVER_InferenceTraceTensorActivityFn_t tensor_fn;  // may be NULL
  // NULL for a child of a trace the server made: the server frees it once
  // its request has finished.
  TRITONSERVER_InferenceTraceReleaseFn_t release_fn;
  void* userp;
};

struct thost_state;

// A request block: one allocation holding everything a backend can read from
// the request. Filled by Go before Execute, freed when the backend releases
// the request.
struct thost_request {
  uint64_t handle;
  uint32_t input_count;
  uint32_t output_count;
  uint32_t param_count;
  uint32_t flags;
  struct thost_input* inputs;
  const char** output_names;
  struct thost_param* params;
  const char* id;
  const char* correlation_id_string;  // NULL when the id is numeric
  uint64_t correlation_id;
  uint64_t timeout_us;  // 0: none
  struct thost_reqctx* ctx;
  struct thost_instance* instance;
  struct thost_state*
      states;  // implicit states not yet updated (state.h), guarded by ctx->mu
  struct thost_trace* trace;  // NULL when the request is not traced
};

// ---- Responses --------------------------------------------------------------

struct thost_factory {
  uint64_t handle;
  struct thost_reqctx* ctx;
};

#define THOST_INLINE_OUTPUT_BYTES 64
// An output whose shape has at most this many dimensions, and whose name
// at most THOST_INLINE_NAME_BYTES - 1 bytes, keeps both inside itself.
#define THOST_INLINE_DIMS 8
#define THOST_INLINE_NAME_BYTES 32

// An output of a response. The first THOST_RESPONSE_BLOCK_OUTPUTS outputs of
// a response live inside the response's own block (in_block); others are
// malloc'd with their shape and name behind them.
struct thost_output {
  uint64_t handle;
  TRITONSERVER_DataType datatype;
  char* name;
  int64_t* shape;
  uint32_t dims_count;
  bool has_buffer;
  // device_buffer: buffer is GPU or pinned memory from the host's Devices
  // (attrs says which), returned to them when the response is freed.
  bool device_buffer;
  bool in_block;        // inside its response's block: not freed on its own
  void* buffer;         // inline_data, from host->outbufs (or malloc'd when
                        // there is no host), device memory (device_buffer)
                        // or from the caller's allocator (caller_buffer)
  uint64_t buffer_cap;  // bytes at buffer, from host->outbufs
  uint64_t byte_size;
  struct thost_host* host;  // the server of the response
  // The submitter's allocator, when the response answers a request a backend
  // submitted (its context's, valid while the response lives), and what it
  // handed out for the buffer (caller_buffer set).
  const struct thost_caller_alloc* caller;
  bool caller_buffer;
  void* buffer_userp;
  struct thost_buffer_attributes attrs;
  // Not cleared when the output is made (THOST_OUTPUT_CLEARED_BYTES): each
  // is written before it is read.
  unsigned char inline_data[THOST_INLINE_OUTPUT_BYTES];
  unsigned char ipc_handle[64];  // CUipcMemHandle, filled on first use
  int64_t inline_shape[THOST_INLINE_DIMS];
  char inline_name[THOST_INLINE_NAME_BYTES];
};

// What a new output clears: everything before its buffers.
#define THOST_OUTPUT_CLEARED_BYTES offsetof(struct thost_output, inline_data)

// Outputs kept inside a response's block.
#define THOST_RESPONSE_BLOCK_OUTPUTS 2

// Parameters kept inside a response's block, and the bytes of their names
// and string values it holds.
#define THOST_RESPONSE_BLOCK_PARAMS 4
#define THOST_RESPONSE_PARAM_TEXT 256

// A response. Built by the backend through its handle;
// TRITONBACKEND_ResponseSend frees the handles of the response and its outputs
// and hands the rest to Go (thostResponseSend), which either gives it straight
// back or keeps it: then its output buffers are lent to a frontend (Go's
// Response.Lent) and Go frees the response later, from any thread, with
// thost_sent_response_free. Once sent, ctx may be gone: the memory of a sent
// response is counted on host.
//
// Memory: one block of THOST_POOL_RESPONSE (block_pool.h) holds the response,
// its first THOST_RESPONSE_BLOCK_OUTPUTS outputs and its first
// THOST_RESPONSE_BLOCK_PARAMS parameters with their text, so that a response
// of one or two small outputs and a few parameters is one block from the
// calling thread's free list, with no malloc.
struct thost_response {
  uint64_t handle;
  uint32_t output_count;
  uint32_t output_cap;
  uint32_t param_count;
  uint32_t param_cap;
  uint32_t block_outputs_used;    // of block_outputs
  uint32_t param_text_used;       // bytes of param_text taken
  struct thost_reqctx* ctx;       // referenced until the response is sent or
                                  // deleted
  struct thost_host* host;        // ctx's host
  struct thost_output** outputs;  // inline_outputs until more are needed
  struct TRITONSERVER_Parameter* params;  // block_params until more are needed
  struct thost_output* inline_outputs[THOST_RESPONSE_BLOCK_OUTPUTS];
  // Not cleared when the response is made (THOST_RESPONSE_CLEARED_BYTES):
  // each is written before it is read.
  struct thost_output block_outputs[THOST_RESPONSE_BLOCK_OUTPUTS];
  struct TRITONSERVER_Parameter block_params[THOST_RESPONSE_BLOCK_PARAMS];
  // The names and string values of parameters, NUL-terminated, while they
  // fit; longer ones are allocated (response_param_text).
  char param_text[THOST_RESPONSE_PARAM_TEXT];
};

// What a new response clears: everything before its block's outputs.
#define THOST_RESPONSE_CLEARED_BYTES \
  offsetof(struct thost_response, block_outputs)

struct thost_response_statistics {
  uint64_t handle;
  struct thost_host* host;  // the one it is counted on
  uint64_t instance;        // TRITONBACKEND_ModelInstance handle, 0 until set
  uint64_t factory;         // TRITONBACKEND_ResponseFactory handle, 0 until set
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

// ---- Helpers (hidden from backends) -----------------------------------------

TRITONSERVER_Error* thost_error_new_n(
    TRITONSERVER_Error_Code code, const char* msg, size_t len);
TRITONSERVER_Error* thost_errorf(
    TRITONSERVER_Error_Code code, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct thost_message* thost_message_new(
    const char* json, size_t len, struct thost_host* owner);
void thost_message_free(struct thost_message* msg);
char* thost_strndup(const char* s, size_t n);

// caller: the submitter's allocator, for a request a backend submitted
// (copied); NULL for other requests.
struct thost_reqctx* thost_reqctx_new(
    struct thost_host* host, uint64_t key,
    const struct thost_caller_alloc* caller);
// Takes the context's pending reports, oldest first (NULL: none); give them
// back with thost_rstats_free once Go has read them.
struct thost_rstat* thost_reqctx_take_stats(struct thost_reqctx* ctx);
void thost_rstats_free(struct thost_rstat* list);
// Buffers report r (a block of THOST_POOL_RSTAT, filled in but for next)
// in ctx's pending list, from any thread holding a reference to ctx. A
// long list goes to Go at once; the error is that crossing's.
TRITONSERVER_Error* thost_reqctx_push_stat(
    struct thost_reqctx* ctx, struct thost_rstat* r);
void thost_reqctx_ref(struct thost_reqctx* ctx);
void thost_reqctx_unref(struct thost_reqctx* ctx);
struct thost_request* thost_request_new(size_t size, struct thost_reqctx* ctx);
// thost_reqctx_new and thost_request_new for its first block, which holds
// the context's one reference, in one call from Go. Both NULL when either
// fails, and then neither is left. Returned by value: an out-parameter
// would make Go allocate the variable it points to.
struct thost_new_request {
  struct thost_reqctx* ctx;
  struct thost_request* req;
};
struct thost_new_request thost_reqctx_new_with_request(
    struct thost_host* host, uint64_t key,
    const struct thost_caller_alloc* caller, size_t size);
void thost_request_free(struct thost_request* req);
// thost_request_free without dropping the block's context reference,
// which the caller has taken over.
void thost_request_free_block(struct thost_request* req);
// Frees a context whose last reference is gone and whose end Go has
// already been told of.
void thost_reqctx_destroy(struct thost_reqctx* ctx);
void thost_request_free_states(struct thost_request* req);  // state.c

// Frees a response that was sent (TRITONBACKEND_ResponseSend) and that Go
// kept: its outputs, their buffers, its parameters, and its count as lent
// (THOST_COUNT_LENT, which Go raised as it kept it). Called once, from any
// thread; the response must hold no device buffer (Go keeps none that does).
void thost_sent_response_free(struct thost_response* r);

void thost_model_set_config_json(
    struct thost_model* model, const char* json, size_t len);

// Argument checks used by every API function: each returns INVALID_ARG from
// the calling function when it fails.
#define THOST_CHECK_ARG(cond, what)                                  \
  do {                                                               \
    if (!(cond))                                                     \
      return thost_errorf(                                           \
          TRITONSERVER_ERROR_INVALID_ARG, "%s: %s", __func__, what); \
  } while (0)

// Sets var to the object of handle, a live handle of KIND, or returns
// INVALID_ARG naming what (NULL, freed, or not a handle of that kind).
#define THOST_OBJECT(var, handle, KIND, what)               \
  do {                                                      \
    var = thost_handle_object((const void*)(handle), KIND); \
    THOST_CHECK_ARG(var != NULL, "invalid " what);          \
  } while (0)

#endif  // TRITONHOST_ABI_OBJECTS_H
