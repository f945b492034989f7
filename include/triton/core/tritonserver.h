// tritonserver.h: the TRITONSERVER part of the C ABI that tritonhost
// offers: to backends, and to applications that embed a server.
//
// This header is written for tritonhost. It follows the names, signatures,
// type tags and numeric values of NVIDIA Triton's tritonserver.h (API version
// 1.34) and declares every function of it, so that a backend or an
// application written for Triton compiles against it unchanged: the
// helpers for data types, errors, messages, parameters, logging, buffer
// attributes, tracing and custom metrics; and Triton's in-process server
// API, which backends use to run inference on other models of their server
// from their own threads (Triton's business-logic-scripting pattern) and
// to load and unload models, and applications use to create a server in
// their own process (server options, TRITONSERVER_ServerNew), run inference
// on it (inference requests, response allocators, inference responses,
// TRITONSERVER_ServerInferAsync), query and control its models and read its
// metrics. The server process (`tritonhost serve`) exports these functions
// to its backends; libtritonserver.so (`make lib`) exports them to an
// application and to the backends its server loads.
//
// Conventions that hold for every function below unless its comment says
// otherwise:
//
//   * A function returning TRITONSERVER_Error* returns NULL on success. On
//     failure it returns a new error object that the caller owns and must
//     release with TRITONSERVER_ErrorDelete. Out-parameters are written only
//     on success.
//   * Every handle is opaque: its layout is private to the host and may only
//     be used through these functions.
//   * Strings passed in are NUL-terminated and are copied if the host needs
//     them after the call returns; the caller keeps ownership. Strings handed
//     out are NUL-terminated, owned by the object they came from, and must
//     not be modified or freed.
//   * Functions may be called from any thread. Calls on different objects may
//     run concurrently; calls that modify the same object must not race.
//
// The header compiles as C11 and as C++17. Every handle type has a typedef,
// so C code may write TRITONSERVER_Error* as well as struct
// TRITONSERVER_Error*.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// TRITONSERVER_DECLSPEC marks a function the host implements and exports.
// The host's own build defines _COMPILING_TRITONSERVER and compiles with
// -fvisibility=hidden, so exactly the functions declared with this macro
// become visible to backends. Everyone else sees an empty macro (or, on
// Windows, an import declaration).
#ifdef _COMPILING_TRITONSERVER
#if defined(_MSC_VER)
#define TRITONSERVER_DECLSPEC __declspec(dllexport)
#elif defined(__GNUC__)
#define TRITONSERVER_DECLSPEC __attribute__((__visibility__("default")))
#else
#define TRITONSERVER_DECLSPEC
#endif
#else
#if defined(_MSC_VER)
#define TRITONSERVER_DECLSPEC __declspec(dllimport)
#else
#define TRITONSERVER_DECLSPEC
#endif
#endif

// ---------------------------------------------------------------------------
// Handle types
//
// Each handle is a pointer to an incomplete struct. The typedefs let C code
// drop the "struct" keyword, as C++ code always may.
// ---------------------------------------------------------------------------

struct TRITONSERVER_BufferAttributes;
struct TRITONSERVER_Error;
struct TRITONSERVER_InferenceRequest;
struct TRITONSERVER_InferenceResponse;
struct TRITONSERVER_InferenceTrace;
struct TRITONSERVER_Message;
struct TRITONSERVER_Metrics;
struct TRITONSERVER_Parameter;
struct TRITONSERVER_ResponseAllocator;
struct TRITONSERVER_Server;
struct TRITONSERVER_ServerOptions;
struct TRITONSERVER_Metric;
struct TRITONSERVER_MetricFamily;
struct TRITONSERVER_MetricArgs;

typedef struct TRITONSERVER_BufferAttributes TRITONSERVER_BufferAttributes;
typedef struct TRITONSERVER_Error TRITONSERVER_Error;
typedef struct TRITONSERVER_InferenceRequest TRITONSERVER_InferenceRequest;
typedef struct TRITONSERVER_InferenceResponse TRITONSERVER_InferenceResponse;
typedef struct TRITONSERVER_InferenceTrace TRITONSERVER_InferenceTrace;
typedef struct TRITONSERVER_Message TRITONSERVER_Message;
typedef struct TRITONSERVER_Metrics TRITONSERVER_Metrics;
typedef struct TRITONSERVER_Parameter TRITONSERVER_Parameter;
typedef struct TRITONSERVER_ResponseAllocator TRITONSERVER_ResponseAllocator;
typedef struct TRITONSERVER_Server TRITONSERVER_Server;
typedef struct TRITONSERVER_ServerOptions TRITONSERVER_ServerOptions;
typedef struct TRITONSERVER_Metric TRITONSERVER_Metric;
typedef struct TRITONSERVER_MetricFamily TRITONSERVER_MetricFamily;
typedef struct TRITONSERVER_MetricArgs TRITONSERVER_MetricArgs;

// ---------------------------------------------------------------------------
// API version
//
// The version a caller was compiled against is available as the two macros
// below; the version the running host implements is reported by
// TRITONSERVER_ApiVersion. The host is compatible with a caller when the
// major numbers are equal and the host's minor number is at least the
// caller's.
// ---------------------------------------------------------------------------

#define TRITONSERVER_API_VERSION_MAJOR 1
#define TRITONSERVER_API_VERSION_MINOR 34

// Stores the TRITONSERVER API version the host implements in *major and
// *minor. Both pointers must be valid. Never fails.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ApiVersion(
    uint32_t* major, uint32_t* minor);

// ---------------------------------------------------------------------------
// Data types
//
// Element types of tensors. The numeric values are part of the ABI.
// ---------------------------------------------------------------------------

typedef enum TRITONSERVER_datatype_enum {
  TRITONSERVER_TYPE_INVALID,
  TRITONSERVER_TYPE_BOOL,
  TRITONSERVER_TYPE_UINT8,
  TRITONSERVER_TYPE_UINT16,
  TRITONSERVER_TYPE_UINT32,
  TRITONSERVER_TYPE_UINT64,
  TRITONSERVER_TYPE_INT8,
  TRITONSERVER_TYPE_INT16,
  TRITONSERVER_TYPE_INT32,
  TRITONSERVER_TYPE_INT64,
  TRITONSERVER_TYPE_FP16,
  TRITONSERVER_TYPE_FP32,
  TRITONSERVER_TYPE_FP64,
  TRITONSERVER_TYPE_BYTES,
  TRITONSERVER_TYPE_BF16
} TRITONSERVER_DataType;

// Returns the name of a data type without the TYPE_ prefix ("INT32",
// "BYTES", ...), or "<invalid>" for TRITONSERVER_TYPE_INVALID and unknown
// values. The string is static: never free it.
TRITONSERVER_DECLSPEC const char* TRITONSERVER_DataTypeString(
    TRITONSERVER_DataType datatype);

// The inverse of TRITONSERVER_DataTypeString: maps a name such as "FP32" to
// its data type. Returns TRITONSERVER_TYPE_INVALID for NULL or an unknown
// name. The caller keeps ownership of 'dtype'.
TRITONSERVER_DECLSPEC TRITONSERVER_DataType
TRITONSERVER_StringToDataType(const char* dtype);

// Returns the size in bytes of one element of 'datatype': 1, 2, 4 or 8.
// Returns 0 for TRITONSERVER_TYPE_BYTES, whose elements vary in length, and
// for invalid types.
TRITONSERVER_DECLSPEC uint32_t
TRITONSERVER_DataTypeByteSize(TRITONSERVER_DataType datatype);

// ---------------------------------------------------------------------------
// Memory types
//
// Where a buffer lives. A memory type always travels with a memory type id;
// for GPU memory the id is the CUDA device ordinal, for CPU memory it is 0.
// ---------------------------------------------------------------------------

typedef enum TRITONSERVER_memorytype_enum {
  TRITONSERVER_MEMORY_CPU,
  TRITONSERVER_MEMORY_CPU_PINNED,
  TRITONSERVER_MEMORY_GPU
} TRITONSERVER_MemoryType;

// Returns "CPU", "CPU_PINNED" or "GPU", or "<invalid>" for any other value.
// The string is static: never free it.
TRITONSERVER_DECLSPEC const char* TRITONSERVER_MemoryTypeString(
    TRITONSERVER_MemoryType memtype);

// ---------------------------------------------------------------------------
// Parameters
//
// A parameter is a named, typed value. Backends build them as labels for
// custom metrics; requests expose theirs through
// TRITONBACKEND_RequestParameter.
// ---------------------------------------------------------------------------

typedef enum TRITONSERVER_parametertype_enum {
  TRITONSERVER_PARAMETER_STRING,
  TRITONSERVER_PARAMETER_INT,
  TRITONSERVER_PARAMETER_BOOL,
  TRITONSERVER_PARAMETER_DOUBLE,
  TRITONSERVER_PARAMETER_BYTES
} TRITONSERVER_ParameterType;

// Returns the name of a parameter type ("STRING", "INT", "BOOL", "DOUBLE",
// "BYTES"), or "<invalid>" for other values. The string is static.
TRITONSERVER_DECLSPEC const char* TRITONSERVER_ParameterTypeString(
    TRITONSERVER_ParameterType paramtype);

// Creates a parameter called 'name' whose value is read from 'value'
// according to 'type': a NUL-terminated string for STRING, an int64_t for
// INT, a bool for BOOL, a double for DOUBLE. The name and value are copied,
// so the caller keeps ownership of both. Returns the new parameter, which the
// caller owns and must release with TRITONSERVER_ParameterDelete, or NULL if
// 'type' is TRITONSERVER_PARAMETER_BYTES (use TRITONSERVER_ParameterBytesNew)
// or the arguments are invalid.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Parameter* TRITONSERVER_ParameterNew(
    const char* name, const TRITONSERVER_ParameterType type, const void* value);

// Creates a BYTES parameter called 'name' over 'size' bytes at 'byte_ptr'.
// The name is copied but the bytes are not: the parameter only points at
// them, so they must stay valid and unchanged until the parameter is
// deleted. Returns the new parameter, owned by the caller and released with
// TRITONSERVER_ParameterDelete, or NULL on invalid arguments.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Parameter*
TRITONSERVER_ParameterBytesNew(
    const char* name, const void* byte_ptr, const uint64_t size);

