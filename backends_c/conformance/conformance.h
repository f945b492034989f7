/*
 * conformance.h: what the conformance backend's C files share. Internal;
 * the library exports only its TRITONBACKEND_* entry points.
 *
 * The backend is a probe, not a model: it calls every host function the
 * headers declare for backends (except the metrics, sequence-state and
 * trace families), with good arguments and with bad ones, and reports
 * what it saw so a Go test can compare it with a table.
 *
 * What it reports, per check, is one line
 *
 *     <function> <case> <result>
 *
 * where <function> is the C name of the host function, <case> a token
 * without spaces naming the arguments (good, null_name, out_of_range, ...)
 * and <result> is OK when the function returned NULL (success), or the
 * name of the TRITONSERVER_Error_Code without its TRITONSERVER_ERROR_
 * prefix (INVALID_ARG, NOT_FOUND, ...). Functions that return a pointer
 * instead of an error report OK for non-NULL and NULL for NULL; void and
 * value-returning functions report OK once they returned. What a call
 * handed back (names, ids, JSON fields, byte sizes) goes into separate
 * lines "<key>=<value>", and the message of every error into a value
 * "error.<function>.<case>=<message>", so a test can explain a mismatch.
 *
 * The lines travel as two BYTES output tensors, CHECKS and VALUES, one
 * element per line. Checks that need a particular entry point run there
 * and are kept in the backend, model or instance state until a request
 * carries them out; checks that can only happen after a request's final
 * response are kept in the instance and returned by a later request.
 */
#ifndef TRITONHOST_BACKENDS_CONFORMANCE_CONFORMANCE_H
#define TRITONHOST_BACKENDS_CONFORMANCE_CONFORMANCE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

#if defined(__GNUC__)
#define CONF_PRINTF(FMT, ARGS) __attribute__((format(printf, FMT, ARGS)))
#else
#define CONF_PRINTF(FMT, ARGS)
#endif

/* ---- report.c: lines of checks and values ------------------------------ */

/* A growable list of malloc'd strings; safe for concurrent appends. */
typedef struct conf_lines {
  pthread_mutex_t mu;
  char** items;
  size_t count;
  size_t cap;
} conf_lines;

typedef struct conf_report {
  conf_lines checks; /* "<function> <case> <result>" */
  conf_lines values; /* "<key>=<value>" */
} conf_report;

void conf_report_init(conf_report* report);
void conf_report_destroy(conf_report* report);
/* Appends copies of src's lines to dst. */
void conf_report_copy(conf_report* dst, conf_report* src);
/* Moves src's lines to the end of dst, leaving src empty. */
void conf_report_move(conf_report* dst, conf_report* src);

/* Records the check "<fn> <kase> <result>" for err and deletes err.
 * Returns true when err is NULL (the call succeeded). */
bool conf_check(
    conf_report* report, const char* fn, const char* kase,
    TRITONSERVER_Error* err);
/* Records a check whose result the caller worked out. */
void conf_result(
    conf_report* report, const char* fn, const char* kase, const char* result);
/* Records "<key>=<value>", the value formatted printf-style. */
void conf_value(conf_report* report, const char* key, const char* fmt, ...)
    CONF_PRINTF(3, 4);
/* Writes the case name "index_<i>" into buf and returns buf. */
const char* conf_index_case(char* buf, size_t size, uint32_t i);
/* "OK" for a non-NULL pointer, "NULL" otherwise. */
const char* conf_ptr_result(const void* p);
/* The enum name of an error code without its prefix, e.g. "INVALID_ARG". */
const char* conf_code_name(TRITONSERVER_Error_Code code);

/* Calls the host function FN and records the check. Evaluates to true when
 * the call succeeded. */
