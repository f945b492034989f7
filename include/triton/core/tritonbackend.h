// tritonbackend.h: the TRITONBACKEND part of the C ABI between tritonhost
// and the backends it loads.
//
// This header is written for tritonhost. It follows the names, signatures,
// type tags and numeric values of NVIDIA Triton's tritonbackend.h (API
// version 1.19), so a backend written for Triton compiles against it
// unchanged and a backend built against Triton's header runs in tritonhost.
//
// A backend is a shared library, libtriton_<name>.so, that the host opens
// with dlopen(RTLD_NOW | RTLD_LOCAL). The API runs in both directions:
//
//   * Host functions (TRITONBACKEND_DECLSPEC) are implemented and exported by
//     the host; backends call them to read models, requests and inputs and to
//     build and send responses.
//   * Entry points (TRITONBACKEND_ISPEC) are implemented by the backend and
//     looked up by the host with dlsym. Only TRITONBACKEND_ModelInstanceExecute
//     is required; a missing optional entry point is treated as one that
//     does nothing and succeeds.
//
// The lifecycle, driven by the host, is: TRITONBACKEND_Initialize once per
// library; for each model TRITONBACKEND_ModelInitialize, then
// TRITONBACKEND_ModelInstanceInitialize for each instance; any number of
// TRITONBACKEND_ModelInstanceExecute calls; then
// TRITONBACKEND_ModelInstanceFinalize for each instance,
// TRITONBACKEND_ModelFinalize, and finally TRITONBACKEND_Finalize before the
// library is closed.
//
// The conventions of tritonserver.h apply here too: a TRITONSERVER_Error*
// result is NULL on success or a new error the caller owns; out-parameters
// are written only on success; handles are opaque; strings handed out are
// NUL-terminated and owned by the object they came from; functions may be
// called from any thread, but calls that modify the same object must not
// race. Objects handed to a backend (backend, model, instance, request, ...)
// stay valid for the whole of the lifecycle stage that hands them out, as
// described per section below.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

#ifdef __cplusplus
extern "C" {
#endif

// TRITONBACKEND_DECLSPEC marks a function the host implements and exports;
// TRITONBACKEND_ISPEC marks an entry point the backend implements. With GCC
// and Clang the host's build (which defines _COMPILING_TRITONBACKEND and
// compiles with -fvisibility=hidden) gives host functions default
// visibility, and ISPEC is always empty. On Windows the two macros import
// and export in opposite directions.
#ifdef _COMPILING_TRITONBACKEND
#if defined(_MSC_VER)
#define TRITONBACKEND_DECLSPEC __declspec(dllexport)
#define TRITONBACKEND_ISPEC __declspec(dllimport)
#elif defined(__GNUC__)
#define TRITONBACKEND_DECLSPEC __attribute__((__visibility__("default")))
#define TRITONBACKEND_ISPEC
#else
#define TRITONBACKEND_DECLSPEC
#define TRITONBACKEND_ISPEC
#endif
#else
#if defined(_MSC_VER)
#define TRITONBACKEND_DECLSPEC __declspec(dllimport)
#define TRITONBACKEND_ISPEC __declspec(dllexport)
#else
#define TRITONBACKEND_DECLSPEC
#define TRITONBACKEND_ISPEC
#endif
#endif

// ---------------------------------------------------------------------------
// Handle types
//
// Each handle is a pointer to an incomplete struct owned by the host, except
// TRITONBACKEND_Batcher, which a backend defines for its own use.
// ---------------------------------------------------------------------------

struct TRITONBACKEND_MemoryManager;
struct TRITONBACKEND_Input;
struct TRITONBACKEND_Output;
struct TRITONBACKEND_State;
struct TRITONBACKEND_Request;
struct TRITONBACKEND_ResponseFactory;
struct TRITONBACKEND_Response;
struct TRITONBACKEND_Backend;
struct TRITONBACKEND_Model;
struct TRITONBACKEND_ModelInstance;
struct TRITONBACKEND_ModelInstanceResponseStatistics;
struct TRITONBACKEND_BackendAttribute;
struct TRITONBACKEND_Batcher;

typedef struct TRITONBACKEND_MemoryManager TRITONBACKEND_MemoryManager;
typedef struct TRITONBACKEND_Input TRITONBACKEND_Input;
typedef struct TRITONBACKEND_Output TRITONBACKEND_Output;
typedef struct TRITONBACKEND_State TRITONBACKEND_State;
typedef struct TRITONBACKEND_Request TRITONBACKEND_Request;
typedef struct TRITONBACKEND_ResponseFactory TRITONBACKEND_ResponseFactory;
typedef struct TRITONBACKEND_Response TRITONBACKEND_Response;
typedef struct TRITONBACKEND_Backend TRITONBACKEND_Backend;
typedef struct TRITONBACKEND_Model TRITONBACKEND_Model;
typedef struct TRITONBACKEND_ModelInstance TRITONBACKEND_ModelInstance;
typedef struct TRITONBACKEND_ModelInstanceResponseStatistics
    TRITONBACKEND_ModelInstanceResponseStatistics;
typedef struct TRITONBACKEND_BackendAttribute TRITONBACKEND_BackendAttribute;
typedef struct TRITONBACKEND_Batcher TRITONBACKEND_Batcher;

// ---------------------------------------------------------------------------
// API version
//
// A backend should compare the version it was built with (the macros) with
// the version the host implements (TRITONBACKEND_ApiVersion), usually in
// TRITONBACKEND_Initialize, and refuse to load with
// TRITONSERVER_ERROR_UNSUPPORTED unless the major numbers are equal and the
// host's minor number is at least its own.
// ---------------------------------------------------------------------------

#define TRITONBACKEND_API_VERSION_MAJOR 1
#define TRITONBACKEND_API_VERSION_MINOR 19

// Stores the TRITONBACKEND API version the host implements in *major and
// *minor. Never fails.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ApiVersion(
    uint32_t* major, uint32_t* minor);

