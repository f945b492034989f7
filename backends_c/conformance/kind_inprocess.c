/*
 * kind_inprocess.c: the "inprocess" request (see kinds.c): the in-process
 * server API end to end. Execute checks the API's objects on their own
 * (checks_inprocess.c), then submits a request to the model
 * conformance_peer (kind "peer", kind_peer.c) with the allocator and
 * callbacks of inprocess_callbacks.c, waits (up to 10 s) for it to come
 * back, and answers with what they saw.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conformance.h"

/* The KIND and DATA inputs of the submitted request; they must stay valid
 * until its release callback, which Execute waits for. */
static const char peer_kind[8] = {4, 0, 0, 0, 'p', 'e', 'e', 'r'};
static const int32_t peer_data[3] = {1, 2, 3};

static TRITONSERVER_Server*
server_of(TRITONBACKEND_ModelInstance* instance)
{
  TRITONBACKEND_Model* model = NULL;
  TRITONSERVER_Server* server = NULL;
  if (TRITONBACKEND_ModelInstanceModel(instance, &model) == NULL) {
    TRITONSERVER_ErrorDelete(TRITONBACKEND_ModelServer(model, &server));
  }
  return server;
}

/* Builds the request to the peer; false if something failed (recorded). */
static bool
build(
    conf_report* r, TRITONSERVER_InferenceRequest* q,
    TRITONSERVER_ResponseAllocator* a, conf_call* c)
{
  const int64_t one = 1, three = 3;
  bool ok =
      TRITONSERVER_InferenceRequestSetId(q, "peer-1") == NULL &&
      TRITONSERVER_InferenceRequestSetCorrelationIdString(q, "seq-7") == NULL &&
      TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(q, 30000000) ==
          NULL &&
      TRITONSERVER_InferenceRequestAddInput(
          q, "KIND", TRITONSERVER_TYPE_BYTES, &one, 1) == NULL &&
      TRITONSERVER_InferenceRequestAppendInputData(
          q, "KIND", peer_kind, sizeof(peer_kind), TRITONSERVER_MEMORY_CPU,
          0) == NULL &&
      TRITONSERVER_InferenceRequestAddInput(
          q, "DATA", TRITONSERVER_TYPE_INT32, &three, 1) == NULL &&
      TRITONSERVER_InferenceRequestAppendInputData(
          q, "DATA", peer_data, 8, TRITONSERVER_MEMORY_CPU, 0) == NULL &&
      TRITONSERVER_InferenceRequestAppendInputData(
          q, "DATA", peer_data + 2, 4, TRITONSERVER_MEMORY_CPU, 0) == NULL &&
      TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy(
          q, "DATA", peer_data, 12, TRITONSERVER_MEMORY_CPU, 0,
          "other_policy") == NULL &&
      TRITONSERVER_InferenceRequestSetStringParameter(q, "s", "text") == NULL &&
      TRITONSERVER_InferenceRequestSetIntParameter(q, "i", -5) == NULL &&
      TRITONSERVER_InferenceRequestAddRequestedOutput(q, "AUTO_OUT") == NULL &&
      TRITONSERVER_InferenceRequestSetReleaseCallback(
          q, conf_request_released, c) == NULL &&
      TRITONSERVER_InferenceRequestSetResponseCallback(
          q, a, c, conf_response_complete, c) == NULL;
  conf_result(
      r, "TRITONSERVER_InferenceRequestNew", "for_peer",
      ok ? "OK" : "INTERNAL");
  return ok;
}

/* Waits up to 10 s for the release callback. */
static bool
wait_released(conf_call* c)
{
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 10;
  pthread_mutex_lock(&c->mu);
  int rc = 0;
  while (!c->released && rc != ETIMEDOUT) {
    rc = pthread_cond_timedwait(&c->cv, &c->mu, &deadline);
  }
  bool released = c->released;
  pthread_mutex_unlock(&c->mu);
  return released;
}

/* Submissions that fail, leaving the request with the caller. */
static void
check_refused_submissions(
    conf_report* r, TRITONSERVER_Server* server,
    TRITONSERVER_InferenceRequest* q)
{
  CONF_CHECK(r, TRITONSERVER_ServerInferAsync, "null_server", NULL, q, NULL);
  CONF_CHECK(
      r, TRITONSERVER_ServerInferAsync, "null_request", server, NULL, NULL);
  CONF_CHECK(
      r, TRITONSERVER_ServerInferAsync, "made_up_trace", server, q,
      (TRITONSERVER_InferenceTrace*)(uintptr_t)0x1234);
  TRITONSERVER_InferenceRequest* bare = NULL;
  if (TRITONSERVER_InferenceRequestNew(&bare, server, CONF_PEER, -1) == NULL) {
    CONF_CHECK(
        r, TRITONSERVER_ServerInferAsync, "no_response_callback", server, bare,
        NULL);
    TRITONSERVER_ResponseAllocator* a = NULL;
    if (TRITONSERVER_ResponseAllocatorNew(
            &a, conf_alloc_fn, conf_release_fn, NULL) == NULL) {
      /* No KIND input: the server refuses it, the caller keeps it. */
      TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceRequestSetResponseCallback(
          bare, a, NULL, conf_response_complete, NULL));
      CONF_CHECK(
          r, TRITONSERVER_ServerInferAsync, "missing_input", server, bare,
          NULL);
      TRITONSERVER_ErrorDelete(TRITONSERVER_ResponseAllocatorDelete(a));
    }
    CONF_CHECK(r, TRITONSERVER_InferenceRequestDelete, "refused", bare);
  }
}

