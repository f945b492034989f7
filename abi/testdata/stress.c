// A decoupled backend for the threading stress test (stress_test.go). Every
// instance runs STRESS_WORKERS threads. Execute copies what it needs out of
// each request, creates a response factory, hands the work to the workers
// through a queue, releases the request and returns; the workers send the
// responses and call the logging, error, statistics and cancellation
// functions in between, concurrently with later Executes, the other
// instances, and the host unloading and reloading the model.
// ModelInstanceFinalize lets the workers answer everything queued, then
// joins them.
//
// Input IN (INT32 [3]): sequence number, response count N, mode bits. One
// worker answers a request: responses carrying SEQ (the sequence number),
// IDX (0..N-1, in order) and an INT parameter "seq", then the FINAL (a
// flags-only one unless MODE_FINAL_WITH_LAST), so the test can check for
// lost, duplicated or reordered responses. Every third response the worker
// also builds a response and deletes it unsent. When it sees the request
// cancelled (TRITONBACKEND_ResponseFactoryIsCancelled) it stops and sends
// one CANCELLED error response before the FINAL.
//   MODE_SLOW:               sleep a little before each response, so unloads
//                            find requests half answered.
//   MODE_UNTIL_CANCELLED:    ignore N and send until the request is
//                            cancelled (the test cancels it), so the backend
//                            must see the cancellation.
//   MODE_FINAL_WITH_LAST:    send the last response (or the CANCELLED error)
//                            with the FINAL flag.
//   MODE_STATS_BURST:        report a burst of empty response statistics
//                            before the FINAL, more than the host buffers
//                            per request.
//   MODE_FIRST_FROM_REQUEST: Execute creates the first response from the
//                            request (TRITONBACKEND_ResponseNew); the worker
//                            fills and sends it after the release.
//   MODE_RESCHEDULE:         the first execution creates a response factory,
//                            has a worker delete it and releases the request
//                            with RELEASE_RESCHEDULE; the second answers it.
//
// Anything the backend finds wrong (a host call failing, a request released
// or executed twice) is logged as "stress: BUG ..." and counted; at
// ModelFinalize the model logs a summary line that the test adds up.
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "triton/core/tritonbackend.h"

enum {
  STRESS_WORKERS = 8,
  STRESS_MAX_SEQ = 1 << 22,  // sequence numbers the release table covers
  MODE_SLOW = 1,
  MODE_UNTIL_CANCELLED = 2,
  MODE_FINAL_WITH_LAST = 4,
  MODE_STATS_BURST = 8,
  MODE_FIRST_FROM_REQUEST = 16,
  MODE_RESCHEDULE = 32,
  STATS_BURST = 40,
};

// How long an UNTIL_CANCELLED request waits for its cancellation before it
// gives up (and reports a bug).
static const uint64_t cancel_wait_ns = 10ull * 1000 * 1000 * 1000;

// Releases per sequence number, for the whole library, counted before each
// TRITONBACKEND_RequestRelease: a second one (a request executed twice) is a
// host bug. Sequence numbers are
// unique within a test, and a request only ever reaches one library mapping.
static atomic_uchar release_count[STRESS_MAX_SEQ];

// Whether a MODE_RESCHEDULE request was rescheduled already.
static atomic_uchar rescheduled[STRESS_MAX_SEQ];

struct model_state {
  atomic_uint_fast64_t executed;  // requests Execute took over
  atomic_uint_fast64_t
      rescheduled;                 // requests released with RELEASE_RESCHEDULE
  atomic_uint_fast64_t released;   // RELEASE_ALL calls that succeeded
  atomic_uint_fast64_t responses;  // data responses sent
  atomic_uint_fast64_t cancels;    // requests that saw the cancellation
  atomic_uint_fast64_t finals;     // FINAL flags sent
  atomic_uint_fast64_t
      drained;  // requests not yet complete when an instance began to finalize
  atomic_uint_fast64_t bugs;
};