// How the files of a backend or model are made available to it. With
// FILESYSTEM, the location reported alongside is a path to a local
// directory the backend can read with ordinary file APIs.
typedef enum TRITONBACKEND_artifacttype_enum {
  TRITONBACKEND_ARTIFACT_FILESYSTEM
} TRITONBACKEND_ArtifactType;

// ---------------------------------------------------------------------------
// Memory manager
//
// Lets a backend allocate from the host's memory pools (CPU, pinned CPU,
// GPU) instead of its own. Obtained from TRITONBACKEND_BackendMemoryManager;
// valid as long as the backend.
// ---------------------------------------------------------------------------

// Allocates 'byte_size' contiguous bytes of 'memory_type' on device
// 'memory_type_id' and stores the address in *buffer. The caller owns the
// block and must return it with TRITONBACKEND_MemoryManagerFree. Fails with
// TRITONSERVER_ERROR_UNSUPPORTED if the host can never allocate that memory
// type and id, and with TRITONSERVER_ERROR_UNAVAILABLE if it can but not a
// block of that size right now.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_MemoryManagerAllocate(
    TRITONBACKEND_MemoryManager* manager, void** buffer,
    const TRITONSERVER_MemoryType memory_type, const int64_t memory_type_id,
    const uint64_t byte_size);

// Returns a block obtained from TRITONBACKEND_MemoryManagerAllocate. The
// memory type and id must be the ones used to allocate it.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_MemoryManagerFree(
    TRITONBACKEND_MemoryManager* manager, void* buffer,
    const TRITONSERVER_MemoryType memory_type, const int64_t memory_type_id);

// ---------------------------------------------------------------------------
// Inputs
//
// An input tensor of a request, obtained from TRITONBACKEND_RequestInput or
// TRITONBACKEND_RequestInputByIndex. An input, and every name, shape, buffer
// and attribute obtained from it, belongs to the request and becomes invalid
// when the request is released. The data of one input may be split over
// several buffers; buffer_count says how many.
// ---------------------------------------------------------------------------

// Reports the properties of 'input'. Each out-pointer may be NULL if that
// property is not wanted: the name, the data type, the shape (an array of
// *dims_count dimensions), the number of data bytes actually supplied (which
// need not match shape times element size; checking is up to the backend),
// and the number of buffers holding those bytes. The name and shape belong
// to the input.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_InputProperties(
    TRITONBACKEND_Input* input, const char** name,
    TRITONSERVER_DataType* datatype, const int64_t** shape,
    uint32_t* dims_count, uint64_t* byte_size, uint32_t* buffer_count);

// Like TRITONBACKEND_InputProperties, but the byte size and buffer count
// describe the data supplied for host policy 'host_policy_name'. If no data
// was supplied for that policy, or 'host_policy_name' is NULL, they describe
// the default data.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_InputPropertiesForHostPolicy(
    TRITONBACKEND_Input* input, const char* host_policy_name, const char** name,
    TRITONSERVER_DataType* datatype, const int64_t** shape,
    uint32_t* dims_count, uint64_t* byte_size, uint32_t* buffer_count);

// Stores in *buffer and *buffer_byte_size buffer number 'index' (0 <= index
// < buffer_count) of 'input'. On entry *memory_type and *memory_type_id give
// the caller's preferred location; on return they give the buffer's actual
// location, which may differ. The buffer belongs to the input: read it, do
// not modify or free it, and do not touch it after the request is released.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_InputBuffer(
    TRITONBACKEND_Input* input, const uint32_t index, const void** buffer,
    uint64_t* buffer_byte_size, TRITONSERVER_MemoryType* memory_type,
    int64_t* memory_type_id);

// Like TRITONBACKEND_InputBuffer, for the data supplied for host policy
// 'host_policy_name', falling back to the default data when there is none
// for that policy or 'host_policy_name' is NULL. 'index' counts the buffers
// reported by TRITONBACKEND_InputPropertiesForHostPolicy for the same
// policy.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_InputBufferForHostPolicy(
    TRITONBACKEND_Input* input, const char* host_policy_name,
    const uint32_t index, const void** buffer, uint64_t* buffer_byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id);

// Stores in *buffer buffer number 'index' of 'input' and in
// *buffer_attributes a description of it (location, size, CUDA IPC handle).
// Both belong to the input and die with the request; do not delete the
// attributes.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_InputBufferAttributes(
    TRITONBACKEND_Input* input, const uint32_t index, const void** buffer,
    TRITONSERVER_BufferAttributes** buffer_attributes);

// ---------------------------------------------------------------------------
// Outputs
//
// An output tensor of a response, created by TRITONBACKEND_ResponseOutput.
// It belongs to the response, as does its buffer.
// ---------------------------------------------------------------------------