// Releases a parameter created by TRITONSERVER_ParameterNew or
// TRITONSERVER_ParameterBytesNew. Passing NULL does nothing. Parameters
// obtained from a request belong to the request and must not be passed here.
TRITONSERVER_DECLSPEC void TRITONSERVER_ParameterDelete(
    struct TRITONSERVER_Parameter* parameter);

// ---------------------------------------------------------------------------
// Instance group kinds
//
// Where the instances of a model run, as set by instance_group.kind in the
// model configuration.
// ---------------------------------------------------------------------------

typedef enum TRITONSERVER_instancegroupkind_enum {
  TRITONSERVER_INSTANCEGROUPKIND_AUTO,
  TRITONSERVER_INSTANCEGROUPKIND_CPU,
  TRITONSERVER_INSTANCEGROUPKIND_GPU,
  TRITONSERVER_INSTANCEGROUPKIND_MODEL
} TRITONSERVER_InstanceGroupKind;

// Returns "AUTO", "CPU", "GPU" or "MODEL", or "<invalid>" for other values.
// The string is static.
TRITONSERVER_DECLSPEC const char* TRITONSERVER_InstanceGroupKindString(
    TRITONSERVER_InstanceGroupKind kind);

// ---------------------------------------------------------------------------
// Logging
//
// Backends write to the host's log through TRITONSERVER_LogMessage; the host
// adds the timestamp and level and decides whether the message is shown.
// ---------------------------------------------------------------------------

typedef enum TRITONSERVER_loglevel_enum {
  TRITONSERVER_LOG_INFO,
  TRITONSERVER_LOG_WARN,
  TRITONSERVER_LOG_ERROR,
  TRITONSERVER_LOG_VERBOSE
} TRITONSERVER_LogLevel;

// How log lines are stamped. DEFAULT writes the level letter followed by
// month, day and time of day; ISO8601 writes an ISO 8601 date and time
// followed by the level letter. Chosen by the host's configuration.
typedef enum TRITONSERVER_logformat_enum {
  TRITONSERVER_LOG_DEFAULT,
  TRITONSERVER_LOG_ISO8601
} TRITONSERVER_LogFormat;

// Reports whether messages at 'level' currently reach the log. A caller may
// use it to skip building an expensive message; calling
// TRITONSERVER_LogMessage for a disabled level is harmless.
TRITONSERVER_DECLSPEC bool TRITONSERVER_LogIsEnabled(
    TRITONSERVER_LogLevel level);

// Writes 'msg' to the host's log at 'level', attributed to source file
// 'filename' and line 'line' (either may be NULL or 0 if unknown). Nothing is
// written if the level is disabled. The strings are copied before the call
// returns. Fails with TRITONSERVER_ERROR_INVALID_ARG for an unknown level.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_LogMessage(
    TRITONSERVER_LogLevel level, const char* filename, const int line,
    const char* msg);

// ---------------------------------------------------------------------------
// Errors
//
// An error is a code plus a message. NULL means success everywhere in this
// API. Whoever creates or receives an error object owns it until it is
// released with TRITONSERVER_ErrorDelete; the exceptions (errors a function
// only borrows) are stated where they occur.
// ---------------------------------------------------------------------------

typedef enum TRITONSERVER_errorcode_enum {
  TRITONSERVER_ERROR_UNKNOWN,
  TRITONSERVER_ERROR_INTERNAL,
  TRITONSERVER_ERROR_NOT_FOUND,
  TRITONSERVER_ERROR_INVALID_ARG,
  TRITONSERVER_ERROR_UNAVAILABLE,
  TRITONSERVER_ERROR_UNSUPPORTED,
  TRITONSERVER_ERROR_ALREADY_EXISTS,
  TRITONSERVER_ERROR_CANCELLED
} TRITONSERVER_Error_Code;

// Creates an error with 'code' and a copy of 'msg' (NULL is taken as an
// empty message). Always returns a new, non-NULL error that the caller owns
// and must release with TRITONSERVER_ErrorDelete, unless it hands it on to a
// function documented to take ownership (for example by returning it from a
// backend entry point).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ErrorNew(
    TRITONSERVER_Error_Code code, const char* msg);

// Releases an error and the strings obtained from it. Passing NULL does
// nothing.
TRITONSERVER_DECLSPEC void TRITONSERVER_ErrorDelete(
    struct TRITONSERVER_Error* error);

// Returns the code of a non-NULL error.
TRITONSERVER_DECLSPEC TRITONSERVER_Error_Code
TRITONSERVER_ErrorCode(struct TRITONSERVER_Error* error);

// Returns a short human-readable name for the code of a non-NULL error
// ("Internal", "Invalid argument", ...). The string stays valid until the
// error is deleted.
TRITONSERVER_DECLSPEC const char* TRITONSERVER_ErrorCodeString(
    struct TRITONSERVER_Error* error);

// Returns the message of a non-NULL error. The string belongs to the error
// and stays valid until the error is deleted.
TRITONSERVER_DECLSPEC const char* TRITONSERVER_ErrorMessage(
    struct TRITONSERVER_Error* error);

// ---------------------------------------------------------------------------
// Response allocators (in-process server API)
//
// A backend that runs inference on another model (see "Inference requests"
// below) decides where the outputs of that model's responses go: it creates
// a response allocator, whose functions the server calls for every output
// buffer, and names it in TRITONSERVER_InferenceRequestSetResponseCallback.
// The buffers belong to the caller's allocator; the server never frees
// them, it hands each back once through the release function.
//
// When and where the server calls an allocator's functions, for a request
// served by a backend (as Triton does):
//   start_fn   once per response, before its allocations, on the thread of
//              the serving backend that creates the response
//              (TRITONBACKEND_ResponseNew,
//              TRITONBACKEND_ResponseNewFromFactory).
//   alloc_fn   once per output buffer, on the serving backend's thread, from
//              TRITONBACKEND_OutputBuffer, with the memory type and id that
//              backend prefers; the backend then writes straight into the
//              buffer, wherever it lives (the server does not copy it).
//   buffer_attributes_fn  right after alloc_fn, on the same thread, with
//              attributes the function may fill in (a CUDA IPC handle).
//   query_fn   when the serving backend asks where its outputs should go
//              (TRITONBACKEND_RequestOutputBufferProperties).
//   release_fn once per buffer alloc_fn handed out: when the response
//              holding it is deleted (TRITONSERVER_InferenceResponseDelete,
//              on the deleting thread), or, for a buffer that never reaches
//              the caller (the serving backend deleted its response, or sent
//              it with an error, or the output was not requested), on the
//              thread that drops it.
// When the server builds a response itself (no backend wrote the outputs),
// it allocates each output with alloc_fn, preferring CPU memory, on the
// request's delivery thread just before the response callback, and copies
// the data in; a buffer in GPU memory then makes the response an error.
//
// The functions may run on several threads at once, also for one request,
// and must be thread-safe; keeping per-request state in the allocator's
// userp needs no lock. The server holds no lock of its own while calling
// them, but the calling thread (often the serving backend's) waits for
// them: they must return promptly.
// ---------------------------------------------------------------------------

// Allocates 'byte_size' bytes for output 'tensor_name', preferring
// 'memory_type'/'memory_type_id' (what the serving backend asked for).
// 'allocator' is the allocator's handle and 'userp' the
// response_allocator_userp of the request. Stores the buffer in *buffer (NULL
// is allowed for 0 bytes), a pointer of the caller's choosing in
// *buffer_userp (passed back to release_fn and returned by
// TRITONSERVER_InferenceResponseOutput), and where the buffer actually lives
// in *actual_memory_type and *actual_memory_type_id. An error it returns
// becomes the error of TRITONBACKEND_OutputBuffer, and the other results
// are ignored.
typedef struct TRITONSERVER_Error* (*TRITONSERVER_ResponseAllocatorAllocFn_t)(
    struct TRITONSERVER_ResponseAllocator* allocator, const char* tensor_name,
    size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id, void* userp, void** buffer, void** buffer_userp,
    TRITONSERVER_MemoryType* actual_memory_type,
    int64_t* actual_memory_type_id);

// Fills in 'buffer_attributes', which describe the buffer alloc_fn just
// returned for 'tensor_name' (size, memory type and id already set). The
// attributes belong to the output: set them, never delete them. An error it
// returns fails the allocation; the buffer is released.
typedef struct TRITONSERVER_Error* (
    *TRITONSERVER_ResponseAllocatorBufferAttributesFn_t)(
    struct TRITONSERVER_ResponseAllocator* allocator, const char* tensor_name,
    struct TRITONSERVER_BufferAttributes* buffer_attributes, void* userp,
    void* buffer_userp);

// Reports where the allocator would put a buffer, without allocating.
// 'tensor_name' and 'byte_size' are NULL when the serving backend does not
// know them yet. On entry *memory_type and *memory_type_id hold the serving
// backend's preference; on return, the allocator's.
typedef struct TRITONSERVER_Error* (*TRITONSERVER_ResponseAllocatorQueryFn_t)(
    struct TRITONSERVER_ResponseAllocator* allocator, void* userp,
    const char* tensor_name, size_t* byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id);

// Takes back a buffer alloc_fn handed out, with the 'buffer_userp', size and
// location it was handed out with: the server no longer refers to it. An
// error it returns is logged; the buffer is not offered again.
typedef struct TRITONSERVER_Error* (*TRITONSERVER_ResponseAllocatorReleaseFn_t)(
    struct TRITONSERVER_ResponseAllocator* allocator, void* buffer,
    void* buffer_userp, size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id);

// Announces that the allocations that follow belong to a new response of
// the request whose response_allocator_userp is 'userp'. An error it returns
// is logged.
typedef struct TRITONSERVER_Error* (*TRITONSERVER_ResponseAllocatorStartFn_t)(
    struct TRITONSERVER_ResponseAllocator* allocator, void* userp);

// Creates a response allocator with the functions above: 'alloc_fn' and
// 'release_fn' are required, 'start_fn' may be NULL. On success *allocator
// is owned by the caller, to be released with
// TRITONSERVER_ResponseAllocatorDelete; it may serve any number of requests
// at once. The server copies the functions when a request is submitted, so
// changing or deleting the allocator later does not affect requests in
// flight. Fails with TRITONSERVER_ERROR_INVALID_ARG for a NULL out-pointer or
// required function.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ResponseAllocatorNew(
    struct TRITONSERVER_ResponseAllocator** allocator,
    TRITONSERVER_ResponseAllocatorAllocFn_t alloc_fn,
    TRITONSERVER_ResponseAllocatorReleaseFn_t release_fn,
    TRITONSERVER_ResponseAllocatorStartFn_t start_fn);