struct job {
  struct job* next;
  int32_t seq, n, mode;
  TRITONBACKEND_ResponseFactory* factory;
  TRITONBACKEND_Response* first;  // created from the request, not sent yet
  bool drop_only;                 // only delete factory (after drop_delay_us)
  int drop_delay_us;
};

struct instance_state {
  TRITONBACKEND_ModelInstance* instance;
  struct model_state* model;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct job *head, *tail;
  atomic_uint_fast64_t pending;  // jobs queued or being answered
  bool stopping;
  pthread_t workers[STRESS_WORKERS];
  int started;
};

static uint64_t
now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
sleep_us(long us)
{
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

static void logf_(TRITONSERVER_LogLevel level, int line, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
logf_(TRITONSERVER_LogLevel level, int line, const char* fmt, ...)
{
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  TRITONSERVER_Error* err = TRITONSERVER_LogMessage(level, __FILE__, line, msg);
  if (err != NULL) {
    fprintf(
        stderr, "stress: BUG TRITONSERVER_LogMessage failed: %s\n",
        TRITONSERVER_ErrorMessage(err));
    TRITONSERVER_ErrorDelete(err);
  }
}

// bug reports something the backend found wrong; the test fails on it.
#define bug(ms, ...)                                                     \
  do {                                                                   \
    atomic_fetch_add(&(ms)->bugs, 1);                                    \
    logf_(TRITONSERVER_LOG_ERROR, __LINE__, "stress: BUG " __VA_ARGS__); \
  } while (0)

// check consumes err: a failed host call is a bug. Returns whether it failed.
static bool
check(
    struct model_state* ms, int line, const char* what, TRITONSERVER_Error* err)
{
  if (err == NULL)
    return false;
  atomic_fetch_add(&ms->bugs, 1);
  logf_(
      TRITONSERVER_LOG_ERROR, line, "stress: BUG %s failed: %s (%s)", what,
      TRITONSERVER_ErrorMessage(err), TRITONSERVER_ErrorCodeString(err));
  TRITONSERVER_ErrorDelete(err);
  return true;
}
#define CHECK(ms, call) check((ms), __LINE__, #call, (call))

// ---- Responses --------------------------------------------------------------

static void
report_response(
    struct instance_state* is, TRITONBACKEND_ResponseFactory* f, uint64_t start,
    uint64_t output_start, TRITONSERVER_Error* error)
{
  struct model_state* ms = is->model;
  TRITONBACKEND_ModelInstanceResponseStatistics* rs = NULL;
  if (CHECK(ms, TRITONBACKEND_ModelInstanceResponseStatisticsNew(&rs)))
    return;
  CHECK(
      ms, TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance(
              rs, is->instance));
  CHECK(
      ms,
      TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory(rs, f));
  CHECK(
      ms,
      TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart(rs, start));
  CHECK(
      ms, TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart(
              rs, output_start));
  CHECK(
      ms, TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd(
              rs, now_ns()));
  CHECK(ms, TRITONBACKEND_ModelInstanceResponseStatisticsSetError(rs, error));
  CHECK(ms, TRITONBACKEND_ModelInstanceReportResponseStatistics(rs));
  CHECK(ms, TRITONBACKEND_ModelInstanceResponseStatisticsDelete(rs));
}

static bool
add_output(
    struct model_state* ms, TRITONBACKEND_Response* resp, const char* name,
    int32_t value)
{
  TRITONBACKEND_Output* out;
  const int64_t shape[1] = {1};
  if (CHECK(
          ms, TRITONBACKEND_ResponseOutput(
                  resp, &out, name, TRITONSERVER_TYPE_INT32, shape, 1)))
    return false;
  void* buf;
  TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
  int64_t mt_id = 0;
  if (CHECK(
          ms,
          TRITONBACKEND_OutputBuffer(out, &buf, sizeof(value), &mt, &mt_id)))
    return false;
  memcpy(buf, &value, sizeof(value));
  return true;
}

// An error round trip, as backends do on their error paths.
static void
probe_error(struct model_state* ms, int32_t seq, int32_t idx)
{
  char msg[64];
  snprintf(msg, sizeof(msg), "probe %d/%d", seq, idx);
  TRITONSERVER_Error* e =
      TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNAVAILABLE, msg);
  if (e == NULL ||
      TRITONSERVER_ErrorCode(e) != TRITONSERVER_ERROR_UNAVAILABLE ||
      strcmp(TRITONSERVER_ErrorMessage(e), msg) != 0) {
    bug(ms, "TRITONSERVER_ErrorNew round trip of %s", msg);
  }
  TRITONSERVER_ErrorDelete(e);
}

static bool
is_cancelled(struct model_state* ms, TRITONBACKEND_ResponseFactory* f)
{
  bool c = false;
  CHECK(ms, TRITONBACKEND_ResponseFactoryIsCancelled(f, &c));
  return c;
}

// send_response sends response idx of job j, with flags. It reports whether
// the response went out.
static bool
send_response(
    struct instance_state* is, struct job* j, int32_t idx, uint32_t flags)
{
  struct model_state* ms = is->model;
  uint64_t start = now_ns();
  TRITONBACKEND_Response* resp = j->first;
  j->first = NULL;
  if (resp == NULL &&
      CHECK(ms, TRITONBACKEND_ResponseNewFromFactory(&resp, j->factory)))
    return false;
  uint64_t output_start = now_ns();
  if (!add_output(ms, resp, "SEQ", j->seq) ||
      !add_output(ms, resp, "IDX", idx) ||
      CHECK(ms, TRITONBACKEND_ResponseSetIntParameter(resp, "seq", j->seq))) {
    CHECK(ms, TRITONBACKEND_ResponseDelete(resp));
    return false;
  }
  if (CHECK(ms, TRITONBACKEND_ResponseSend(resp, flags, NULL)))
    return false;
  atomic_fetch_add(&ms->responses, 1);
  report_response(is, j->factory, start, output_start, NULL);
  return true;
}

// discard_response builds a response and deletes it unsent.
static void
discard_response(struct model_state* ms, TRITONBACKEND_ResponseFactory* f)
{
  TRITONBACKEND_Response* resp;
  if (CHECK(ms, TRITONBACKEND_ResponseNewFromFactory(&resp, f)))
    return;
  add_output(ms, resp, "IDX", -1);
  CHECK(ms, TRITONBACKEND_ResponseDelete(resp));
}

// answer sends every response of one request, then its FINAL, and deletes
// its factory.
static void
answer(struct instance_state* is, struct job* j)
{
  struct model_state* ms = is->model;
  TRITONBACKEND_ResponseFactory* f = j->factory;
  bool until_cancelled = (j->mode & MODE_UNTIL_CANCELLED) != 0;
  bool final_with_last = (j->mode & MODE_FINAL_WITH_LAST) != 0;
  uint64_t began = now_ns();
  bool cancelled = false, final_sent = false;
  for (int32_t idx = 0; until_cancelled || idx < j->n; idx++) {
    if (j->mode & (MODE_SLOW | MODE_UNTIL_CANCELLED))
      sleep_us(200 + (j->seq + idx) % 300);
    if (is_cancelled(ms, f)) {
      cancelled = true;
      break;
    }
    if (until_cancelled && now_ns() - began > cancel_wait_ns) {
      bug(ms, "request %d was never cancelled", j->seq);
      break;
    }
    if (idx % 3 == 0) {
      probe_error(ms, j->seq, idx);
      if (j->first == NULL)
        discard_response(ms, f);
    }
    logf_(
        TRITONSERVER_LOG_VERBOSE, __LINE__, "stress: seq=%d response %d of %d",
        j->seq, idx, j->n);
    bool last = final_with_last && !until_cancelled && idx == j->n - 1;
    if (!send_response(
            is, j, idx, last ? TRITONSERVER_RESPONSE_COMPLETE_FINAL : 0))
      break;
    final_sent = last;
  }
  if (j->first != NULL)
    CHECK(ms, TRITONBACKEND_ResponseDelete(j->first));
  if (cancelled) {
    atomic_fetch_add(&ms->cancels, 1);
    uint64_t start = now_ns();
    TRITONSERVER_Error* cerr = TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_CANCELLED, "stress: request cancelled");
    TRITONBACKEND_Response* resp;
    if (!CHECK(ms, TRITONBACKEND_ResponseNewFromFactory(&resp, f))) {
      uint32_t flags =
          final_with_last ? TRITONSERVER_RESPONSE_COMPLETE_FINAL : 0;
      final_sent = !CHECK(ms, TRITONBACKEND_ResponseSend(resp, flags, cerr)) &&
                   final_with_last;
    }
    report_response(is, f, start, 0, cerr);
    TRITONSERVER_ErrorDelete(cerr);
  }
  if (j->mode & MODE_STATS_BURST) {
    for (int i = 0; i < STATS_BURST; i++)
      report_response(is, f, now_ns(), 0, NULL);
  }
  if (!final_sent) {
    final_sent = !CHECK(
        ms, TRITONBACKEND_ResponseFactorySendFlags(
                f, TRITONSERVER_RESPONSE_COMPLETE_FINAL));
  }
  if (final_sent)
    atomic_fetch_add(&ms->finals, 1);
  logf_(
      TRITONSERVER_LOG_INFO, __LINE__, "stress: seq=%d done%s", j->seq,
      cancelled ? " (cancelled)" : "");
  CHECK(ms, TRITONBACKEND_ResponseFactoryDelete(f));
}

