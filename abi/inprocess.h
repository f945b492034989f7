// The in-process server API's objects: inference requests a backend builds
// and submits to another model (TRITONSERVER_InferenceRequest*), response
// allocators (TRITONSERVER_ResponseAllocator*), the responses delivered to
// the submitter (TRITONSERVER_InferenceResponse*), and what a submitted
// request carries to the backend that serves it (its caller's allocator).
//
// Ownership: requests, allocators and responses are owned by the backend
// that created or received them and reached through handles, like every
// other object (handle_table.h). While a request is in flight (from
// TRITONSERVER_ServerInferAsync until its release callback) the server
// reads it; the calls that would change it are refused then.
//
// Threads: one request is built by one thread at a time; Cancel and
// IsCancelled are safe from any thread. A response is read-only once
// delivered. The caller's allocator functions are called with no lock of
// the server held (allocator_api.c says from where).
#ifndef TRITONHOST_ABI_INPROCESS_H
#define TRITONHOST_ABI_INPROCESS_H

#include "objects.h"

// ---- Allocators -------------------------------------------------------------

struct thost_allocator {
  uint64_t handle;
  struct thost_host* host;  // counted on (THOST_COUNT_ALLOCATOR)
  TRITONSERVER_ResponseAllocatorAllocFn_t alloc_fn;
  TRITONSERVER_ResponseAllocatorReleaseFn_t release_fn;
  TRITONSERVER_ResponseAllocatorStartFn_t start_fn;  // may be NULL
  TRITONSERVER_ResponseAllocatorQueryFn_t query_fn;  // may be NULL
  TRITONSERVER_ResponseAllocatorBufferAttributesFn_t attributes_fn;  // or NULL
};

// A submitted request's allocator as the serving backend's side sees it:
// the functions copied when the request was submitted, the allocator's
// handle (passed back to them as is) and the request's allocator userp.
// Each request context of the serving backend holds its own copy
// (thost_reqctx.caller), freed with the context.
struct thost_caller_alloc {
  uint64_t allocator;
  void* userp;
  TRITONSERVER_ResponseAllocatorAllocFn_t alloc_fn;
  TRITONSERVER_ResponseAllocatorReleaseFn_t release_fn;
  TRITONSERVER_ResponseAllocatorStartFn_t start_fn;
  TRITONSERVER_ResponseAllocatorQueryFn_t query_fn;
  TRITONSERVER_ResponseAllocatorBufferAttributesFn_t attributes_fn;
};

// The hooks the backend API calls for a request whose context has a caller
// (allocator_api.c). Each is a no-op, or the old behaviour, without one.

// TRITONBACKEND_ResponseNew and ResponseNewFromFactory: the start function.
void thost_caller_start(struct thost_reqctx* ctx);
// TRITONBACKEND_OutputBuffer: the buffer of 'o' from the caller's allocator.
TRITONSERVER_Error* thost_caller_alloc_output(
    struct thost_output* o, uint64_t byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id,
    void** buffer);
// Hands the buffer of 'o', if it came from a caller's allocator, back to it.
// True when it did (the output holds no other buffer then).
bool thost_caller_release_output(struct thost_output* o);
// TRITONBACKEND_RequestOutputBufferProperties.
TRITONSERVER_Error* thost_caller_query(
    struct thost_reqctx* ctx, const char* name, size_t* byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id);
// Logs the error a caller's function returned ("<what>: <message>"), which
// nobody else can be told of, and deletes it; nothing for NULL.
void thost_log_caller_error(const char* what, TRITONSERVER_Error* err);

// ---- Requests ---------------------------------------------------------------

// One buffer of an input: where the caller's data is (not copied).
struct thost_ireq_buffer {
  const void* base;
  size_t byte_size;
  TRITONSERVER_MemoryType memory_type;
  int64_t memory_type_id;
  char* host_policy;  // NULL for a default buffer
};