// Sets (or, with NULL, clears) the function that fills in the attributes of
// each buffer alloc_fn returns. Affects requests submitted afterwards.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction(
    struct TRITONSERVER_ResponseAllocator* allocator,
    TRITONSERVER_ResponseAllocatorBufferAttributesFn_t buffer_attributes_fn);

// Sets (or, with NULL, clears) the function that answers
// TRITONBACKEND_RequestOutputBufferProperties for requests using this
// allocator; without one, that call fails with
// TRITONSERVER_ERROR_UNAVAILABLE. Affects requests submitted afterwards.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ResponseAllocatorSetQueryFunction(
    struct TRITONSERVER_ResponseAllocator* allocator,
    TRITONSERVER_ResponseAllocatorQueryFn_t query_fn);

// Releases an allocator. Requests already submitted with it go on with the
// functions they were submitted with; buffers still held by responses are
// released through them.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ResponseAllocatorDelete(
    struct TRITONSERVER_ResponseAllocator* allocator);

// ---------------------------------------------------------------------------
// Messages
//
// A message holds a JSON document: the model configuration, the backend
// configuration, a host policy. Its serialized form can be read without
// copying.
// ---------------------------------------------------------------------------

// Creates a message from the 'byte_size' bytes of JSON text at 'base'. The
// text is copied and need not be NUL-terminated. On success *message is a
// new message owned by the caller, to be released with
// TRITONSERVER_MessageDelete. Fails with TRITONSERVER_ERROR_INVALID_ARG if
// the text is not valid JSON.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_MessageNewFromSerializedJson(
    struct TRITONSERVER_Message** message, const char* base, size_t byte_size);

// Releases a message the caller owns. Messages documented as owned by the
// host (TRITONBACKEND_BackendConfig, TRITONBACKEND_ModelInstanceHostPolicy)
// must not be passed here.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_MessageDelete(
    struct TRITONSERVER_Message* message);

// Stores in *base and *byte_size the message serialized as JSON. The buffer
// belongs to the message, is followed by a NUL byte that *byte_size does not
// count (so it can be used as a C string), must not be modified, and stays
// valid until the message is deleted.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_MessageSerializeToJson(
    struct TRITONSERVER_Message* message, const char** base, size_t* byte_size);

// ---------------------------------------------------------------------------
// Server metrics (in-process server API)
//
// A snapshot of the server's metrics (TRITONSERVER_ServerMetrics), in the
// text format its metrics endpoint serves. Custom metrics for backends are
// further down.
// ---------------------------------------------------------------------------

// The formats a metrics snapshot can be read in.
typedef enum tritonserver_metricformat_enum {
  TRITONSERVER_METRIC_PROMETHEUS
} TRITONSERVER_MetricFormat;

// Releases a metrics snapshot the caller owns.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_MetricsDelete(
    struct TRITONSERVER_Metrics* metrics);

// Stores in *base and *byte_size the snapshot in 'format': for
// TRITONSERVER_METRIC_PROMETHEUS, Prometheus' text exposition format, the
// families the server's /metrics endpoint serves (NUL-terminated; *byte_size
// does not count the NUL). The text belongs to 'metrics' and stays valid
// until it is deleted. Another format is TRITONSERVER_ERROR_INVALID_ARG.
// Calls on one snapshot must not race; different snapshots are
// independent.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_MetricsFormatted(
    struct TRITONSERVER_Metrics* metrics, TRITONSERVER_MetricFormat format,
    const char** base, size_t* byte_size);

// ---------------------------------------------------------------------------
// Tracing
//
// A trace follows one inference request through the server. There are two
// kinds of trace object:
//
//   * The trace of a request a backend serves, from
//     TRITONBACKEND_RequestTrace (NULL when the request is not traced). It
//     belongs to the host and lives until the backend releases the request;
//     never delete it.
//   * A trace the caller owns: made with TRITONSERVER_InferenceTraceNew or
//     TRITONSERVER_InferenceTraceTensorNew, or spawned from any trace with
//     TRITONSERVER_InferenceTraceSpawnChildTrace. The caller deletes it with
//     TRITONSERVER_InferenceTraceDelete, or gives it to
//     TRITONSERVER_ServerInferAsync, which traces that request with it.
//
// Traces form trees: a child records its parent's id, and a backend that
// passes on a request it serves to another model (business-logic
// scripting) spawns a child of its request's trace for the new request. A
// child inherits its parent's callbacks: the activities of a request traced
// with a child of a caller's trace reach that caller's activity function,
// and the child reaches its release function; a child of a trace the
// server made is the server's, which releases it itself.
//
// The callbacks of a trace are called on a thread of the server, one at a
// time per request, with no lock of the server held, once the request has
// finished (its final response delivered and the serving backend done with
// it): the tensor activities of its inputs, then its timeline activities in
// the order they happened, then the release function. The tensor
// activities of each response's outputs come just before the response
// reaches the response callback.
// ---------------------------------------------------------------------------

// What a trace records. The values are bit flags that may be combined.
// TRITONSERVER_TRACE_LEVEL_MIN and _MAX are obsolete aliases for timestamp
// tracing.
typedef enum tritonserver_tracelevel_enum {
  TRITONSERVER_TRACE_LEVEL_DISABLED = 0,
  TRITONSERVER_TRACE_LEVEL_MIN = 1,
  TRITONSERVER_TRACE_LEVEL_MAX = 2,
  TRITONSERVER_TRACE_LEVEL_TIMESTAMPS = 0x4,
  TRITONSERVER_TRACE_LEVEL_TENSORS = 0x8
} TRITONSERVER_InferenceTraceLevel;

// Returns the name of a trace level. The string is static.
TRITONSERVER_DECLSPEC const char* TRITONSERVER_InferenceTraceLevelString(
    TRITONSERVER_InferenceTraceLevel level);

// The kinds of event a trace records.
typedef enum tritonserver_traceactivity_enum {
  TRITONSERVER_TRACE_REQUEST_START = 0,
  TRITONSERVER_TRACE_QUEUE_START = 1,
  TRITONSERVER_TRACE_COMPUTE_START = 2,
  TRITONSERVER_TRACE_COMPUTE_INPUT_END = 3,
  TRITONSERVER_TRACE_COMPUTE_OUTPUT_START = 4,
  TRITONSERVER_TRACE_COMPUTE_END = 5,
  TRITONSERVER_TRACE_REQUEST_END = 6,
  TRITONSERVER_TRACE_TENSOR_QUEUE_INPUT = 7,
  TRITONSERVER_TRACE_TENSOR_BACKEND_INPUT = 8,
  TRITONSERVER_TRACE_TENSOR_BACKEND_OUTPUT = 9,
  TRITONSERVER_TRACE_CUSTOM_ACTIVITY = 10
} TRITONSERVER_InferenceTraceActivity;

// Returns the name of a trace activity. The string is static.
TRITONSERVER_DECLSPEC const char* TRITONSERVER_InferenceTraceActivityString(
    TRITONSERVER_InferenceTraceActivity activity);

// A timeline event of a trace the caller made: 'activity' happened at
// 'timestamp_ns' (nanoseconds of the monotonic clock). 'trace' is the trace
// passed to TRITONSERVER_ServerInferAsync, or a child of it that a backend
// spawned; read what is needed of it before returning. 'userp' is the
// trace's user pointer. Activities the server does not name are reported as
// TRITONSERVER_TRACE_CUSTOM_ACTIVITY; the trace's context (a JSON object)
// then maps the decimal timestamp to the activity's name, as Triton's does.
typedef void (*TRITONSERVER_InferenceTraceActivityFn_t)(
    struct TRITONSERVER_InferenceTrace* trace,
    TRITONSERVER_InferenceTraceActivity activity, uint64_t timestamp_ns,
    void* userp);

// A tensor event of a trace made with TRITONSERVER_InferenceTraceTensorNew
// at level TRITONSERVER_TRACE_LEVEL_TENSORS:
// TRITONSERVER_TRACE_TENSOR_QUEUE_INPUT for each input of the request (the
// caller's own buffers) and TRITONSERVER_TRACE_TENSOR_BACKEND_OUTPUT for each
// output of each response (the buffers the response allocator gave).
// 'name', 'base' and 'shape' are valid during the call only.
typedef void (*TRITONSERVER_InferenceTraceTensorActivityFn_t)(
    struct TRITONSERVER_InferenceTrace* trace,
    TRITONSERVER_InferenceTraceActivity activity, const char* name,
    TRITONSERVER_DataType datatype, const void* base, size_t byte_size,
    const int64_t* shape, uint64_t dim_count,
    TRITONSERVER_MemoryType memory_type, int64_t memory_type_id, void* userp);

// The end of a trace the caller made, or of a child of it: the server is
// done with 'trace' and hands it back; the callee owns it and deletes it
// with TRITONSERVER_InferenceTraceDelete (from this callback or later).
// Called once per request traced with it, after its last activity.
typedef void (*TRITONSERVER_InferenceTraceReleaseFn_t)(
    struct TRITONSERVER_InferenceTrace* trace, void* userp);

// Creates a trace owned by the caller, to trace a request submitted with
// TRITONSERVER_ServerInferAsync. 'level' says what is reported:
// TRITONSERVER_TRACE_LEVEL_TIMESTAMPS reports the timeline to 'activity_fn'
// (the obsolete MIN and MAX count as TIMESTAMPS), DISABLED reports nothing.
// 'parent_id' is recorded as the parent's id (0: none). 'activity_fn' (may
// be NULL) and 'release_fn' (required) are called as the section above
// says, with 'trace_userp'. The trace gets an id unique in the process.
// Release it with TRITONSERVER_InferenceTraceDelete.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_InferenceTraceNew(
    struct TRITONSERVER_InferenceTrace** trace,
    TRITONSERVER_InferenceTraceLevel level, uint64_t parent_id,
    TRITONSERVER_InferenceTraceActivityFn_t activity_fn,
    TRITONSERVER_InferenceTraceReleaseFn_t release_fn, void* trace_userp);