/* While the request is in flight: changes and a second submission are
 * refused, cancellation state is readable. */
static void
check_in_flight(
    conf_report* r, TRITONSERVER_Server* server,
    TRITONSERVER_InferenceRequest* q)
{
  bool cancelled = true;
  if (CONF_CHECK(
          r, TRITONSERVER_InferenceRequestIsCancelled, "submitted", q,
          &cancelled)) {
    conf_value(
        r, "inprocess.cancelled_after_submission", "%s",
        cancelled ? "true" : "false");
  }
  CONF_CHECK(r, TRITONSERVER_ServerInferAsync, "in_flight", server, q, NULL);
  CONF_CHECK(r, TRITONSERVER_InferenceRequestSetId, "in_flight", q, "x");
  CONF_CHECK(r, TRITONSERVER_InferenceRequestDelete, "in_flight", q);
}

/* What the allocator and callbacks saw, as values. */
static void
report_calls(conf_report* r, conf_call* c)
{
  pthread_mutex_lock(&c->mu);
  conf_value(
      r, "inprocess.calls",
      "starts=%d allocs=%d attributes=%d queries=%d releases=%d "
      "responses=%d finals=%d",
      c->starts, c->allocs, c->attributes, c->queries, c->releases,
      c->responses, c->finals);
  conf_value(
      r, "inprocess.threads", "alloc_on_caller=%s response_on_other=%s",
      c->alloc_on_caller ? "true" : "false",
      c->foreign_thread ? "true" : "false");
  conf_value(r, "inprocess.preferred_gpu", "%d", c->preferred_gpu);
  conf_value(r, "inprocess.query_name", "%s", c->query_name);
  conf_value(r, "inprocess.null_final", "%s", c->null_final ? "true" : "false");
  conf_value(r, "inprocess.release_flags", "%u", c->release_flags);
  conf_value(r, "inprocess.out", "%d,%d", c->out[0], c->out[1]);
  conf_value(
      r, "inprocess.peer_send_after_final", "%s", conf_peer_after_final());
  pthread_mutex_unlock(&c->mu);
}

void
conf_execute_inprocess(conf_instance* st, TRITONBACKEND_Request* req)
{
  /* On the heap: should the peer not come back in time, its callbacks
   * still find them (leaked then, rather than a dead stack frame). */
  conf_report* r = calloc(1, sizeof(*r));
  conf_call* c = calloc(1, sizeof(*c));
  if (r == NULL || c == NULL) {
    free(r);
    free(c);
    conf_refuse(req, "conformance: out of memory");
    return;
  }
  conf_report_init(r);
  TRITONSERVER_Server* server = server_of(st->instance);
  conf_check_inprocess_api(r, server);

  c->report = r;
  c->caller = pthread_self();
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  TRITONSERVER_ResponseAllocator* a = NULL;
  TRITONSERVER_InferenceRequest* q = NULL;
  bool ok = CONF_CHECK(
                r, TRITONSERVER_ResponseAllocatorNew, "good", &a, conf_alloc_fn,
                conf_release_fn, conf_start_fn) &&
            CONF_CHECK(
                r, TRITONSERVER_ResponseAllocatorSetQueryFunction, "good", a,
                conf_query_fn) &&
            CONF_CHECK(
                r, TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction,
                "good", a, conf_attributes_fn) &&
            CONF_CHECK(
                r, TRITONSERVER_InferenceRequestNew, "good", &q, server,
                CONF_PEER, -1) &&
            build(r, q, a, c);
  if (ok) {
    check_refused_submissions(r, server, q);
    /* Cancelling before submission does not cancel the submission. */
    TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceRequestCancel(q));
    conf_peer_gate_close();
    ok = CONF_CHECK(r, TRITONSERVER_ServerInferAsync, "good", server, q, NULL);
  }
  bool released = false;
  if (ok) {
    check_in_flight(r, server, q);
    conf_peer_gate_open();
    released = wait_released(c);
    conf_result(
        r, "TRITONSERVER_ServerInferAsync", "released",
        released ? "OK" : "TIMEOUT");
  }
  conf_peer_gate_open();
  if (released) {
    report_calls(r, c);
    CONF_CHECK(r, TRITONSERVER_InferenceRequestDelete, "after_release", q);
  } else if (q != NULL && !ok) { /* never submitted: still ours */
    TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceRequestDelete(q));
  }
  if (a != NULL) {
    CONF_CHECK(r, TRITONSERVER_ResponseAllocatorDelete, "good", a);
  }
  TRITONBACKEND_Response* resp = NULL;
  if (TRITONBACKEND_ResponseNew(&resp, req) == NULL) {
    conf_send_report(&st->deferred, "inprocess", resp, r);
  }
  TRITONSERVER_ErrorDelete(TRITONBACKEND_RequestRelease(req, CONF_RELEASE_ALL));
  if (ok && !released) {
    return; /* the peer may still call back into c and r */
  }
  conf_report_destroy(r);
  free(r);
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
  free(c);
}