// ---- Workers ----------------------------------------------------------------

static void*
worker(void* arg)
{
  struct instance_state* is = arg;
  for (;;) {
    pthread_mutex_lock(&is->mu);
    while (is->head == NULL && !is->stopping)
      pthread_cond_wait(&is->cv, &is->mu);
    struct job* j = is->head;
    if (j == NULL) {  // stopping and drained
      pthread_mutex_unlock(&is->mu);
      return NULL;
    }
    is->head = j->next;
    if (is->head == NULL)
      is->tail = NULL;
    pthread_mutex_unlock(&is->mu);
    if (j->drop_only) {
      sleep_us(j->drop_delay_us);
      CHECK(is->model, TRITONBACKEND_ResponseFactoryDelete(j->factory));
    } else {
      answer(is, j);
    }
    free(j);
    atomic_fetch_sub(&is->pending, 1);
  }
}

static void
push(struct instance_state* is, struct job* j)
{
  atomic_fetch_add(&is->pending, 1);
  pthread_mutex_lock(&is->mu);
  j->next = NULL;
  if (is->tail != NULL) {
    is->tail->next = j;
  } else {
    is->head = j;
  }
  is->tail = j;
  pthread_cond_signal(&is->cv);
  pthread_mutex_unlock(&is->mu);
}