// As TRITONSERVER_InferenceTraceNew, with 'tensor_activity_fn' (may be
// NULL) receiving the tensors when 'level' includes
// TRITONSERVER_TRACE_LEVEL_TENSORS.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceTraceTensorNew(
    struct TRITONSERVER_InferenceTrace** trace,
    TRITONSERVER_InferenceTraceLevel level, uint64_t parent_id,
    TRITONSERVER_InferenceTraceActivityFn_t activity_fn,
    TRITONSERVER_InferenceTraceTensorActivityFn_t tensor_activity_fn,
    TRITONSERVER_InferenceTraceReleaseFn_t release_fn, void* trace_userp);

// Deletes a trace the caller owns (made or spawned, and not in flight: a
// trace given to TRITONSERVER_ServerInferAsync is the caller's again only
// in or after its release function). The trace of a request a backend
// serves belongs to the host: TRITONSERVER_ERROR_INVALID_ARG.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceTraceDelete(struct TRITONSERVER_InferenceTrace* trace);

// Records a custom activity called 'activity_name' at 'timestamp'
// (nanoseconds of the monotonic clock, as from std::chrono::steady_clock) in
// 'trace'. The activity is reported as TRITONSERVER_TRACE_CUSTOM_ACTIVITY.
// The name is copied. May be called from any thread while the request that
// owns the trace has not been released.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceTraceReportActivity(
    struct TRITONSERVER_InferenceTrace* trace, uint64_t timestamp,
    const char* activity_name);

// Stores in *id the identifier of 'trace', unique among the traces of this
// host.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_InferenceTraceId(
    struct TRITONSERVER_InferenceTrace* trace, uint64_t* id);

// Stores in *parent_id the identifier of the trace 'trace' was spawned from,
// or 0 if it has no parent.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceTraceParentId(
    struct TRITONSERVER_InferenceTrace* trace, uint64_t* parent_id);

// Stores in *model_name the name of the model the traced request was sent
// to. The string belongs to the trace and lives as long as it.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceTraceModelName(
    struct TRITONSERVER_InferenceTrace* trace, const char** model_name);

// Stores in *model_version the version of the model the traced request was
// sent to.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceTraceModelVersion(
    struct TRITONSERVER_InferenceTrace* trace, int64_t* model_version);

// Stores in *request_id the id of the traced request (possibly empty). The
// string belongs to the trace and lives as long as it.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceTraceRequestId(
    struct TRITONSERVER_InferenceTrace* trace, const char** request_id);

// Stores in *child_trace a new trace owned by the caller whose parent is
// 'trace': a new id, 'trace''s id as its parent id, 'trace''s level and
// callbacks, and an empty context. Pass it to TRITONSERVER_ServerInferAsync
// for the request made on behalf of the one 'trace' follows, or delete it.
// A child of the trace of a request the server traced is finished by the
// server like any of its traces. A NULL 'trace' gives a NULL child, and
// success (a request that is not traced has no child trace). May be called
// from any thread while 'trace' lives.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceTraceSpawnChildTrace(
    struct TRITONSERVER_InferenceTrace* trace,
    struct TRITONSERVER_InferenceTrace** child_trace);

// Replaces the context of 'trace' with a copy of 'trace_context' (a string
// the caller chooses, for instance an OpenTelemetry context as JSON). The
// request the trace follows and the backend serving it see the new
// context.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceTraceSetContext(
    struct TRITONSERVER_InferenceTrace* trace, const char* trace_context);

// Stores in *trace_context the context of 'trace' ("" when none was set).
// The string belongs to the trace: it stays valid until the trace is
// released or its context set again.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceTraceContext(
    struct TRITONSERVER_InferenceTrace* trace, const char** trace_context);

// ---------------------------------------------------------------------------
// Request and response flags and callbacks
//
// Flag values used by the backend API: TRITONBACKEND_RequestFlags reports
// TRITONSERVER_RequestFlag bits, TRITONBACKEND_RequestRelease takes
// TRITONSERVER_RequestReleaseFlag bits, and TRITONBACKEND_ResponseSend and
// TRITONBACKEND_ResponseFactorySendFlags take TRITONSERVER_ResponseCompleteFlag
// bits. All values are powers of two.
// ---------------------------------------------------------------------------

// Sequence-batching flags carried by a request.
typedef enum tritonserver_requestflag_enum {
  TRITONSERVER_REQUEST_FLAG_SEQUENCE_START = 1,
  TRITONSERVER_REQUEST_FLAG_SEQUENCE_END = 2
} TRITONSERVER_RequestFlag;

// How a request is released. RELEASE_ALL hands the request back for good;
// RELEASE_RESCHEDULE asks for it to be queued to the model again.
typedef enum tritonserver_requestreleaseflag_enum {
  TRITONSERVER_REQUEST_RELEASE_ALL = 1,
  TRITONSERVER_REQUEST_RELEASE_RESCHEDULE = 2
} TRITONSERVER_RequestReleaseFlag;

// FINAL marks the last response (or flags-only notice) of a request: no
// further response will follow for it.
typedef enum tritonserver_responsecompleteflag_enum {
  TRITONSERVER_RESPONSE_COMPLETE_FINAL = 1
} TRITONSERVER_ResponseCompleteFlag;

// Called once the server is done with a request a backend submitted with
// TRITONSERVER_ServerInferAsync: 'flags' is TRITONSERVER_REQUEST_RELEASE_ALL
// and 'userp' the request_release_userp. From then on the request and the
// input buffers appended to it are the caller's again: the callback may
// delete the request, change it or submit it again. It runs on the request's
// delivery thread (a thread of the server), after the final response
// callback has returned, with no lock of the server held.
typedef void (*TRITONSERVER_InferenceRequestReleaseFn_t)(
    struct TRITONSERVER_InferenceRequest* request, const uint32_t flags,
    void* userp);

// Delivers one response of a submitted request: 'flags' is 0, or
// TRITONSERVER_RESPONSE_COMPLETE_FINAL on the last call for the request,
// and 'userp' the response_userp. 'response' is owned by the callback from
// here on (release it with TRITONSERVER_InferenceResponseDelete, on any
// thread, at any time); it is NULL on a final call that carries no response
// (a decoupled model's flags-only end). A model that is not decoupled
// produces exactly one call, a response with the FINAL flag. Calls for one
// request come one at a time, in order, on the request's delivery thread
// (a thread of the server, not the serving backend's), with no lock of the
// server held: the callback may call any function of this API, submit
// more requests, and send responses of its own. It should return promptly:
// while it runs, later responses of the request wait (see
// TRITONSERVER_ServerInferAsync for the bound). A callback that never
// returns keeps that request's delivery thread and its undelivered
// responses; other requests and models go on, and the server's shutdown
// gives up on the request at its exit timeout.
typedef void (*TRITONSERVER_InferenceResponseCompleteFn_t)(
    struct TRITONSERVER_InferenceResponse* response, const uint32_t flags,
    void* userp);

// ---------------------------------------------------------------------------
// Inference requests (in-process server API)
//
// A backend runs inference on another model of its server by building a
// request and submitting it with TRITONSERVER_ServerInferAsync; the
// responses come back to its response callback. The life of a request:
//   1. TRITONSERVER_InferenceRequestNew, then inputs, their data, requested
//      outputs, id, flags, parameters and the two callbacks.
//   2. TRITONSERVER_ServerInferAsync. On success the server owns the request
//      until its release callback: the request is "in flight". Functions
//      that would change it, and TRITONSERVER_InferenceRequestDelete, fail
//      with TRITONSERVER_ERROR_INVALID_ARG meanwhile; the getters,
//      TRITONSERVER_InferenceRequestCancel and
//      TRITONSERVER_InferenceRequestIsCancelled may still be called.
//   3. The response callback receives every response, the last one with
//      TRITONSERVER_RESPONSE_COMPLETE_FINAL; then the release callback hands
//      the request back. It may be submitted again or deleted.
// Input data is never copied: the buffers appended to a request must stay
// valid and unchanged until its release callback (or, for a request never
// submitted, until the input is removed or the request deleted).
//
// Threads: a request may be built and submitted on any thread, but calls
// that change one request must not race. Cancel and IsCancelled may be
// called from any thread at any time. Strings handed out belong to the
// request and stay valid until it is changed or deleted.
// ---------------------------------------------------------------------------

// Creates a request for version 'model_version' of model 'model_name'
// served by 'server' (from TRITONBACKEND_ModelServer); -1 picks the newest
// ready version when the request is submitted. The name is copied. On
// success *inference_request is owned by the caller, to be released with
// TRITONSERVER_InferenceRequestDelete. Fails as Triton does when the server
// has no such model ready (the model's error), and with
// TRITONSERVER_ERROR_UNAVAILABLE while the server is not serving.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestNew(
    struct TRITONSERVER_InferenceRequest** inference_request,
    struct TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version);

// Releases a request that is not in flight, with everything the request
// copied; appended input buffers stay the caller's.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestDelete(
    struct TRITONSERVER_InferenceRequest* inference_request);

// Stores in *id the request's id ("" until one is set).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestId(
    struct TRITONSERVER_InferenceRequest* inference_request, const char** id);

// Sets the request's id (copied); responses carry it.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetId(
    struct TRITONSERVER_InferenceRequest* inference_request, const char* id);

// Stores in *flags the request's TRITONSERVER_RequestFlag bits (0 until set).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestFlags(
    struct TRITONSERVER_InferenceRequest* inference_request, uint32_t* flags);

// Sets the request's TRITONSERVER_RequestFlag bits (sequence start and end,
// for models with a sequence batcher).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetFlags(
    struct TRITONSERVER_InferenceRequest* inference_request, uint32_t flags);

// Stores in *correlation_id the request's numeric correlation id (0, the
// default, means none). Fails with TRITONSERVER_ERROR_INVALID_ARG when the
// id is a string.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestCorrelationId(
    struct TRITONSERVER_InferenceRequest* inference_request,
    uint64_t* correlation_id);

// Stores in *correlation_id the request's string correlation id. Fails with
// TRITONSERVER_ERROR_INVALID_ARG when the id is numeric, as it is by default.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestCorrelationIdString(
    struct TRITONSERVER_InferenceRequest* inference_request,
    const char** correlation_id);

// Makes the request's correlation id the number 'correlation_id'.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetCorrelationId(
    struct TRITONSERVER_InferenceRequest* inference_request,
    uint64_t correlation_id);

// Makes the request's correlation id the string 'correlation_id' (copied).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetCorrelationIdString(
    struct TRITONSERVER_InferenceRequest* inference_request,
    const char* correlation_id);