#define CONF_CHECK(REPORT, FN, KASE, ...) \
  conf_check((REPORT), #FN, (KASE), FN(__VA_ARGS__))

/* Nanoseconds of the monotonic clock, as Triton's statistics use. */
uint64_t conf_now_ns(void);

/* Adds CHECKS and VALUES outputs holding report's lines to response. */
TRITONSERVER_Error* conf_add_report_outputs(
    TRITONBACKEND_Response* response, conf_report* report);

/* ---- state of the entry points ----------------------------------------- */

typedef struct conf_backend {
  conf_report report; /* Initialize and GetBackendAttribute */
} conf_backend;

typedef struct conf_model {
  conf_report report; /* ModelInitialize */
  conf_backend* backend;
} conf_model;

#define CONF_MAX_THREADS 8
#define CONF_MAX_RESCHEDULED 8

/* A request rescheduled with TRITONSERVER_REQUEST_RELEASE_RESCHEDULE,
 * recognized by its id when it comes back. */
typedef struct conf_rescheduled {
  char id[64];
  int executions;
  conf_report report;
} conf_rescheduled;

typedef struct conf_instance {
  conf_report report; /* ModelInstanceInitialize */
  conf_model* model;
  TRITONBACKEND_ModelInstance* instance;
  /* Lines recorded after a request's final response; a "collect" request
   * carries them out. conf_report is thread-safe on its own. */
  conf_report deferred;
  pthread_mutex_t mu; /* guards threads and rescheduled */
  pthread_t threads[CONF_MAX_THREADS];
  size_t thread_count;
  conf_rescheduled* rescheduled[CONF_MAX_RESCHEDULED];
  size_t rescheduled_count;
} conf_instance;

/* ---- the checks, by entry point ---------------------------------------- */

/* checks_server.c, checks_objects.c: the TRITONSERVER_* helpers (any
 * entry point). */
void conf_check_server_api(conf_report* report);
void conf_check_server_objects(conf_report* report);

/* checks_backend.c: TRITONBACKEND_Initialize and GetBackendAttribute. */
void conf_check_backend(
    conf_report* report, TRITONBACKEND_Backend* backend, void* state);
void conf_check_backend_attributes(
    conf_report* report, TRITONBACKEND_BackendAttribute* attributes);

/* checks_model.c: TRITONBACKEND_ModelInitialize, and what is left of
 * TRITONBACKEND_ModelSetConfig once the model is loaded (from Execute). */
void conf_check_model(
    conf_report* report, TRITONBACKEND_Model* model, void* state);
void conf_check_model_after_load(
    conf_report* report, TRITONBACKEND_ModelInstance* instance);
/* checks_instance.c: TRITONBACKEND_ModelInstanceInitialize. */
void conf_check_instance(
    conf_report* report, TRITONBACKEND_ModelInstance* instance, void* state);
/* checks_config.c: records the fields of a model configuration JSON as
 * values "<prefix>.<field>=..."; false if it does not parse. */
bool conf_config_values(
    conf_report* report, const char* prefix, TRITONSERVER_Message* config);

/* checks_request.c: a request and its inputs, inside Execute. */
void conf_check_request(conf_report* report, TRITONBACKEND_Request* request);
/* checks_input.c: input DATA of the request. */
void conf_check_input(conf_report* report, TRITONBACKEND_Request* request);
void conf_check_correlation_id(
    conf_report* report, TRITONBACKEND_Request* request, bool is_string);

/* checks_response.c: responses, outputs and factories. */
void conf_check_responses(conf_report* report, TRITONBACKEND_Request* request);
void conf_check_factory(conf_report* report, TRITONBACKEND_Request* request);
/* Sets the parameters p_string, p_int, p_bool and p_double. */
void conf_set_parameters(
    conf_report* report, TRITONBACKEND_Response* response, const char* kase);

/* checks_statistics.c: execution, batch and response statistics. */
void conf_check_execution_statistics(
    conf_report* report, TRITONBACKEND_ModelInstance* instance,
    TRITONBACKEND_Request* request, uint64_t exec_start_ns);
void conf_check_response_statistics(
    conf_report* report, TRITONBACKEND_ModelInstance* instance,
    TRITONBACKEND_Request* request);

/* ---- the in-process server API ------------------------------------------ */

/* The model the "inprocess" request calls: the conformance backend again,
 * answering kind "peer". */
#define CONF_PEER "conformance_peer"

/* checks_inprocess.c, checks_inprocess_tensors.c: model queries,
 * allocators, and a request built and never submitted. */
void conf_check_inprocess_api(conf_report* report, TRITONSERVER_Server* server);
/* checks_model_control.c: transaction properties, loading and unloading. */
void conf_check_model_control(conf_report* r, TRITONSERVER_Server* server);
void conf_check_inprocess_tensors(
    conf_report* report, TRITONSERVER_InferenceRequest* request);

/* What the callbacks of one submission saw; guarded by mu. */
typedef struct conf_call {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  conf_report* report; /* thread-safe on its own */
  pthread_t caller;    /* the thread that submitted */
  int starts, allocs, releases, queries, attributes, responses, finals;
  bool null_final, released, foreign_thread, alloc_on_caller;
  uint32_t release_flags;
  int preferred_gpu; /* allocations whose preferred memory was GPU */
  int32_t out[2];    /* AUTO_OUT of the first two responses */
  char query_name[32];
} conf_call;

/* inprocess_callbacks.c: the allocator's functions and the request's
 * callbacks; their userp is a conf_call (NULL for requests never
 * submitted). */
TRITONSERVER_Error* conf_alloc_fn(
    TRITONSERVER_ResponseAllocator* allocator, const char* tensor_name,
    size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id, void* userp, void** buffer, void** buffer_userp,
    TRITONSERVER_MemoryType* actual_memory_type,
    int64_t* actual_memory_type_id);
TRITONSERVER_Error* conf_release_fn(
    TRITONSERVER_ResponseAllocator* allocator, void* buffer, void* buffer_userp,
    size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id);
TRITONSERVER_Error* conf_start_fn(
    TRITONSERVER_ResponseAllocator* allocator, void* userp);
TRITONSERVER_Error* conf_query_fn(
    TRITONSERVER_ResponseAllocator* allocator, void* userp,
    const char* tensor_name, size_t* byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id);
TRITONSERVER_Error* conf_attributes_fn(
    TRITONSERVER_ResponseAllocator* allocator, const char* tensor_name,
    TRITONSERVER_BufferAttributes* buffer_attributes, void* userp,
    void* buffer_userp);
/* kind_peer.c: the peer answers only once the caller opened the gate (up
 * to 10 s), so the caller's checks of a request in flight cannot race with
 * its return. One gate for the backend: one "inprocess" request at a time. */
void conf_peer_gate_close(void);
void conf_peer_gate_open(void);
/* What the peer's send after its final flag returned ("NOT_FOUND"). */
const char* conf_peer_after_final(void);
void conf_request_released(
    TRITONSERVER_InferenceRequest* request, const uint32_t flags, void* userp);
void conf_response_complete(
    TRITONSERVER_InferenceResponse* response, const uint32_t flags,
    void* userp);

/* ---- the request kinds (kinds.c and kind_*.c) -------------------------- */

#define CONF_RELEASE_ALL TRITONSERVER_REQUEST_RELEASE_ALL
#define CONF_FINAL TRITONSERVER_RESPONSE_COMPLETE_FINAL

/* Answers one request according to its input KIND. */
void conf_execute(conf_instance* instance, TRITONBACKEND_Request* request);
void conf_execute_main(conf_instance* instance, TRITONBACKEND_Request* request);
void conf_execute_thread(
    conf_instance* instance, TRITONBACKEND_Request* request);
void conf_execute_reschedule(
    conf_instance* instance, TRITONBACKEND_Request* request);
void conf_execute_cancel(
    conf_instance* instance, TRITONBACKEND_Request* request);
void conf_execute_inprocess(
    conf_instance* instance, TRITONBACKEND_Request* request);
void conf_execute_peer(conf_instance* instance, TRITONBACKEND_Request* request);
void conf_execute_collect(
    conf_instance* instance, TRITONBACKEND_Request* request);
/* Waits for the instance's threads. */
void conf_join_threads(conf_instance* instance);

/* Adds an INT32 output of shape [1] holding value. */
TRITONSERVER_Error* conf_add_int32_output(
    TRITONBACKEND_Response* response, const char* name, int32_t value);
/* Sends report as the final response 'response' (NULL: nothing to send)
 * and records the send as check "TRITONBACKEND_ResponseSend <kase>" in
 * 'into'. */
void conf_send_report(
    conf_report* into, const char* kase, TRITONBACKEND_Response* response,
    conf_report* report);
/* Answers an unusable request with an INVALID_ARG error and releases it. */
void conf_refuse(TRITONBACKEND_Request* request, const char* why);

#endif /* TRITONHOST_BACKENDS_CONFORMANCE_CONFORMANCE_H */