// stop_workers lets the workers drain the queue, joins them and frees the
// instance state.
static void
stop_workers(struct instance_state* is)
{
  pthread_mutex_lock(&is->mu);
  is->stopping = true;
  pthread_cond_broadcast(&is->cv);
  pthread_mutex_unlock(&is->mu);
  for (int i = 0; i < is->started; i++) pthread_join(is->workers[i], NULL);
  pthread_cond_destroy(&is->cv);
  pthread_mutex_destroy(&is->mu);
  free(is);
}

// ---- Entry points -----------------------------------------------------------

TRITONSERVER_Error*
TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model)
{
  struct model_state* ms = calloc(1, sizeof(*ms));
  if (ms == NULL)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  TRITONSERVER_Error* err = TRITONBACKEND_ModelSetState(model, ms);
  if (err != NULL)
    free(ms);
  return err;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model)
{
  void* p;
  TRITONSERVER_Error* err = TRITONBACKEND_ModelState(model, &p);
  if (err != NULL)
    return err;
  struct model_state* ms = p;
  logf_(
      TRITONSERVER_LOG_INFO, __LINE__,
      "stress: summary executed=%" PRIuFAST64 " rescheduled=%" PRIuFAST64
      " released=%" PRIuFAST64 " responses=%" PRIuFAST64 " cancels=%" PRIuFAST64
      " finals=%" PRIuFAST64 " drained=%" PRIuFAST64 " bugs=%" PRIuFAST64,
      atomic_load(&ms->executed), atomic_load(&ms->rescheduled),
      atomic_load(&ms->released), atomic_load(&ms->responses),
      atomic_load(&ms->cancels), atomic_load(&ms->finals),
      atomic_load(&ms->drained), atomic_load(&ms->bugs));
  free(ms);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance* instance)
{
  TRITONBACKEND_Model* model;
  TRITONSERVER_Error* err = TRITONBACKEND_ModelInstanceModel(instance, &model);
  if (err != NULL)
    return err;
  void* p;
  if ((err = TRITONBACKEND_ModelState(model, &p)) != NULL)
    return err;
  struct instance_state* is = calloc(1, sizeof(*is));
  if (is == NULL)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  is->instance = instance;
  is->model = p;
  pthread_mutex_init(&is->mu, NULL);
  pthread_cond_init(&is->cv, NULL);
  for (; is->started < STRESS_WORKERS; is->started++) {
    if (pthread_create(&is->workers[is->started], NULL, worker, is) != 0) {
      stop_workers(is);
      return TRITONSERVER_ErrorNew(
          TRITONSERVER_ERROR_INTERNAL, "stress: cannot start worker threads");
    }
  }
  if ((err = TRITONBACKEND_ModelInstanceSetState(instance, is)) != NULL)
    stop_workers(is);
  return err;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance* instance)
{
  void* p;
  TRITONSERVER_Error* err = TRITONBACKEND_ModelInstanceState(instance, &p);
  if (err != NULL)
    return err;
  struct instance_state* is = p;
  atomic_fetch_add(&is->model->drained, atomic_load(&is->pending));
  stop_workers(is);  // every queued request is answered first
  return NULL;
}