// Asks the server to stop working on the request: the serving backend sees
// it as cancelled (TRITONBACKEND_RequestIsCancelled), a queued request ends
// with a TRITONSERVER_ERROR_CANCELLED response. Best effort; the callbacks
// still come. Submitting the request clears the mark, so cancelling a
// request before TRITONSERVER_ServerInferAsync has no effect on the run.
// Any thread, also while the request is in flight.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestCancel(
    struct TRITONSERVER_InferenceRequest* inference_request);

// Stores in *is_cancelled whether the request was cancelled since it was
// last submitted. Any thread, also while the request is in flight.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestIsCancelled(
    struct TRITONSERVER_InferenceRequest* inference_request,
    bool* is_cancelled);

// Stores in *priority the request's priority (0: the model's default),
// capped at UINT32_MAX. Kept for older callers: prefer
// TRITONSERVER_InferenceRequestPriorityUInt64.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestPriority(
    struct TRITONSERVER_InferenceRequest* inference_request,
    uint32_t* priority);

// Stores in *priority the request's priority (0: the model's default).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestPriorityUInt64(
    struct TRITONSERVER_InferenceRequest* inference_request,
    uint64_t* priority);

// Sets the request's priority. Kept for older callers: prefer
// TRITONSERVER_InferenceRequestSetPriorityUInt64.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetPriority(
    struct TRITONSERVER_InferenceRequest* inference_request, uint32_t priority);

// Sets the request's priority (0: the model's default).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetPriorityUInt64(
    struct TRITONSERVER_InferenceRequest* inference_request, uint64_t priority);

// Stores in *timeout_us the request's timeout in microseconds (0: none).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestTimeoutMicroseconds(
    struct TRITONSERVER_InferenceRequest* inference_request,
    uint64_t* timeout_us);

// Sets the request's timeout in microseconds (0: none): a request still
// queued when it expires ends with an error response.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(
    struct TRITONSERVER_InferenceRequest* inference_request,
    uint64_t timeout_us);

// Adds input 'name' of 'datatype' and the 'dim_count' dimensions at 'shape'
// (with the batch dimension when the model batches), without data yet. Name
// and shape are copied. Fails with TRITONSERVER_ERROR_INVALID_ARG when the
// request already has an input of that name or a raw input.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestAddInput(
    struct TRITONSERVER_InferenceRequest* inference_request, const char* name,
    const TRITONSERVER_DataType datatype, const int64_t* shape,
    uint64_t dim_count);

// Adds the request's only input as raw bytes: when the request is submitted,
// it becomes the model's one configured input, with that input's data type,
// and the shape its dims and the data's size imply (at most one -1 dim; a
// BYTES input must have shape [1], and its data is taken as one element).
// 'name' only names the input in the functions below. Fails with
// TRITONSERVER_ERROR_INVALID_ARG when the request already has an input.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestAddRawInput(
    struct TRITONSERVER_InferenceRequest* inference_request, const char* name);

// Removes input 'name' and its data (INVALID_ARG if there is none).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestRemoveInput(
    struct TRITONSERVER_InferenceRequest* inference_request, const char* name);

// Removes every input and its data.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestRemoveAllInputs(
    struct TRITONSERVER_InferenceRequest* inference_request);

// Appends 'byte_size' bytes at 'base' to the data of input 'name' (the
// buffers of an input are its data in order). Not copied: see the top of
// this section. 'memory_type' must be TRITONSERVER_MEMORY_CPU or
// TRITONSERVER_MEMORY_CPU_PINNED (id 0); GPU memory fails with
// TRITONSERVER_ERROR_UNSUPPORTED, as does an unknown memory type with
// TRITONSERVER_ERROR_INVALID_ARG.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestAppendInputData(
    struct TRITONSERVER_InferenceRequest* inference_request, const char* name,
    const void* base, size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id);

// Appends a buffer of input 'name' meant for model instances of host policy
// 'host_policy_name' (copied). tritonhost keeps such buffers but runs every
// instance with the input's default buffers, which
// TRITONSERVER_InferenceRequestAppendInputData adds and which Triton
// requires as well; submitting an input that has only host-policy buffers
// fails with TRITONSERVER_ERROR_INVALID_ARG. Memory types as there.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy(
    struct TRITONSERVER_InferenceRequest* inference_request, const char* name,
    const void* base, size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id, const char* host_policy_name);

// As TRITONSERVER_InferenceRequestAppendInputData, with the size, memory
// type and id read from 'buffer_attributes', which the caller keeps.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(
    struct TRITONSERVER_InferenceRequest* inference_request, const char* name,
    const void* base, struct TRITONSERVER_BufferAttributes* buffer_attributes);

// Removes every buffer of input 'name', keeping the input; the buffers are
// the caller's again.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestRemoveAllInputData(
    struct TRITONSERVER_InferenceRequest* inference_request, const char* name);

// Asks for output 'name' (copied). A request that asks for none receives
// every output of the model. Asking twice is the same as asking once.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestAddRequestedOutput(
    struct TRITONSERVER_InferenceRequest* inference_request, const char* name);

// No longer asks for output 'name' (INVALID_ARG if it was not asked for).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestRemoveRequestedOutput(
    struct TRITONSERVER_InferenceRequest* inference_request, const char* name);

// No longer asks for any output: the request receives every output.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs(
    struct TRITONSERVER_InferenceRequest* inference_request);

// Sets the function that hands the request back after each submission (see
// TRITONSERVER_InferenceRequestReleaseFn_t), and the pointer passed to it.
// Without one the caller cannot know when it may delete or reuse the
// request and its input buffers.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetReleaseCallback(
    struct TRITONSERVER_InferenceRequest* inference_request,
    TRITONSERVER_InferenceRequestReleaseFn_t request_release_fn,
    void* request_release_userp);

// Sets the allocator for the outputs of the request's responses and the
// pointer passed to its functions, and the function that receives the
// responses (see TRITONSERVER_InferenceResponseCompleteFn_t) and the pointer
// passed to it. Both functions are required (INVALID_ARG otherwise). The
// pointers are not used after the final response callback and the release
// callback of a submission have returned.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetResponseCallback(
    struct TRITONSERVER_InferenceRequest* inference_request,
    struct TRITONSERVER_ResponseAllocator* response_allocator,
    void* response_allocator_userp,
    TRITONSERVER_InferenceResponseCompleteFn_t response_fn,
    void* response_userp);

// Adds parameter 'key' with a string value to the request; the serving
// backend reads it with TRITONBACKEND_RequestParameter. Both are copied.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetStringParameter(
    struct TRITONSERVER_InferenceRequest* request, const char* key,
    const char* value);

// Adds parameter 'key' with an integer value to the request.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetIntParameter(
    struct TRITONSERVER_InferenceRequest* request, const char* key,
    const int64_t value);

// Adds parameter 'key' with a boolean value to the request.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetBoolParameter(
    struct TRITONSERVER_InferenceRequest* request, const char* key,
    const bool value);

// Adds parameter 'key' with a double value to the request.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetDoubleParameter(
    struct TRITONSERVER_InferenceRequest* request, const char* key,
    const double value);

// ---------------------------------------------------------------------------
// Inference responses (in-process server API)
//
// A response delivered to a request's response callback: an error, or the
// outputs and parameters one response of the model carried. The callback
// owns it; everything it hands out belongs to it and stays valid until
// TRITONSERVER_InferenceResponseDelete. Any thread may read it; reads do not
// race with each other.
// ---------------------------------------------------------------------------

// Releases a response, handing each output buffer back to the request's
// allocator (its release_fn runs on this thread).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceResponseDelete(
    struct TRITONSERVER_InferenceResponse* inference_response);

// Returns NULL when the response succeeded, else a new copy of its error
// on every call, which the caller owns and deletes with
// TRITONSERVER_ErrorDelete (the response keeps its own). A response that
// is not a valid handle gets a new TRITONSERVER_ERROR_INVALID_ARG error,
// which the caller owns too.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceResponseError(
    struct TRITONSERVER_InferenceResponse* inference_response);

// Stores in *model_name and *model_version the model and version that
// produced the response.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceResponseModel(
    struct TRITONSERVER_InferenceResponse* inference_response,
    const char** model_name, int64_t* model_version);

// Stores in *request_id the id of the request the response answers.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceResponseId(
    struct TRITONSERVER_InferenceResponse* inference_response,
    const char** request_id);

// Stores in *count the number of parameters the response carries.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceResponseParameterCount(
    struct TRITONSERVER_InferenceResponse* inference_response, uint32_t* count);

// Stores the name, type and value of parameter 'index' (< the count). *vvalue
// points at a NUL-terminated string for STRING, an int64_t for INT, a bool
// for BOOL and a double for DOUBLE.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceResponseParameter(
    struct TRITONSERVER_InferenceResponse* inference_response,
    const uint32_t index, const char** name, TRITONSERVER_ParameterType* type,
    const void** vvalue);

// Stores in *count the number of outputs the response carries (those the
// request asked for, or all the model produced).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceResponseOutputCount(
    struct TRITONSERVER_InferenceResponse* inference_response, uint32_t* count);

// Stores what is known of output 'index' (< the count): name, data type,
// shape (*dim_count dimensions at *shape), data (*byte_size bytes at *base,
// in memory *memory_type / *memory_type_id) and the buffer_userp the
// allocator returned with the buffer (NULL when the server allocated none).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceResponseOutput(
    struct TRITONSERVER_InferenceResponse* inference_response,
    const uint32_t index, const char** name, TRITONSERVER_DataType* datatype,
    const int64_t** shape, uint64_t* dim_count, const void** base,
    size_t* byte_size, TRITONSERVER_MemoryType* memory_type,
    int64_t* memory_type_id, void** userp);

// Stores in *label the classification label of class 'class_index' of
// output 'index'. tritonhost loads no label files, so *label is always
// NULL ("no label"), as Triton reports for a model without labels.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_InferenceResponseOutputClassificationLabel(
    struct TRITONSERVER_InferenceResponse* inference_response,
    const uint32_t index, const size_t class_index, const char** label);

// ---------------------------------------------------------------------------
// Buffer attributes
//
// A small record describing a buffer: memory type and id, byte size and, for
// GPU memory shared between processes, a CUDA IPC handle. Backends receive
// them from TRITONBACKEND_InputBufferAttributes and friends (owned by the
// input, output or state) and create their own to report memory usage.
// ---------------------------------------------------------------------------