// Allocates the data buffer of 'output', 'buffer_byte_size' bytes, and
// stores its address in *buffer for the backend to fill. On entry
// *memory_type and *memory_type_id give the preferred location; on return
// they give the actual one. The buffer belongs to the output and must not be
// used after the response is sent or deleted. For a request another backend
// submitted (TRITONSERVER_ServerInferAsync), the buffer comes from that
// backend's response allocator, on this thread, and may live anywhere it
// says; its errors are returned here.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_OutputBuffer(
    TRITONBACKEND_Output* output, void** buffer,
    const uint64_t buffer_byte_size, TRITONSERVER_MemoryType* memory_type,
    int64_t* memory_type_id);

// Stores in *buffer_attributes a description of the buffer of 'output'.
// Call it after TRITONBACKEND_OutputBuffer; before that the attributes are
// meaningless. The attributes belong to the output; do not delete them.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_OutputBufferAttributes(
    TRITONBACKEND_Output* output,
    TRITONSERVER_BufferAttributes** buffer_attributes);

// ---------------------------------------------------------------------------
// Requests
//
// A request is handed to the backend in TRITONBACKEND_ModelInstanceExecute.
// Once Execute returns success the backend owns each request and must
// release it, exactly once, with TRITONBACKEND_RequestRelease. Everything
// obtained from a request (ids, names, inputs, buffers, parameters, trace)
// becomes invalid when it is released; copy what is needed first. Responses
// and response factories created from a request stay valid after it is
// released.
// ---------------------------------------------------------------------------

// Stores in *id the id the client gave the request, or an empty string if it
// gave none. The string belongs to the request.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_RequestId(
    TRITONBACKEND_Request* request, const char** id);

// Stores in *is_cancelled whether the client has cancelled the request. A
// backend that sees true should stop working on it and answer with a
// TRITONSERVER_ERROR_CANCELLED error response.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_RequestIsCancelled(
    TRITONBACKEND_Request* request, bool* is_cancelled);

// Stores in *is_cancelled whether the request behind 'factory' has been
// cancelled. Unlike TRITONBACKEND_RequestIsCancelled it keeps working after
// the request is released, from any thread, until the factory is deleted.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ResponseFactoryIsCancelled(
    TRITONBACKEND_ResponseFactory* factory, bool* is_cancelled);

// Stores in *id the correlation id of the request when it is an unsigned
// integer; 0 means none. Fails with TRITONSERVER_ERROR_INVALID_ARG if the
// correlation id is a string (use TRITONBACKEND_RequestCorrelationIdString).
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_RequestCorrelationId(
    TRITONBACKEND_Request* request, uint64_t* id);

// Stores in *timeout the timeout the client set for the request, in
// microseconds; 0 means none.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_InferenceRequestTimeoutMicroseconds(
    TRITONBACKEND_Request* request, uint64_t* timeout);

// Stores in *id the correlation id of the request when it is a string; an
// empty string means none. Fails with TRITONSERVER_ERROR_INVALID_ARG if the
// correlation id is an integer. The string belongs to the request.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_RequestCorrelationIdString(
    TRITONBACKEND_Request* request, const char** id);

// Stores in *flags the bitwise OR of the TRITONSERVER_RequestFlag values set
// on the request.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_RequestFlags(
    TRITONBACKEND_Request* request, uint32_t* flags);

// Stores in *count the number of parameters the client attached to the
// request.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_RequestParameterCount(
    TRITONBACKEND_Request* request, uint32_t* count);

// Reads parameter number 'index' (0 <= index < count) of the request: its
// name in *key, its type in *type and a pointer to its value in *vvalue (a
// NUL-terminated string for STRING, an int64_t for INT, a bool for BOOL, a
// double for DOUBLE). Parameter order is not stable between requests. All
// results belong to the request. Fails with TRITONSERVER_ERROR_INVALID_ARG
// for an index out of range.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_RequestParameter(
    TRITONBACKEND_Request* request, const uint32_t index, const char** key,
    TRITONSERVER_ParameterType* type, const void** vvalue);

// Stores in *count the number of input tensors in the request.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_RequestInputCount(
    TRITONBACKEND_Request* request, uint32_t* count);

// Stores in *input_name the name of input number 'index' (0 <= index <
// count). The string belongs to the request.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_RequestInputName(
    TRITONBACKEND_Request* request, const uint32_t index,
    const char** input_name);

// Stores in *input the input tensor called 'name'. Fails with
// TRITONSERVER_ERROR_INVALID_ARG if the request has no such input. The
// input belongs to the request.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_RequestInput(
    TRITONBACKEND_Request* request, const char* name,
    TRITONBACKEND_Input** input);

// Stores in *input input number 'index' (0 <= index < count). Input order is
// not stable between requests, even within one batch. The input belongs to
// the request.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_RequestInputByIndex(
    TRITONBACKEND_Request* request, const uint32_t index,
    TRITONBACKEND_Input** input);

// Stores in *count the number of outputs the client asked for.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_RequestOutputCount(
    TRITONBACKEND_Request* request, uint32_t* count);

// Stores in *output_name the name of requested output number 'index'
// (0 <= index < count). The string belongs to the request.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_RequestOutputName(
    TRITONBACKEND_Request* request, const uint32_t index,
    const char** output_name);