// read_in copies the request's IN input (three INT32s, possibly split over
// several buffers).
static TRITONSERVER_Error*
read_in(TRITONBACKEND_Request* request, int32_t in[3])
{
  TRITONBACKEND_Input* input;
  TRITONSERVER_Error* err = TRITONBACKEND_RequestInput(request, "IN", &input);
  if (err != NULL)
    return err;
  uint64_t byte_size;
  uint32_t buffers;
  err = TRITONBACKEND_InputProperties(
      input, NULL, NULL, NULL, NULL, &byte_size, &buffers);
  if (err != NULL)
    return err;
  if (byte_size != 3 * sizeof(int32_t)) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INVALID_ARG, "stress: IN must hold three INT32s");
  }
  char* dst = (char*)in;
  size_t off = 0;
  for (uint32_t b = 0; b < buffers; b++) {
    const void* src;
    uint64_t size;
    TRITONSERVER_MemoryType mt;
    int64_t mt_id;
    if ((err = TRITONBACKEND_InputBuffer(input, b, &src, &size, &mt, &mt_id)) !=
        NULL)
      return err;
    if (off + size > byte_size)
      return TRITONSERVER_ErrorNew(
          TRITONSERVER_ERROR_INTERNAL, "stress: IN overflows");
    memcpy(dst + off, src, size);
    off += size;
  }
  if (off != byte_size)
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INTERNAL, "stress: IN is short");
  return NULL;
}

