/*
 * kind_thread.c: the "thread" request (see kinds.c): answered from a
 * thread of the backend through a response factory after the request was
 * released.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "conformance.h"

typedef struct thread_job {
  conf_instance* st;
  TRITONBACKEND_ResponseFactory* factory;
  conf_report report;
} thread_job;

/* Statistics of the thread's non-final response. */
static void
report_thread_response(conf_report* r, thread_job* job, uint64_t start)
{
  TRITONBACKEND_ModelInstanceResponseStatistics* s = NULL;
  if (TRITONBACKEND_ModelInstanceResponseStatisticsNew(&s) != NULL) {
    return;
  }
  TRITONSERVER_ErrorDelete(
      TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance(
          s, job->st->instance));
  TRITONSERVER_ErrorDelete(
      TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory(
          s, job->factory));
  TRITONSERVER_ErrorDelete(
      TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart(s, start));
  TRITONSERVER_ErrorDelete(
      TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart(
          s, start));
  TRITONSERVER_ErrorDelete(
      TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd(
          s, conf_now_ns()));
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceReportResponseStatistics, "from_thread", s);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsDelete, "from_thread", s);
}

static void*
thread_main(void* arg)
{
  thread_job* job = arg;
  conf_report* r = &job->report;
  conf_report* d = &job->st->deferred;
  TRITONBACKEND_ResponseFactory* f = job->factory;
  const uint64_t start = conf_now_ns();
  bool cancelled = true;
  if (CONF_CHECK(
          r, TRITONBACKEND_ResponseFactoryIsCancelled, "released_request", f,
          &cancelled)) {
    conf_value(
        r, "thread.factory_is_cancelled", "%s", cancelled ? "true" : "false");
  }
  TRITONBACKEND_Response* resp = NULL;
  if (CONF_CHECK(
          r, TRITONBACKEND_ResponseNewFromFactory, "released_request", &resp,
          f)) {
    conf_check(
        r, "TRITONBACKEND_ResponseOutput", "from_thread",
        conf_add_int32_output(resp, "AUTO_OUT", 99));
    CONF_CHECK(
        r, TRITONBACKEND_ResponseSetIntParameter, "from_thread", resp,
        "from_thread", 7);
    CONF_CHECK(
        r, TRITONBACKEND_ResponseSend, "not_final_from_thread", resp, 0, NULL);
  }
  report_thread_response(r, job, start);
  resp = NULL;
  TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseNewFromFactory(&resp, f));
  conf_send_report(d, "final_from_thread", resp, r);
  if (CONF_CHECK(
          d, TRITONBACKEND_ResponseNewFromFactory, "after_final", &resp, f)) {
    CONF_CHECK(
        d, TRITONBACKEND_ResponseSend, "after_final_from_thread", resp,
        CONF_FINAL, NULL);
  }
  CONF_CHECK(
      d, TRITONBACKEND_ResponseFactorySendFlags, "after_final_from_thread", f,
      CONF_FINAL);
  CONF_CHECK(d, TRITONBACKEND_ResponseFactoryDelete, "from_thread", f);
  conf_report_destroy(r);
  free(job);
  return NULL;
}

void
conf_execute_thread(conf_instance* st, TRITONBACKEND_Request* req)
{
  thread_job* job = calloc(1, sizeof(*job));
  if (job == NULL) {
    conf_refuse(req, "conformance: out of memory");
    return;
  }
  job->st = st;
  conf_report_init(&job->report);
  conf_check_correlation_id(&job->report, req, true);
  CONF_CHECK(
      &job->report, TRITONBACKEND_ModelInstanceReportStatistics, "failure",
      st->instance, req, false, 0, 0, 0, 0);
  if (!CONF_CHECK(
          &job->report, TRITONBACKEND_ResponseFactoryNew, "for_thread",
          &job->factory, req)) {
    conf_report_destroy(&job->report);
    free(job);
    conf_refuse(req, "conformance: no response factory");
    return;
  }
  CONF_CHECK(
      &job->report, TRITONBACKEND_RequestRelease, "before_thread", req,
      CONF_RELEASE_ALL);
  pthread_mutex_lock(&st->mu);
  bool started =
      st->thread_count < CONF_MAX_THREADS &&
      pthread_create(&st->threads[st->thread_count], NULL, thread_main, job) ==
          0;
  if (started) {
    st->thread_count++;
  }
  pthread_mutex_unlock(&st->mu);
  if (!started) {
    thread_main(job); /* answer from here rather than not at all */
  }
}

void
conf_join_threads(conf_instance* st)
{
  pthread_mutex_lock(&st->mu);
  size_t n = st->thread_count;
  pthread_t threads[CONF_MAX_THREADS];
  memcpy(threads, st->threads, n * sizeof(threads[0]));
  st->thread_count = 0;
  pthread_mutex_unlock(&st->mu);
  for (size_t i = 0; i < n; i++) {
    pthread_join(threads[i], NULL);
  }
}