// Asks where the host would like the buffer of an output of this request to
// live. 'name' and 'byte_size' describe the output and may be NULL when not
// yet known. On entry *memory_type and *memory_type_id give the backend's
// preference; on return they give the host's, which
// TRITONBACKEND_OutputBuffer will try to, but need not, honour. For a
// request a backend submitted (TRITONSERVER_ServerInferAsync) the answer
// comes from its allocator's query function; without one, this fails with
// TRITONSERVER_ERROR_UNAVAILABLE. Other requests get CPU memory, id 0.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_RequestOutputBufferProperties(
    TRITONBACKEND_Request* request, const char* name, size_t* byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id);

// Gives the request back to the host. 'release_flags' is a
// TRITONSERVER_RequestReleaseFlag: normally TRITONSERVER_REQUEST_RELEASE_ALL.
// On success the request and everything obtained from it are invalid. On
// failure nothing happened and the backend still owns the request. Report
// per-request statistics before releasing. Response factories and responses
// created from the request are not affected.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_RequestRelease(
    TRITONBACKEND_Request* request, uint32_t release_flags);

// Stores in *trace the trace of the request, or NULL if the request is not
// traced. The trace belongs to the request: do not delete it, and do not use
// it after the request is released.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_RequestTrace(
    TRITONBACKEND_Request* request, TRITONSERVER_InferenceTrace** trace);

// ---------------------------------------------------------------------------
// Response factories
//
// A response factory produces responses for one request and outlives it: a
// backend can release a request early and keep answering it, from any
// thread, through the factory. That is how decoupled backends work.
// ---------------------------------------------------------------------------

// Creates a response factory for 'request' and stores it in *factory. The
// caller owns the factory and must delete it with
// TRITONBACKEND_ResponseFactoryDelete; it stays valid after the request is
// released. May be called only while the backend owns the request.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ResponseFactoryNew(
    TRITONBACKEND_ResponseFactory** factory, TRITONBACKEND_Request* request);

// Deletes a response factory. Responses already created from it are not
// affected. Safe from any thread, before or after the request is released.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ResponseFactoryDelete(
    TRITONBACKEND_ResponseFactory* factory);

// Sends 'send_flags' (TRITONSERVER_ResponseCompleteFlag bits) to the client
// without a response. With TRITONSERVER_RESPONSE_COMPLETE_FINAL this ends
// the request's stream of responses, also when no response was sent at all.
// Safe from any thread, also after the request is released.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ResponseFactorySendFlags(
    TRITONBACKEND_ResponseFactory* factory, const uint32_t send_flags);

// ---------------------------------------------------------------------------
// Responses
//
// A response carries output tensors and parameters, or an error, back to the
// client. Responses are created from a request or a factory, filled, and
// then either sent (TRITONBACKEND_ResponseSend, which takes ownership) or
// discarded (TRITONBACKEND_ResponseDelete).
//
// Ordering rule: for one request, once a response is created, all of its
// outputs and output buffers must be created before the next response for
// that request is created, and the outputs of one response must be created
// one after another, not from several threads at once. Responses for
// different requests may be built in parallel on different threads. Created
// responses may be sent later and in any order.
//
// Response functions are safe from any thread and keep working after the
// request is released, as long as the response itself is valid. For a
// request another backend submitted (TRITONSERVER_ServerInferAsync),
// creating a response calls the start function of that backend's response
// allocator, on the creating thread.
// ---------------------------------------------------------------------------

// Creates a response for 'request' and stores it in *response. The caller
// owns it until it is sent or deleted. May be called only while the backend
// owns the request.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ResponseNew(
    TRITONBACKEND_Response** response, TRITONBACKEND_Request* request);

// Creates a response through 'factory' and stores it in *response. The
// caller owns it until it is sent or deleted. Works after the request is
// released.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ResponseNewFromFactory(
    TRITONBACKEND_Response** response, TRITONBACKEND_ResponseFactory* factory);

// Discards a response that will not be sent, with its outputs and buffers.
// Do not call it on a response passed to TRITONBACKEND_ResponseSend.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ResponseDelete(
    TRITONBACKEND_Response* response);

// Attaches a string parameter 'name' = 'value' to the response. Both strings
// are copied.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ResponseSetStringParameter(
    TRITONBACKEND_Response* response, const char* name, const char* value);

// Attaches an integer parameter 'name' = 'value' to the response. The name
// is copied.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ResponseSetIntParameter(
    TRITONBACKEND_Response* response, const char* name, const int64_t value);

// Attaches a boolean parameter 'name' = 'value' to the response. The name is
// copied.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ResponseSetBoolParameter(
    TRITONBACKEND_Response* response, const char* name, const bool value);

// Attaches a floating-point parameter 'name' = 'value' to the response. The
// name is copied.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ResponseSetDoubleParameter(
    TRITONBACKEND_Response* response, const char* name, const double value);

// Adds an output tensor called 'name' with 'datatype' and the 'dims_count'
// dimensions at 'shape' to the response and stores it in *output. The name
// and shape are copied. The output belongs to the response; get its data
// buffer with TRITONBACKEND_OutputBuffer.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ResponseOutput(
    TRITONBACKEND_Response* response, TRITONBACKEND_Output** output,
    const char* name, const TRITONSERVER_DataType datatype,
    const int64_t* shape, const uint32_t dims_count);

