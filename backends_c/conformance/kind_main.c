/*
 * kind_main.c: the "main" request (see kinds.c): every check on a request
 * the backend owns, answered with the checks of all entry points so far;
 * the checks after its final response go to the deferred report.
 */
#include "conformance.h"

/* After the final response: the request is still held, but nothing more may
 * be sent for it; then it is released once, and only once. */
static void
after_final(conf_instance* st, TRITONBACKEND_Request* req)
{
  conf_report* d = &st->deferred;
  TRITONBACKEND_Response* resp = NULL;
  if (CONF_CHECK(d, TRITONBACKEND_ResponseNew, "after_final", &resp, req)) {
    CONF_CHECK(
        d, TRITONBACKEND_ResponseSend, "after_final", resp, CONF_FINAL, NULL);
    CONF_CHECK(d, TRITONBACKEND_ResponseSend, "twice", resp, CONF_FINAL, NULL);
  }
  TRITONBACKEND_ResponseFactory* f = NULL;
  if (CONF_CHECK(d, TRITONBACKEND_ResponseFactoryNew, "after_final", &f, req)) {
    CONF_CHECK(
        d, TRITONBACKEND_ResponseFactorySendFlags, "after_final", f,
        CONF_FINAL);
    TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseFactoryDelete(f));
  }
  CONF_CHECK(d, TRITONBACKEND_RequestRelease, "no_flags", req, 0);
  CONF_CHECK(d, TRITONBACKEND_RequestRelease, "unknown_flags", req, 8);
  CONF_CHECK(
      d, TRITONBACKEND_RequestRelease, "reschedule_after_final", req,
      TRITONSERVER_REQUEST_RELEASE_RESCHEDULE);
  CONF_CHECK(
      d, TRITONBACKEND_RequestRelease, "null_request", NULL, CONF_RELEASE_ALL);
  if (!CONF_CHECK(
          d, TRITONBACKEND_RequestRelease, "good", req, CONF_RELEASE_ALL)) {
    return;
  }
  const char* id = NULL;
  CONF_CHECK(d, TRITONBACKEND_RequestRelease, "twice", req, CONF_RELEASE_ALL);
  CONF_CHECK(d, TRITONBACKEND_RequestId, "released_request", req, &id);
  CONF_CHECK(d, TRITONBACKEND_ResponseNew, "released_request", &resp, req);
  CONF_CHECK(d, TRITONBACKEND_ResponseFactoryNew, "released_request", &f, req);
  CONF_CHECK(
      d, TRITONBACKEND_ModelInstanceReportStatistics, "released_request",
      st->instance, req, false, 0, 0, 0, 0);
}

void
conf_execute_main(conf_instance* st, TRITONBACKEND_Request* req)
{
  const uint64_t start = conf_now_ns();
  conf_report r;
  conf_report_init(&r);
  if (st->model != NULL && st->model->backend != NULL) {
    conf_report_copy(&r, &st->model->backend->report);
  }
  if (st->model != NULL) {
    conf_report_copy(&r, &st->model->report);
  }
  conf_report_copy(&r, &st->report);
  conf_check_model_after_load(&r, st->instance);
  conf_check_request(&r, req);
  conf_check_responses(&r, req);
  conf_check_factory(&r, req);
  conf_check_response_statistics(&r, st->instance, req);
  conf_check_execution_statistics(&r, st->instance, req, start);

  TRITONBACKEND_Response* resp = NULL;
  if (CONF_CHECK(&r, TRITONBACKEND_ResponseNew, "for_result", &resp, req)) {
    conf_set_parameters(&r, resp, "good");
    conf_check(
        &r, "TRITONBACKEND_ResponseOutput", "auto_completed_output",
        conf_add_int32_output(resp, "AUTO_OUT", 7));
  }
  conf_send_report(&st->deferred, "final", resp, &r);
  conf_report_destroy(&r);
  after_final(st, req);
}