struct thost_ireq_input {
  char* name;
  bool raw;  // AddRawInput: name, type and shape come from the model
  TRITONSERVER_DataType datatype;
  int64_t* shape;
  uint32_t dims_count;
  uint32_t buffer_count;
  uint32_t buffer_cap;
  struct thost_ireq_buffer* buffers;
};

struct thost_ireq_param {
  char* name;
  TRITONSERVER_ParameterType type;
  char* s;
  int64_t i;
  bool b;
  double d;
};

struct thost_infer_request {
  uint64_t handle;
  struct thost_host* host;  // the server it was created for (counted)
  char* model_name;
  int64_t model_version;
  char* id;
  uint32_t flags;
  uint64_t correlation_id;
  char* correlation_id_string;  // NULL when the id is numeric
  uint64_t priority;
  uint64_t timeout_us;

  uint32_t input_count, input_cap;
  struct thost_ireq_input* inputs;
  uint32_t output_count, output_cap;
  char** outputs;
  uint32_t param_count, param_cap;
  struct thost_ireq_param* params;

  TRITONSERVER_InferenceRequestReleaseFn_t release_fn;
  void* release_userp;
  uint64_t allocator;  // handle; checked at submission
  void* allocator_userp;
  TRITONSERVER_InferenceResponseCompleteFn_t response_fn;
  void* response_userp;

  int32_t in_flight;  // atomic: submitted and not yet handed back
  int32_t cancelled;  // atomic: cancelled since the last submission
  uint64_t call;      // atomic: the Go call key while in flight, else 0
};

// The callbacks of one submission, copied from the request when it is
// submitted, so nothing of the caller's request is read while it is in
// flight. Freed when the submission ends.
struct thost_infer_call {
  uint64_t request;  // the request's handle, passed back to release_fn
  TRITONSERVER_InferenceRequestReleaseFn_t release_fn;
  void* release_userp;
  TRITONSERVER_InferenceResponseCompleteFn_t response_fn;
  void* response_userp;
  struct thost_caller_alloc alloc;
};

// Builds the callbacks of a submission of 'r' (the allocator's functions
// read now); NULL with *err set when the allocator is gone or memory runs
// out.
struct thost_infer_call* thost_infer_call_new(
    struct thost_infer_request* r, TRITONSERVER_Error** err);
// Records the Go call of a submission of 'r' (0: none), for Cancel.
void thost_infer_request_set_call(struct thost_infer_request* r, uint64_t call);
// Ends a submission of 'r': it is no longer in flight, so its release
// callback (called next) may delete or resubmit it. The callbacks are freed
// (free) after that.
void thost_infer_request_landed(struct thost_infer_request* r);
// Calls the caller's response and release functions.
void thost_infer_call_respond(
    struct thost_infer_call* call, uint64_t response, uint32_t flags);
void thost_infer_call_release(struct thost_infer_call* call);

// ---- Responses --------------------------------------------------------------

// One output of a delivered response. Its buffer came from the caller's
// allocator (allocated, handed back through release_fn), or is NULL.
struct thost_iresp_output {
  char* name;
  TRITONSERVER_DataType datatype;
  int64_t* shape;
  uint32_t dims_count;
  void* base;
  size_t byte_size;
  TRITONSERVER_MemoryType memory_type;
  int64_t memory_type_id;
  void* buffer_userp;
  bool allocated;
  uint64_t allocator;
  TRITONSERVER_ResponseAllocatorReleaseFn_t release_fn;
};

// The outputs of a serving backend's response, taken out of it when it is
// sent, until they are delivered in a response or dropped.
struct thost_output_set {
  uint32_t count;
  struct thost_iresp_output items[];
};

struct thost_iresp_param {
  char* name;
  TRITONSERVER_ParameterType type;
  char* s;
  int64_t i;
  bool b;
  double d;
};