// Sends the response to the client. Ownership of 'response' passes to the
// host whether or not the call succeeds: never touch or delete it
// afterwards. 'send_flags' holds TRITONSERVER_ResponseCompleteFlag bits; set
// TRITONSERVER_RESPONSE_COMPLETE_FINAL on the last response of a request. If
// 'error' is not NULL the response reports that error instead of outputs;
// this is allowed with or without FINAL. The host only reads 'error': the
// caller still owns it and must delete it.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ResponseSend(
    TRITONBACKEND_Response* response, const uint32_t send_flags,
    TRITONSERVER_Error* error);

// ---------------------------------------------------------------------------
// Sequence state
//
// For models using the sequence batcher with implicit state, a backend reads
// the state of a sequence as an input and writes the next state through
// these functions. Every call fails when the model's configuration declares
// no such state.
// ---------------------------------------------------------------------------

// Creates the next value of state 'name' for the sequence of 'request', with
// 'datatype' and the 'dims_count' dimensions at 'shape', and stores it in
// *state. The state belongs to the request: do not free it. It stays
// valid, TRITONBACKEND_StateUpdate or not, until the request is released.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_StateNew(
    TRITONBACKEND_State** state, TRITONBACKEND_Request* request,
    const char* name, const TRITONSERVER_DataType datatype,
    const int64_t* shape, const uint32_t dims_count);

// Makes 'state' the state the next request of the sequence will see (its
// value now; a later write to the buffer does not reach it). If it is never
// called, the next request sees the same state as this one. The state and
// its buffer stay valid until the request is released.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_StateUpdate(
    TRITONBACKEND_State* state);

// Allocates the data buffer of 'state', 'buffer_byte_size' bytes, and stores
// its address in *buffer for the backend to fill before calling
// TRITONBACKEND_StateUpdate. *memory_type and *memory_type_id give the
// preferred location on entry and the actual one on return. The buffer
// belongs to the state.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_StateBuffer(
    TRITONBACKEND_State* state, void** buffer, const uint64_t buffer_byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id);

// Stores in *buffer_attributes a description of the buffer of 'state'. The
// attributes belong to the state; do not delete them.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_StateBufferAttributes(
    TRITONBACKEND_State* state,
    TRITONSERVER_BufferAttributes** buffer_attributes);

// ---------------------------------------------------------------------------
// Backends
//
// One TRITONBACKEND_Backend exists per loaded backend library, from
// TRITONBACKEND_Initialize until TRITONBACKEND_Finalize returns, and is
// shared by all models that use the library.
// ---------------------------------------------------------------------------

// How the host schedules Execute calls of a backend's instances. BLOCKING
// (the default): an instance is busy until its Execute returns, and the
// host may call Execute for it again right after. DEVICE_BLOCKING: while an
// instance's Execute runs, no other instance on the same device is given
// work; instances on other devices are not held up.
typedef enum TRITONBACKEND_execpolicy_enum {
  TRITONBACKEND_EXECUTION_BLOCKING,
  TRITONBACKEND_EXECUTION_DEVICE_BLOCKING
} TRITONBACKEND_ExecutionPolicy;

// Stores in *name the name of the backend (the <name> in
// libtriton_<name>.so). The string lives as long as the backend.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_BackendName(
    TRITONBACKEND_Backend* backend, const char** name);

// Stores in *backend_config the configuration given to this backend on the
// host's command line, as JSON of the form
// {"cmdline": {"<setting>": "<value>", ...}}. The message belongs to the
// host and lives as long as the backend: do not delete it.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_BackendConfig(
    TRITONBACKEND_Backend* backend, TRITONSERVER_Message** backend_config);

// Stores in *policy the backend's execution policy.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_BackendExecutionPolicy(
    TRITONBACKEND_Backend* backend, TRITONBACKEND_ExecutionPolicy* policy);

// Sets the backend's execution policy. The host reads the policy once, after
// TRITONBACKEND_Initialize returns, so it must be set there. Models using
// the sequence batcher always run with TRITONBACKEND_EXECUTION_BLOCKING.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_BackendSetExecutionPolicy(
    TRITONBACKEND_Backend* backend, TRITONBACKEND_ExecutionPolicy policy);

// Stores in *artifact_type how the backend's files are provided
// (TRITONBACKEND_ARTIFACT_FILESYSTEM) and in *location the absolute path of
// the directory holding the backend library. The string lives as long as
// the backend.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_BackendArtifacts(
    TRITONBACKEND_Backend* backend, TRITONBACKEND_ArtifactType* artifact_type,
    const char** location);

// Stores in *manager the host's memory manager for this backend. It lives as
// long as the backend; do not free it.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_BackendMemoryManager(
    TRITONBACKEND_Backend* backend, TRITONBACKEND_MemoryManager** manager);

// Stores in *state the pointer last given to TRITONBACKEND_BackendSetState,
// or NULL if none. The host never looks at or frees what it points to.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_BackendState(
    TRITONBACKEND_Backend* backend, void** state);

// Attaches an arbitrary pointer to the backend, replacing any previous one.
// The backend owns what it points to and must free it, typically in
// TRITONBACKEND_Finalize.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_BackendSetState(
    TRITONBACKEND_Backend* backend, void* state);

// ---------------------------------------------------------------------------
// Models
//
// One TRITONBACKEND_Model exists per loaded model version, from
// TRITONBACKEND_ModelInitialize until TRITONBACKEND_ModelFinalize returns.
// ---------------------------------------------------------------------------