// Creates buffer attributes describing an empty CPU buffer (memory type CPU,
// id 0, size 0, no IPC handle). On success *buffer_attributes is owned by the
// caller and must be released with TRITONSERVER_BufferAttributesDelete.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_BufferAttributesNew(
    struct TRITONSERVER_BufferAttributes** buffer_attributes);

// Releases buffer attributes created by TRITONSERVER_BufferAttributesNew.
// Attributes obtained from an input, output or state belong to that object
// and must not be passed here.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_BufferAttributesDelete(
    struct TRITONSERVER_BufferAttributes* buffer_attributes);

// Sets the memory type id recorded in 'buffer_attributes'.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_BufferAttributesSetMemoryTypeId(
    struct TRITONSERVER_BufferAttributes* buffer_attributes,
    int64_t memory_type_id);

// Sets the memory type recorded in 'buffer_attributes'.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_BufferAttributesSetMemoryType(
    struct TRITONSERVER_BufferAttributes* buffer_attributes,
    TRITONSERVER_MemoryType memory_type);

// Records 'cuda_ipc_handle', a pointer to a cudaIpcMemHandle_t, in
// 'buffer_attributes'. The pointer is stored as given, not copied: the
// handle it points to must outlive the attributes.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_BufferAttributesSetCudaIpcHandle(
    struct TRITONSERVER_BufferAttributes* buffer_attributes,
    void* cuda_ipc_handle);

// Sets the byte size recorded in 'buffer_attributes'.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_BufferAttributesSetByteSize(
    struct TRITONSERVER_BufferAttributes* buffer_attributes, size_t byte_size);

// Stores in *memory_type_id the memory type id recorded in the attributes.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_BufferAttributesMemoryTypeId(
    struct TRITONSERVER_BufferAttributes* buffer_attributes,
    int64_t* memory_type_id);

// Stores in *memory_type the memory type recorded in the attributes.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_BufferAttributesMemoryType(
    struct TRITONSERVER_BufferAttributes* buffer_attributes,
    TRITONSERVER_MemoryType* memory_type);

// Stores in *cuda_ipc_handle the CUDA IPC handle pointer recorded in the
// attributes, or NULL if the buffer has none.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_BufferAttributesCudaIpcHandle(
    struct TRITONSERVER_BufferAttributes* buffer_attributes,
    void** cuda_ipc_handle);

// Stores in *byte_size the byte size recorded in the attributes.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_BufferAttributesByteSize(
    struct TRITONSERVER_BufferAttributes* buffer_attributes, size_t* byte_size);

// ---------------------------------------------------------------------------
// Server options (in-process server API)
//
// An application that embeds a server (linked with libtritonserver.so)
// creates one from options: TRITONSERVER_ServerOptionsNew, setters, then
// TRITONSERVER_ServerNew. An options object is owned by its creator, who
// deletes it with TRITONSERVER_ServerOptionsDelete (ServerNew copies what
// it needs); one thread at a time may use it. Strings are copied.
//
// Each setter that matches a `tritonhost serve` flag sets the same thing
// (the flag is named in its comment), with Triton's defaults for an
// embedded server where they differ from serve's. A setting the host
// cannot honour fails when it is set, with TRITONSERVER_ERROR_UNSUPPORTED
// (for instance a response cache, rate limiting, model namespacing), as
// Triton answers for a feature its build leaves out; setting it back to
// its default (off, 0 or empty) succeeds.
// ---------------------------------------------------------------------------

// How the model repository is managed: loaded once, polled for changes, or
// loaded and unloaded only on explicit request.
typedef enum tritonserver_modelcontrolmode_enum {
  TRITONSERVER_MODEL_CONTROL_NONE,
  TRITONSERVER_MODEL_CONTROL_POLL,
  TRITONSERVER_MODEL_CONTROL_EXPLICIT
} TRITONSERVER_ModelControlMode;

// Whether executions are rate-limited by resource counts.
typedef enum tritonserver_ratelimitmode_enum {
  TRITONSERVER_RATE_LIMIT_OFF,
  TRITONSERVER_RATE_LIMIT_EXEC_COUNT
} TRITONSERVER_RateLimitMode;

// Batching properties of a model (bit flags).
typedef enum tritonserver_batchflag_enum {
  TRITONSERVER_BATCH_UNKNOWN = 1,
  TRITONSERVER_BATCH_FIRST_DIM = 2
} TRITONSERVER_ModelBatchFlag;

// Filters for a model index query (bit flags).
typedef enum tritonserver_modelindexflag_enum {
  TRITONSERVER_INDEX_FLAG_READY = 1
} TRITONSERVER_ModelIndexFlag;

// Transaction policy of a model (bit flags): exactly one response per
// request, or any number of responses (decoupled).
typedef enum tritonserver_txn_property_flag_enum {
  TRITONSERVER_TXN_ONE_TO_ONE = 1,
  TRITONSERVER_TXN_DECOUPLED = 2
} TRITONSERVER_ModelTxnPropertyFlag;

// Stores in *options new server options with Triton's defaults: server id
// "triton", no model repository, TRITONSERVER_MODEL_CONTROL_POLL, strict
// model configuration (no auto-complete), exit on error, strict
// readiness, exit timeout 30 s, metrics (GPU and CPU too) polled every
// 2000 ms, pinned memory pool 256 MiB, minimum compute capability 6.0,
// info, warning and error logging, backends in /opt/tritonserver/backends.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ServerOptionsNew(
    struct TRITONSERVER_ServerOptions** options);

// Releases options the caller owns.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsDelete(struct TRITONSERVER_ServerOptions* options);

// The name TRITONSERVER_ServerMetadata reports (--id).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetServerId(
    struct TRITONSERVER_ServerOptions* options, const char* server_id);

// Adds a model repository directory (--model-repository); call once per
// repository. A model name in two repositories is unavailable.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetModelRepositoryPath(
    struct TRITONSERVER_ServerOptions* options,
    const char* model_repository_path);

// How models load (--model-control-mode): NONE, every model at start;
// POLL, every model at start, then TRITONSERVER_ServerPollModelRepository
// loads, reloads and unloads models as the repositories changed; EXPLICIT,
// the startup models, then the model-control calls. Another value is
// TRITONSERVER_ERROR_INVALID_ARG.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetModelControlMode(
    struct TRITONSERVER_ServerOptions* options,
    TRITONSERVER_ModelControlMode mode);

// Adds a model to load at start under explicit control (--load-model; "*"
// for every model).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetStartupModel(
    struct TRITONSERVER_ServerOptions* options, const char* model_name);

// Strict model configuration: true leaves configurations as written, false
// lets backends complete them (--disable-auto-complete-config is true).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetStrictModelConfig(
    struct TRITONSERVER_ServerOptions* options, bool strict);

// A configuration file name to read instead of config.pbtxt: not supported
// (TRITONSERVER_ERROR_UNSUPPORTED); "" (config.pbtxt) is accepted.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetModelConfigName(
    struct TRITONSERVER_ServerOptions* options, const char* model_config_name);

// Rate limiting: TRITONSERVER_RATE_LIMIT_OFF is accepted,
// TRITONSERVER_RATE_LIMIT_EXEC_COUNT is TRITONSERVER_ERROR_UNSUPPORTED,
// another value TRITONSERVER_ERROR_INVALID_ARG.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetRateLimiterMode(
    struct TRITONSERVER_ServerOptions* options,
    TRITONSERVER_RateLimitMode mode);

// A resource for rate limiting: TRITONSERVER_ERROR_UNSUPPORTED (no rate
// limiter).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsAddRateLimiterResource(
    struct TRITONSERVER_ServerOptions* options, const char* resource_name,
    const size_t resource_count, const int device);

// Size of the pinned host memory pool backends allocate from
// (--pinned-memory-pool-byte-size).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize(
    struct TRITONSERVER_ServerOptions* options, uint64_t size);

// Size of the device memory pool of GPU 'gpu_device'
// (--cuda-memory-pool-byte-size <gpu>:<bytes>); a negative device is
// TRITONSERVER_ERROR_INVALID_ARG.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize(
    struct TRITONSERVER_ServerOptions* options, int gpu_device, uint64_t size);

// Virtual address space for growable implicit state on a GPU:
// TRITONSERVER_ERROR_UNSUPPORTED for a size above 0.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize(
    struct TRITONSERVER_ServerOptions* options, int gpu_device,
    size_t cuda_virtual_address_size);

// The older form of a "local" response cache of size bytes
// (--response-cache-byte-size): the same as
// TRITONSERVER_ServerOptionsSetCacheConfig(options, "local",
// "{\"size\":\"<size>\"}"); 0 removes a "local" cache set before.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetResponseCacheByteSize(
    struct TRITONSERVER_ServerOptions* options, uint64_t size);

// The server's response cache (--cache-config): the library
// <cache directory>/<cache_name>/libtritoncache_<cache_name>.so, whose
// initialize receives config_json as it is. TRITONSERVER_ERROR_INVALID_ARG
// when config_json is not JSON. A server has one cache: with two names set,
// TRITONSERVER_ServerNew fails; one that cannot be found or initialized
// fails it too. Models use the cache when their configuration says
// response_cache { enable: true }.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetCacheConfig(
    struct TRITONSERVER_ServerOptions* options, const char* cache_name,
    const char* config_json);

// Where response cache libraries are looked for (--cache-directory;
// default /opt/tritonserver/caches).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetCacheDirectory(
    struct TRITONSERVER_ServerOptions* options, const char* cache_dir);

// GPUs of a lower CUDA compute capability are not used
// (--min-supported-compute-capability).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability(
    struct TRITONSERVER_ServerOptions* options, double cc);

// Whether TRITONSERVER_ServerNew fails when a model fails to load
// (--exit-on-error); otherwise the server serves the others.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetExitOnError(
    struct TRITONSERVER_ServerOptions* options, bool exit);

// Whether TRITONSERVER_ServerIsReady requires every model to have loaded
// (--strict-readiness).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetStrictReadiness(
    struct TRITONSERVER_ServerOptions* options, bool strict);

// Seconds TRITONSERVER_ServerStop waits for requests in flight and for
// models to unload (--exit-timeout-secs).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetExitTimeout(
    struct TRITONSERVER_ServerOptions* options, unsigned int timeout);

// Threads copying tensors for a buffer manager: 0 is accepted (tensors are
// copied by the threads that use them), more is
// TRITONSERVER_ERROR_UNSUPPORTED.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetBufferManagerThreadCount(
    struct TRITONSERVER_ServerOptions* options, unsigned int thread_count);