// reschedule gives a request back to be executed again, while a worker
// deletes the factory this execution made: the host must not mix up the
// request's old handles with those of its next execution.
static void
reschedule(
    struct instance_state* is, TRITONBACKEND_Request* request, struct job* j,
    int32_t seq)
{
  struct model_state* ms = is->model;
  if (j->first != NULL)
    CHECK(ms, TRITONBACKEND_ResponseDelete(j->first));
  j->first = NULL;
  j->drop_only = true;
  j->drop_delay_us = seq % 3;
  push(is, j);
  if (!CHECK(
          ms, TRITONBACKEND_RequestRelease(
                  request, TRITONSERVER_REQUEST_RELEASE_RESCHEDULE))) {
    atomic_fetch_add(&ms->rescheduled, 1);
  }
}

// take_over turns one request into a queued job and releases it.
static void
take_over(
    struct instance_state* is, TRITONBACKEND_Request* request,
    uint64_t exec_start)
{
  struct model_state* ms = is->model;
  int32_t in[3] = {0, 0, 0};
  struct job* j = NULL;
  TRITONSERVER_Error* err = read_in(request, in);
  if (err == NULL && (in[0] < 0 || in[0] >= STRESS_MAX_SEQ)) {
    err = TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INVALID_ARG, "stress: sequence number out of range");
  }
  if (err == NULL && (j = calloc(1, sizeof(*j))) == NULL) {
    err = TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  }
  if (err == NULL)
    err = TRITONBACKEND_ResponseFactoryNew(&j->factory, request);
  if (err == NULL && (in[2] & MODE_FIRST_FROM_REQUEST) &&
      (in[1] > 0 || (in[2] & MODE_UNTIL_CANCELLED))) {
    err = TRITONBACKEND_ResponseNew(&j->first, request);
    if (err != NULL)
      CHECK(ms, TRITONBACKEND_ResponseFactoryDelete(j->factory));
  }
  if (err != NULL) {
    // The test never sends such a request: answer it with the error.
    bug(ms, "cannot take over request %d: %s", in[0],
        TRITONSERVER_ErrorMessage(err));
    TRITONBACKEND_Response* resp;
    if (!CHECK(ms, TRITONBACKEND_ResponseNew(&resp, request))) {
      CHECK(
          ms, TRITONBACKEND_ResponseSend(
                  resp, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err));
    }
    TRITONSERVER_ErrorDelete(err);
    free(j);
    CHECK(
        ms, TRITONBACKEND_RequestRelease(
                request, TRITONSERVER_REQUEST_RELEASE_ALL));
    return;
  }
  if ((in[2] & MODE_RESCHEDULE) &&
      atomic_exchange(&rescheduled[in[0]], 1) == 0) {
    reschedule(is, request, j, in[0]);
    return;
  }
  bool cancelled;  // the worker finds out through the factory; this only
                   // exercises the call
  CHECK(ms, TRITONBACKEND_RequestIsCancelled(request, &cancelled));
  atomic_fetch_add(&ms->executed, 1);
  int32_t seq = in[0];
  j->seq = seq;
  j->n = in[1];
  j->mode = in[2];
  uint64_t end = now_ns();
  CHECK(
      ms, TRITONBACKEND_ModelInstanceReportStatistics(
              is->instance, request, true, exec_start, exec_start, end, end));
  push(is, j);  // from here the worker may answer (and free) it, before or
                // after the release
  if (atomic_fetch_add(&release_count[seq], 1) != 0)
    bug(ms, "request %d released twice", seq);
  if (!CHECK(
          ms, TRITONBACKEND_RequestRelease(
                  request, TRITONSERVER_REQUEST_RELEASE_ALL))) {
    atomic_fetch_add(&ms->released, 1);
  }
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  uint64_t exec_start = now_ns();
  void* p;
  TRITONSERVER_Error* err = TRITONBACKEND_ModelInstanceState(instance, &p);
  if (err != NULL)
    return err;
  struct instance_state* is = p;
  for (uint32_t i = 0; i < request_count; i++)
    take_over(is, requests[i], exec_start);
  uint64_t end = now_ns();
  CHECK(
      is->model,
      TRITONBACKEND_ModelInstanceReportBatchStatistics(
          instance, request_count, exec_start, exec_start, end, end));
  return NULL;
}