// Stores in *name the name of the model. The string lives as long as the
// model.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelName(
    TRITONBACKEND_Model* model, const char** name);

// Stores in *version the version of the model being loaded.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelVersion(
    TRITONBACKEND_Model* model, uint64_t* version);

// Stores in *artifact_type how the model's files are provided
// (TRITONBACKEND_ARTIFACT_FILESYSTEM) and in *location the absolute path of
// the model's directory in the model repository (the directory holding
// config.pbtxt and the version subdirectories). The string lives as long as
// the model.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelRepository(
    TRITONBACKEND_Model* model, TRITONBACKEND_ArtifactType* artifact_type,
    const char** location);

// Stores in *model_config a new message holding the model configuration as
// JSON, in the format of 'config_version' (only version 1 exists; any other
// value fails with TRITONSERVER_ERROR_INVALID_ARG). The caller owns the
// message and must delete it with TRITONSERVER_MessageDelete. Usable from
// TRITONBACKEND_ModelInitialize on.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelConfig(
    TRITONBACKEND_Model* model, const uint32_t config_version,
    TRITONSERVER_Message** model_config);

// Stores in *auto_complete_config whether the backend is expected to fill in
// what the model configuration leaves out (inputs, outputs, max batch size)
// and report the result with TRITONBACKEND_ModelSetConfig.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelAutoCompleteConfig(
    TRITONBACKEND_Model* model, bool* auto_complete_config);

// Replaces the model configuration with 'model_config' (JSON in the format
// of 'config_version', which must be 1). Only inputs, outputs, max batch
// size and, if none was set, the scheduling choice are taken from it; other
// changes are ignored. Meant for TRITONBACKEND_ModelInitialize when
// TRITONBACKEND_ModelAutoCompleteConfig says so; fails with
// TRITONSERVER_ERROR_UNSUPPORTED once the model has loaded. Does not take
// ownership of the message: the caller deletes it. Read the configuration again
// with TRITONBACKEND_ModelConfig to see what the host made of it.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelSetConfig(
    TRITONBACKEND_Model* model, const uint32_t config_version,
    TRITONSERVER_Message* model_config);

// Stores in *server the server that serves the model, for the in-process
// server API of tritonserver.h: running inference on other models
// (TRITONSERVER_InferenceRequestNew, TRITONSERVER_ServerInferAsync) and
// querying them (TRITONSERVER_ServerModelIsReady, ...). The handle stays
// valid as long as the server runs.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelServer(
    TRITONBACKEND_Model* model, TRITONSERVER_Server** server);

// Stores in *backend the backend that implements the model.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelBackend(
    TRITONBACKEND_Model* model, TRITONBACKEND_Backend** backend);

// Stores in *state the pointer last given to TRITONBACKEND_ModelSetState, or
// NULL if none.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelState(
    TRITONBACKEND_Model* model, void** state);

// Attaches an arbitrary pointer to the model, replacing any previous one.
// The backend owns what it points to and must free it, typically in
// TRITONBACKEND_ModelFinalize.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelSetState(
    TRITONBACKEND_Model* model, void* state);

// Reports the memory the model holds outside its instances, to be freed in
// TRITONBACKEND_ModelFinalize: 'usage_size' buffer attributes at 'usage',
// one per memory type and id, each giving the total bytes held there. Each
// call replaces the previous report. The array and attributes stay owned by
// the caller and may be freed when the call returns.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelReportMemoryUsage(
    TRITONBACKEND_Model* model, TRITONSERVER_BufferAttributes** usage,
    uint32_t usage_size);

// ---------------------------------------------------------------------------
// Model instances
//
// One TRITONBACKEND_ModelInstance exists per instance of a model, from
// TRITONBACKEND_ModelInstanceInitialize until
// TRITONBACKEND_ModelInstanceFinalize returns. The host never runs two
// Execute calls on the same instance at once.
// ---------------------------------------------------------------------------

// Stores in *name the name of the instance ("<group name>_<index>"). The
// string lives as long as the instance.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelInstanceName(
    TRITONBACKEND_ModelInstance* instance, const char** name);

// Stores in *kind where the instance runs (CPU, GPU or MODEL).
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelInstanceKind(
    TRITONBACKEND_ModelInstance* instance,
    TRITONSERVER_InstanceGroupKind* kind);

// Stores in *device_id the device of the instance: the GPU ordinal for GPU
// instances, 0 otherwise.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelInstanceDeviceId(
    TRITONBACKEND_ModelInstance* instance, int32_t* device_id);

// Stores in *host_policy the host policy of the instance as JSON with exactly
// one member, the policy name: {"<policy>": {"<setting>": "<value>", ...}}.
// Without a configured policy the name is "cpu" for CPU instances and
// "gpu_<device>" for GPU instances. The message belongs to the host and
// lives as long as the instance: do not delete it.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceHostPolicy(
    TRITONBACKEND_ModelInstance* instance, TRITONSERVER_Message** host_policy);

// Stores in *is_passive whether the instance is passive: loaded but never
// given requests by the host's schedulers.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelInstanceIsPassive(
    TRITONBACKEND_ModelInstance* instance, bool* is_passive);

// Stores in *count the number of optimization profiles configured for the
// instance.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceProfileCount(
    TRITONBACKEND_ModelInstance* instance, uint32_t* count);