struct thost_infer_response {
  uint64_t handle;
  struct thost_host* host;    // counted on (THOST_COUNT_INFER_RESPONSE)
  TRITONSERVER_Error* error;  // owned; NULL on success
  char* model_name;
  int64_t model_version;
  char* id;
  uint32_t output_count, output_cap;
  struct thost_iresp_output* outputs;
  uint32_t param_count, param_cap;
  struct thost_iresp_param* params;
};

// Takes the outputs out of a response the serving backend sends, so that
// freeing the response leaves their buffers alone; NULL when it has none
// or memory runs out (then the outputs stay, and are released with it).
struct thost_output_set* thost_output_set_take(struct thost_response* r);
// Releases every buffer still in the set, then the set.
void thost_output_set_free(struct thost_output_set* set);
// Releases one output's buffer through its allocator and frees its
// strings.
void thost_iresp_output_free(struct thost_iresp_output* o);

// Builders used by Go to deliver a response (strings as pointer and
// length, copied). NULL when memory or handles run out.
struct thost_infer_response* thost_iresp_new(
    struct thost_host* host, const char* model, size_t model_len,
    int64_t version, const char* id, size_t id_len, uint32_t outputs,
    uint32_t params);
void thost_iresp_set_error(
    struct thost_infer_response* r, int code, const char* msg, size_t len);
// Moves output 'name' of 'set' into the response with the given shape; false
// when the set has no such output.
bool thost_iresp_take_output(
    struct thost_infer_response* r, struct thost_output_set* set,
    const char* name, size_t name_len, const int64_t* shape, uint32_t dims);
// Adds an output whose data the server holds: allocated through 'alloc'
// (start_fn first, when 'start' is set) and copied in. Fails when the
// allocator fails or hands out memory the server cannot write (GPU).
TRITONSERVER_Error* thost_iresp_copy_output(
    struct thost_infer_response* r, const struct thost_caller_alloc* alloc,
    bool start, const char* name, size_t name_len, int datatype,
    const int64_t* shape, uint32_t dims, const char* data, size_t size);
void thost_iresp_add_param(
    struct thost_infer_response* r, const char* name, size_t name_len, int type,
    const char* s, size_t s_len, int64_t i, bool b, double d);
// Stores the handle of 'm' in *out (Go cannot make a pointer of it).
void thost_message_store(struct thost_message* m, TRITONSERVER_Message** out);
// Frees a response that was never handed to the caller.
void thost_iresp_free(struct thost_infer_response* r);

// ---- Traces (trace.c) -------------------------------------------------------
// The callbacks and strings of a trace, for Go. A trace given to
// ServerInferAsync is the server's until thost_trace_return, so nothing
// else touches it meanwhile.

// Copies the level and callbacks of a trace the caller owns to its child.
void thost_trace_inherit(
    struct thost_trace* child, const struct thost_trace* parent);
// Replaces the context string C hands out (copied; kept when memory runs
// out).
void thost_trace_store_context(
    struct thost_trace* t, const char* s, size_t len);
// Gives a standalone trace its request's model, version and id (copied);
// false when memory runs out.
bool thost_trace_bind(
    struct thost_trace* t, const char* model, size_t model_len, int64_t version,
    const char* id, size_t id_len);
// Calls the trace's activity function, if any.
void thost_trace_activity(
    struct thost_trace* t, TRITONSERVER_InferenceTraceActivity activity,
    uint64_t timestamp);
// Whether the trace reports tensors (level TENSORS and a tensor function).
bool thost_trace_wants_tensors(const struct thost_trace* t);
// Reports the inputs of a request, or the outputs of a response, to the
// trace's tensor function when it wants tensors.
void thost_trace_inputs(
    struct thost_trace* t, const struct thost_infer_request* r);
void thost_trace_outputs(
    struct thost_trace* t, const struct thost_infer_response* r);
// Ends the server's hold on a trace given to ServerInferAsync: the caller's
// release function gets it back, or, a child of a trace the server made,
// it is freed.
void thost_trace_return(struct thost_trace* t);

#endif  // TRITONHOST_ABI_INPROCESS_H