// How many models load at once (0: the default, 4).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetModelLoadThreadCount(
    struct TRITONSERVER_ServerOptions* options, unsigned int thread_count);

// Retries of a model load that failed: 0 is accepted, more is
// TRITONSERVER_ERROR_UNSUPPORTED.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetModelLoadRetryCount(
    struct TRITONSERVER_ServerOptions* options, unsigned int retry_count);

// Model namespacing: false is accepted, true is
// TRITONSERVER_ERROR_UNSUPPORTED.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetModelNamespacing(
    struct TRITONSERVER_ServerOptions* options, bool enable_namespace);

// Whether to try to enable peer access between GPUs. Accepted either way:
// tritonhost never enables it (Triton only tries, too), so data between
// GPUs goes through host memory.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetEnablePeerAccess(
    struct TRITONSERVER_ServerOptions* options, bool enable_peer_access);

// Writes the server's log to 'file' (appended), "" for standard error. The
// file is opened by TRITONSERVER_ServerNew, which fails
// (TRITONSERVER_ERROR_INTERNAL) if it cannot be.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetLogFile(
    struct TRITONSERVER_ServerOptions* options, const char* file);

// Whether the server logs informational messages (--log-info).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetLogInfo(
    struct TRITONSERVER_ServerOptions* options, bool log);

// Whether the server logs warnings (--log-warning).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetLogWarn(
    struct TRITONSERVER_ServerOptions* options, bool log);

// Whether the server logs errors (--log-error).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetLogError(
    struct TRITONSERVER_ServerOptions* options, bool log);

// The log line format (--log-format): TRITONSERVER_LOG_DEFAULT or
// TRITONSERVER_LOG_ISO8601; another value is TRITONSERVER_ERROR_INVALID_ARG.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetLogFormat(
    struct TRITONSERVER_ServerOptions* options,
    const TRITONSERVER_LogFormat format);

// The verbose logging level, 0 for none (--log-verbose).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetLogVerbose(
    struct TRITONSERVER_ServerOptions* options, int level);

// Whether the server keeps metrics (--allow-metrics); without them
// TRITONSERVER_MetricsFormatted gives an empty text.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetMetrics(
    struct TRITONSERVER_ServerOptions* options, bool metrics);

// Whether the metrics include the GPUs' figures (--allow-gpu-metrics).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetGpuMetrics(
    struct TRITONSERVER_ServerOptions* options, bool gpu_metrics);

// Whether the metrics include the host's CPU utilization and memory
// (--allow-cpu-metrics).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetCpuMetrics(
    struct TRITONSERVER_ServerOptions* options, bool cpu_metrics);

// Milliseconds between polls of the CPU figures (--metrics-interval-ms); 0
// is TRITONSERVER_ERROR_INVALID_ARG.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetMetricsInterval(
    struct TRITONSERVER_ServerOptions* options, uint64_t metrics_interval_ms);

// Where backends are looked for, as <dir>/<name>/libtriton_<name>.so
// (--backend-directory).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetBackendDirectory(
    struct TRITONSERVER_ServerOptions* options, const char* backend_dir);

// Where repository agents are looked for, as
// <dir>/<name>/libtritonrepoagent_<name>.so (--repoagent-directory;
// default /opt/tritonserver/repoagents). A model's
// model_repository_agents name them.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetRepoAgentDirectory(
    struct TRITONSERVER_ServerOptions* options, const char* repoagent_dir);

// A limit on the memory of a device that loading models may use: checked
// as Triton checks it (a GPU, a device id >= 0, a fraction within [0, 1],
// else TRITONSERVER_ERROR_INVALID_ARG), then
// TRITONSERVER_ERROR_UNSUPPORTED (loads are not limited by device memory).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit(
    struct TRITONSERVER_ServerOptions* options,
    const TRITONSERVER_InstanceGroupKind kind, const int device_id,
    const double fraction);

// A setting for the backend named 'backend_name', or for every backend
// when it is "" (--backend-config <backend>,<setting>=<value>); the
// backend reads it from TRITONBACKEND_BackendConfig.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetBackendConfig(
    struct TRITONSERVER_ServerOptions* options, const char* backend_name,
    const char* setting, const char* value);

// A host policy setting: TRITONSERVER_ERROR_UNSUPPORTED (Triton's message
// for a setting other than "numa-node" and "cpu-cores"; host policies are
// not applied).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetHostPolicy(
    struct TRITONSERVER_ServerOptions* options, const char* policy_name,
    const char* setting, const char* value);

// A metrics setting: TRITONSERVER_ERROR_UNSUPPORTED (the metrics families
// are fixed).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetMetricsConfig(
    struct TRITONSERVER_ServerOptions* options, const char* name,
    const char* setting, const char* value);

// ---------------------------------------------------------------------------
// The server object (in-process server API)
//
// TRITONSERVER_ServerNew creates a server inside the calling process: its
// models load from the repositories with their backends, and it answers
// the in-process API (inference requests, model queries, model control)
// but listens on no port. A server made by ServerNew belongs to its
// creator, who deletes it with TRITONSERVER_ServerDelete once nothing uses
// it; the server a backend gets from TRITONBACKEND_ModelServer belongs to
// the host and cannot be stopped or deleted through the API
// (TRITONSERVER_ERROR_INVALID_ARG). Several servers may live in one
// process. Any thread may call these.
// ---------------------------------------------------------------------------

// Creates a server from 'options' (read during the call; the caller keeps
// them) and returns once the models to load at start have loaded or
// failed. With exit-on-error set (the default), a model that fails to load
// makes the call fail: the server is stopped and *server left alone;
// otherwise the server serves the others. On success *server is owned by
// the caller.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ServerNew(
    struct TRITONSERVER_Server** server,
    struct TRITONSERVER_ServerOptions* options);

// Stops the server if it has not stopped (TRITONSERVER_ServerStop) and
// releases it; the handle is invalid from then on. An error from the stop
// is returned, and the server is released all the same.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ServerDelete(
    struct TRITONSERVER_Server* server);

// Stops the server: new requests are refused, requests in flight finish,
// then every model unloads, all within the exit timeout; what is still
// running then is abandoned and the call fails with
// TRITONSERVER_ERROR_UNAVAILABLE naming it. Stopping again does nothing.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ServerStop(
    struct TRITONSERVER_Server* server);

// Replaces the exit timeout of a running server, in seconds.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerSetExitTimeout(
    struct TRITONSERVER_Server* server, unsigned int timeout);

// Registers a model repository under explicit model control: its models
// can then be loaded by name. 'name_mapping' (may be NULL when
// 'mapping_count' is 0; read during the call only) maps model names to
// subdirectories of the repository: each a TRITONSERVER_PARAMETER_STRING
// parameter named by the subdirectory whose value is the model's name.
// Triton's errors: TRITONSERVER_ERROR_UNSUPPORTED without explicit model
// control, TRITONSERVER_ERROR_INVALID_ARG for a path that is no directory
// or a mapping that is not a string or names a model twice,
// TRITONSERVER_ERROR_ALREADY_EXISTS for a repository or mapped name
// already registered.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerRegisterModelRepository(
    struct TRITONSERVER_Server* server, const char* repository_path,
    const struct TRITONSERVER_Parameter** name_mapping,
    const uint32_t mapping_count);

// Unregisters a model repository and its mappings, under explicit model
// control; its loaded models stay loaded until unloaded.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerUnregisterModelRepository(
    struct TRITONSERVER_Server* server, const char* repository_path);

// Under TRITONSERVER_MODEL_CONTROL_POLL, brings the models in line with the
// repositories and returns once that is done: a new model directory loads,
// one changed since its model loaded (a file in it newer) loads again, one
// removed unloads. Otherwise TRITONSERVER_ERROR_UNAVAILABLE "polling is
// disabled", as Triton answers.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerPollModelRepository(struct TRITONSERVER_Server* server);

// Stores in *live whether the server takes requests (until it stops).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ServerIsLive(
    struct TRITONSERVER_Server* server, bool* live);

// Stores in *ready whether the server is ready: live and, under strict
// readiness, every model it tried to load loaded.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ServerIsReady(
    struct TRITONSERVER_Server* server, bool* ready);

// Stores in *server_metadata a new message, owned by the caller, holding
// {"name" (the server id), "version" (tritonhost's), "extensions" (the
// protocol extensions the server implements)}.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ServerMetadata(
    struct TRITONSERVER_Server* server,
    struct TRITONSERVER_Message** server_metadata);

// ---------------------------------------------------------------------------
// The server: model queries and inference (in-process server API)
//
// 'server' is the handle TRITONBACKEND_ModelServer returns, which stays
// valid while the server runs, or one TRITONSERVER_ServerNew made, valid
// until TRITONSERVER_ServerDelete. Any thread may call these. Errors are the
// server's own, code and message as a client of the server would see them (an
// unknown model: TRITONSERVER_ERROR_NOT_FOUND "Request for unknown model:
// '<name>' is not found"). A server that has not started serving yet (while
// its models load) answers every one with TRITONSERVER_ERROR_UNAVAILABLE
// "Server not ready"; one that is shutting down answers ModelIsReady so and
// refuses new requests with TRITONSERVER_ERROR_UNAVAILABLE.
// ---------------------------------------------------------------------------

// Stores in *ready whether version 'model_version' of 'model_name' (-1: the
// newest) is loaded and ready for inference; an unknown model is not ready,
// and not an error.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerModelIsReady(
    struct TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, bool* ready);

// Stores in *model_metadata a new message, owned by the caller (release it
// with TRITONSERVER_MessageDelete), holding the model's metadata as Triton's
// JSON: {"name", "versions" (the version asked for, or every ready one for
// -1), "platform", "inputs" and "outputs" (each {"name", "datatype",
// "shape"}, -1 for a variable or batch dimension)}. Fails with the model's
// error when it is not loaded.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerModelMetadata(
    struct TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, struct TRITONSERVER_Message** model_metadata);

// Stores in *model_config a new message, owned by the caller (release it
// with TRITONSERVER_MessageDelete), holding the configuration of the model
// as loaded, in the JSON TRITONBACKEND_ModelConfig gives its backend.
// 'config_version' must be 1 (TRITONSERVER_ERROR_INVALID_ARG otherwise, once
// the model was found).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ServerModelConfig(
    struct TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, const uint32_t config_version,
    struct TRITONSERVER_Message** model_config);