// Stores in *profile_name the name of optimization profile 'index'
// (0 <= index < count). The string lives as long as the instance.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceProfileName(
    TRITONBACKEND_ModelInstance* instance, const uint32_t index,
    const char** profile_name);

// Stores in *count the number of secondary devices configured for the
// instance.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceSecondaryDeviceCount(
    TRITONBACKEND_ModelInstance* instance, uint32_t* count);

// Reads secondary device 'index' (0 <= index < count): its kind as a string
// in *kind and its id in *id. The string lives as long as the instance.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceSecondaryDeviceProperties(
    TRITONBACKEND_ModelInstance* instance, uint32_t index, const char** kind,
    int64_t* id);

// Stores in *model the model the instance belongs to.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelInstanceModel(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Model** model);

// Stores in *state the pointer last given to
// TRITONBACKEND_ModelInstanceSetState, or NULL if none.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelInstanceState(
    TRITONBACKEND_ModelInstance* instance, void** state);

// Attaches an arbitrary pointer to the instance, replacing any previous one.
// The backend owns what it points to and must free it, typically in
// TRITONBACKEND_ModelInstanceFinalize.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error* TRITONBACKEND_ModelInstanceSetState(
    TRITONBACKEND_ModelInstance* instance, void* state);

// Like TRITONBACKEND_ModelReportMemoryUsage, for memory held by this
// instance and freed in TRITONBACKEND_ModelInstanceFinalize.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceReportMemoryUsage(
    TRITONBACKEND_ModelInstance* instance,
    TRITONSERVER_BufferAttributes** usage, uint32_t usage_size);

// ---------------------------------------------------------------------------
// Statistics
//
// Backends report timings so the host can publish per-model statistics.
// Timestamps are nanoseconds of the monotonic clock (CLOCK_MONOTONIC, as
// from std::chrono::steady_clock), taken at these points of an execution:
// exec_start when Execute starts working on the batch, compute_start after
// the inputs are prepared, compute_end after the computation, exec_end after
// the outputs are produced.
// ---------------------------------------------------------------------------

// Records the execution of one request. With 'success' true all four
// timestamps must be set; with 'success' false they are ignored. The request
// must not have been released yet.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceReportStatistics(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request* request,
    const bool success, const uint64_t exec_start_ns,
    const uint64_t compute_start_ns, const uint64_t compute_end_ns,
    const uint64_t exec_end_ns);

// Creates an empty record for the statistics of one response and stores it
// in *response_statistics. The caller owns it and must delete it with
// TRITONBACKEND_ModelInstanceResponseStatisticsDelete. Fill it with the
// setters below, then report it with
// TRITONBACKEND_ModelInstanceReportResponseStatistics. Like all the
// response-statistics functions, safe from any thread, also after the
// request is released.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsNew(
    TRITONBACKEND_ModelInstanceResponseStatistics** response_statistics);

// Deletes a response-statistics record.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsDelete(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics);

// Sets the instance that produced the response.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics,
    TRITONBACKEND_ModelInstance* model_instance);

// Sets the response factory of the request the response answers. The record
// only refers to the factory, which must outlive the report.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics,
    TRITONBACKEND_ResponseFactory* response_factory);

// Sets when work on the response started.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics,
    uint64_t response_start);

// Sets when the outputs of the response started to be produced; 0 marks an
// empty response (one that produced no output or was never sent).
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics,
    uint64_t compute_output_start);

// Sets when the response was complete.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics,
    uint64_t response_end);

// Sets the error the response carried, or NULL for a successful response.
// The record only looks at the error: the caller keeps ownership, and the
// error must stay alive until the record is reported.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetError(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics,
    TRITONSERVER_Error* error);

// Records the statistics of one response, normally right after
// TRITONBACKEND_ResponseSend. The record is not consumed: the caller still
// deletes it.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceReportResponseStatistics(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics);

// Records the execution of a whole batch: 'batch_size' is the sum of the
// batch sizes of the requests given to one Execute call (requests of batch
// size 1, 2 and 3 make 6). All timestamps must be set.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceReportBatchStatistics(
    TRITONBACKEND_ModelInstance* instance, const uint64_t batch_size,
    const uint64_t exec_start_ns, const uint64_t compute_start_ns,
    const uint64_t compute_end_ns, const uint64_t exec_end_ns);

// ---------------------------------------------------------------------------
// Entry points implemented by backends
//
// The host looks these up with dlsym. All are optional except
// TRITONBACKEND_ModelInstanceExecute. An error returned from an entry point
// is passed to the host, which reads it and deletes it. The host calls
// Initialize/Finalize functions of one object one at a time, never
// concurrently with Execute on the same instance.
// ---------------------------------------------------------------------------

// Called once after the library is loaded, before any model that uses it.
// The place to check the API version, read TRITONBACKEND_BackendConfig, set
// the execution policy and create state shared by all models. An error stops
// the backend from loading.
TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_Initialize(
    TRITONBACKEND_Backend* backend);

// Called once before the library is closed, after every model using it has
// been finalized. Must free the backend state and stop and join any thread
// the backend started.
TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_Finalize(
    TRITONBACKEND_Backend* backend);

// Called once when a model using the backend is loaded, before its
// instances are created. Should check that the model configuration suits the
// backend; an error stops the model from loading.
TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelInitialize(
    TRITONBACKEND_Model* model);

// Called once when a model is unloaded, after all its instances have been
// finalized. Must free the model state and join the model's threads.
TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelFinalize(
    TRITONBACKEND_Model* model);

// Called once for each instance of a model when it is created. Calls for
// different instances happen one at a time unless the backend enabled
// parallel loading with
// TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading.
TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelInstanceInitialize(
    TRITONBACKEND_ModelInstance* instance);

// Called once for each instance before its model is unloaded. Must free the
// instance state and join the instance's threads. Responses that the
// backend's own threads are still sending through response factories keep
// working while this runs.
TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelInstanceFinalize(
    TRITONBACKEND_ModelInstance* instance);

// Runs a batch of 'request_count' requests on 'instance'. Required. Never
// called twice at once for the same instance; may run concurrently for
// different instances. The 'requests' array belongs to the host and is valid
// only during the call: copy the pointers to keep them.
//
// On success the backend owns every request: it must answer each one and
// release it with TRITONBACKEND_RequestRelease, now or later. On failure the
// host keeps ownership, and the backend must not touch the requests again;
// the host then sends every request a final error response and releases it.
// The returned error therefore says who owns the requests, not whether
// inference succeeded: per-request failures go into error responses.
TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count);

// Called when the host checks whether a model is ready. Returns NULL if the
// instance can serve requests or an error describing why not.
TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelInstanceReady(
    TRITONBACKEND_ModelInstance* instance);

// Called, possibly several times between Initialize and Finalize, to let the
// backend state its preferences through 'backend_attributes' (see the
// functions below). If it returns an error, the attributes set in that call
// are ignored.
TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_GetBackendAttribute(
    TRITONBACKEND_Backend* backend,
    TRITONBACKEND_BackendAttribute* backend_attributes);

// ---------------------------------------------------------------------------
// Backend attributes
//
// Valid only inside the TRITONBACKEND_GetBackendAttribute call that
// received them.
// ---------------------------------------------------------------------------

// Adds an instance group the backend prefers when a model's configuration
// names none: 'count' instances (0 for the host's default) of 'kind' on each
// of the 'id_count' devices at 'device_ids' (NULL for the host's default).
// Call it several times to list groups in order of preference, most
// preferred first. The array is copied.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
    TRITONBACKEND_BackendAttribute* backend_attributes,
    const TRITONSERVER_InstanceGroupKind kind, const uint64_t count,
    const uint64_t* device_ids, const uint64_t id_count);

// Declares whether TRITONBACKEND_ModelInstanceInitialize and
// TRITONBACKEND_ModelInstanceFinalize may run concurrently for different
// instances. The default is false: one at a time.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading(
    TRITONBACKEND_BackendAttribute* backend_attributes, bool enabled);

// ---------------------------------------------------------------------------
// Custom batching entry points
//
// A backend (or a separate batching library) may add its own conditions to
// dynamic batching by implementing all five functions below, or none.
// TRITONBACKEND_Batcher is defined by that code; the host only passes the
// pointer along.
// ---------------------------------------------------------------------------

// Called when a model is loaded: creates the read-only batching data for
// 'model' and stores it in *batcher.
TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelBatcherInitialize(
    TRITONBACKEND_Batcher** batcher, TRITONBACKEND_Model* model);

// Called when the model is unloaded: frees what
// TRITONBACKEND_ModelBatcherInitialize created.
TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelBatcherFinalize(
    TRITONBACKEND_Batcher* batcher);

// Decides whether 'request' joins the batch being formed, storing the answer
// in *should_include and updating the per-batch data 'userp'.
TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelBatchIncludeRequest(
    TRITONBACKEND_Request* request, void* userp, bool* should_include);

// Called when the host starts forming a batch: creates the per-batch data
// and stores it in *userp.
TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelBatchInitialize(
    const TRITONBACKEND_Batcher* batcher, void** userp);

// Called when the batch is complete: frees the per-batch data.
TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelBatchFinalize(
    void* userp);

// ---------------------------------------------------------------------------
// Response inspection
//
// Read back the outputs already added to a response. Triton's own header
// tags TRITONBACKEND_InferenceResponseOutputByName as an entry point
// (TRITONBACKEND_ISPEC) although Triton's server implements it; here both
// functions are declared as what they are, host functions.
// ---------------------------------------------------------------------------

// Finds the output called 'name' in 'response' and reports its data type,
// its shape and the number of dimensions. Fails with
// TRITONSERVER_ERROR_NOT_FOUND if there is no such output. The shape belongs
// to the response and lives until it is sent or deleted.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_InferenceResponseOutputByName(
    TRITONBACKEND_Response* response, const char* name,
    TRITONSERVER_DataType* datatype, const int64_t** shape,
    uint64_t* dim_count);

// Reports output number 'index' of 'response' (in the order the outputs were
// added): its name, data type, shape and number of dimensions. Fails with
// TRITONSERVER_ERROR_INVALID_ARG for an index out of range. The name and
// shape belong to the response and live until it is sent or deleted.
TRITONBACKEND_DECLSPEC TRITONSERVER_Error*
TRITONBACKEND_InferenceResponseOutput(
    TRITONBACKEND_Response* response, const uint32_t index, const char** name,
    TRITONSERVER_DataType* datatype, const int64_t** shape,
    uint64_t* dim_count);

#ifdef __cplusplus
}
#endif