// Stores in *flags the batching of version 'model_version' of 'model_name'
// (-1: the newest ready one): TRITONSERVER_BATCH_FIRST_DIM when its
// configuration's max_batch_size is above 0, TRITONSERVER_BATCH_UNKNOWN
// otherwise; and NULL in *voidp when 'voidp' is not NULL. Fails with the
// model's error when it is not loaded.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerModelBatchProperties(
    struct TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, uint32_t* flags, void** voidp);

// Stores in *model_stats a new message, owned by the caller, holding the
// statistics of the ready versions of 'model_name' ("" for every model,
// -1 for every version) as Triton's JSON: {"model_stats": [{"name",
// "version", "last_inference", "inference_count", "execution_count",
// "inference_stats", "response_stats", "batch_stats", "memory_usage"}]},
// the statistics the server's endpoints report. A model with no ready
// version, or a version not ready, is TRITONSERVER_ERROR_INVALID_ARG, as in
// Triton.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerModelStatistics(
    struct TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, struct TRITONSERVER_Message** model_stats);

// Stores in *model_index a new message, owned by the caller, listing the
// models of the repositories as Triton's JSON: [{"name", "version", "state"
// (READY, UNAVAILABLE, ...), "reason" (when not empty)}], sorted by name and
// version; with TRITONSERVER_INDEX_FLAG_READY in 'flags', only the ready
// ones.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ServerModelIndex(
    struct TRITONSERVER_Server* server, uint32_t flags,
    struct TRITONSERVER_Message** model_index);

// Stores in *txn_flags the transaction policy of version 'model_version' of
// 'model_name' (-1: the newest ready one): TRITONSERVER_TXN_DECOUPLED for a
// decoupled model, TRITONSERVER_TXN_ONE_TO_ONE otherwise; and NULL in
// *voidp when 'voidp' is not NULL. Fails with the model's error when it is
// not loaded.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerModelTransactionProperties(
    struct TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, uint32_t* txn_flags, void** voidp);

// ---------------------------------------------------------------------------
// Model control (in-process server API)
//
// Loading and unloading models by name, under explicit model control
// (TRITONSERVER_MODEL_CONTROL_EXPLICIT, or `tritonhost serve
// --model-control-mode=explicit`); otherwise these fail with
// TRITONSERVER_ERROR_UNAVAILABLE "explicit model load / unload is not
// allowed if polling is enabled", as Triton's do. Any thread may call
// them, a backend's Execute included, except that a backend must not load
// again the model it is executing for (the load waits for the requests of
// the version it replaces).
// ---------------------------------------------------------------------------

// Loads 'model_name' from the model repositories, or loads it again if it
// is loaded, and returns once it loaded or failed to (with the reason, as
// TRITONSERVER_ERROR_INTERNAL "failed to load '<name>', ..." or the load's
// own error). 'parameters' (may be NULL when 'parameter_count' is 0) are
// the caller's and are read during the call only; they are the load
// request's parameters as the repository RPCs take them: "config", a
// TRITONSERVER_PARAMETER_STRING holding a model configuration in JSON used
// instead of the repository's config.pbtxt, and "file:<path>", a
// TRITONSERVER_PARAMETER_BYTES holding a model file (such as
// "file:1/model.onnx"), which needs "config": the model then loads from a
// new directory holding those files, removed when it unloads. Loading an
// ensemble loads the models it runs.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerLoadModelWithParameters(
    struct TRITONSERVER_Server* server, const char* model_name,
    const struct TRITONSERVER_Parameter** parameters,
    const uint64_t parameter_count);

// TRITONSERVER_ServerLoadModelWithParameters without parameters.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ServerLoadModel(
    struct TRITONSERVER_Server* server, const char* model_name);

// Unloads every version of 'model_name'. Returns once the model takes no
// new requests, without waiting for its versions to finish the requests
// they hold and to unload (so a backend may unload the model it serves);
// the ensembles that run the model become unavailable with it. A model of
// the repositories that is not loaded is no error; a name no repository
// has is TRITONSERVER_ERROR_NOT_FOUND.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ServerUnloadModel(
    struct TRITONSERVER_Server* server, const char* model_name);

// As TRITONSERVER_ServerUnloadModel, and then unloads the models the
// model's steps run (an ensemble's composing models, and theirs in turn)
// that no other loaded ensemble runs.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_ServerUnloadModelAndDependents(
    struct TRITONSERVER_Server* server, const char* model_name);

// Stores in *metrics a new snapshot, owned by the caller (release it with
// TRITONSERVER_MetricsDelete), of the server's metrics: what its /metrics
// endpoint serves (see TRITONSERVER_MetricsFormatted).
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ServerMetrics(
    struct TRITONSERVER_Server* server, struct TRITONSERVER_Metrics** metrics);

// Submits 'inference_request' (see "Inference requests" above). The request
// is checked against the model's configuration first: on error nothing was
// submitted, no callback will come, and the caller still owns the request.
// On success the request is in flight until its release callback, and its
// responses reach its response callback.
//
// 'trace' is NULL, or a trace the caller owns (made, or spawned from the
// trace of the request it serves), which the call takes whatever it
// returns: the request is traced with it (see "Tracing" above), and the
// trace goes back through its release function (or, a child of a trace the
// server made, is finished by the server) once the request has finished,
// or before this call returns an error. The trace of a request the caller
// serves is refused (TRITONSERVER_ERROR_INVALID_ARG, nothing submitted):
// spawn a child of it.
//
// Responses wait for the response callback in a queue of the request,
// bounded by the server's --inprocess-max-pending-responses setting: when
// it is full, the serving backend's TRITONBACKEND_ResponseSend waits for
// room up to --inprocess-stall-timeout milliseconds, then fails with
// TRITONSERVER_ERROR_UNAVAILABLE and the request is cancelled. The final
// response is always taken.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_ServerInferAsync(
    struct TRITONSERVER_Server* server,
    struct TRITONSERVER_InferenceRequest* inference_request,
    struct TRITONSERVER_InferenceTrace* trace);

// ---------------------------------------------------------------------------
// Custom metrics
//
// A backend may publish its own metrics on the host's metrics endpoint. A
// metric family has a kind, a name and a description; each metric in it is
// one time series, told apart by its labels. Delete every metric of a family
// before the family itself. All metric functions may be called from any
// thread, also concurrently on the same metric.
// ---------------------------------------------------------------------------

typedef enum TRITONSERVER_metrickind_enum {
  TRITONSERVER_METRIC_KIND_COUNTER,
  TRITONSERVER_METRIC_KIND_GAUGE,
  TRITONSERVER_METRIC_KIND_HISTOGRAM
} TRITONSERVER_MetricKind;

// Creates a metric family of 'kind' named 'name' (a valid Prometheus metric
// name) with help text 'description'. Both strings are copied. On success
// *family is owned by the caller and must be released with
// TRITONSERVER_MetricFamilyDelete.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_MetricFamilyNew(
    struct TRITONSERVER_MetricFamily** family,
    const TRITONSERVER_MetricKind kind, const char* name,
    const char* description);

// Releases a metric family. Fails, leaving the family intact, while metrics
// created in it have not been deleted.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_MetricFamilyDelete(struct TRITONSERVER_MetricFamily* family);

// Creates an empty set of extra metric arguments, needed to create histogram
// metrics. On success *args is owned by the caller and must be released
// with TRITONSERVER_MetricArgsDelete.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_MetricArgsNew(
    struct TRITONSERVER_MetricArgs** args);

// Makes 'args' describe a histogram with the 'buckets_count' bucket upper
// bounds at 'buckets' (ascending). The bounds are copied.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_MetricArgsSetHistogram(
    struct TRITONSERVER_MetricArgs* args, const double* buckets,
    const uint64_t buckets_count);

// Releases metric arguments. Metrics created with them are not affected.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_MetricArgsDelete(
    struct TRITONSERVER_MetricArgs* args);

// Creates a counter or gauge metric in 'family' identified by the
// 'label_count' parameters at 'labels' (STRING parameters; their names and
// values become the label names and values). The labels are copied: the
// caller keeps ownership and may delete them right away. On success *metric
// is owned by the caller and must be released with TRITONSERVER_MetricDelete.
// Histogram families need TRITONSERVER_MetricNewWithArgs.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_MetricNew(
    struct TRITONSERVER_Metric** metric,
    struct TRITONSERVER_MetricFamily* family,
    const struct TRITONSERVER_Parameter** labels, const uint64_t label_count);

// Like TRITONSERVER_MetricNew, with extra construction arguments 'args'
// (required for histograms: the bucket bounds). Labels and args are copied;
// the caller keeps ownership of both.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_MetricNewWithArgs(
    struct TRITONSERVER_Metric** metric,
    struct TRITONSERVER_MetricFamily* family,
    const struct TRITONSERVER_Parameter** labels, const uint64_t label_count,
    const struct TRITONSERVER_MetricArgs* args);

// Releases a metric; its time series is no longer reported.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_MetricDelete(
    struct TRITONSERVER_Metric* metric);

// Stores in *value the current value of a counter or gauge. Fails with
// TRITONSERVER_ERROR_UNSUPPORTED for other kinds.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_MetricValue(
    struct TRITONSERVER_Metric* metric, double* value);

// Adds 'value' to a gauge, or to a counter if 'value' is not negative
// (TRITONSERVER_ERROR_INVALID_ARG otherwise). Fails with
// TRITONSERVER_ERROR_UNSUPPORTED for histograms.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_MetricIncrement(
    struct TRITONSERVER_Metric* metric, double value);

// Sets a gauge to 'value'. Fails with TRITONSERVER_ERROR_UNSUPPORTED for
// other kinds.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_MetricSet(
    struct TRITONSERVER_Metric* metric, double value);

// Records one observation of 'value' in a histogram. Fails with
// TRITONSERVER_ERROR_UNSUPPORTED for other kinds.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_MetricObserve(
    struct TRITONSERVER_Metric* metric, double value);

// Stores in *kind the kind of the family 'metric' belongs to.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error* TRITONSERVER_GetMetricKind(
    struct TRITONSERVER_Metric* metric, TRITONSERVER_MetricKind* kind);

// Stores in *kind the kind of 'family'.
TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*
TRITONSERVER_GetMetricFamilyKind(
    struct TRITONSERVER_MetricFamily* family, TRITONSERVER_MetricKind* kind);

#ifdef __cplusplus
}
#endif
