/*
 * checks_statistics.c: execution, batch and response statistics. The Go
 * test reads the model's statistics afterwards, so the good reports here
 * are counted there: one successful execution of the main request, one
 * batch of size 1, and two response reports of the main request, the
 * first failed and the second successful.
 */
#include "conformance.h"

void
conf_check_execution_statistics(
    conf_report* r, TRITONBACKEND_ModelInstance* inst,
    TRITONBACKEND_Request* req, uint64_t exec_start)
{
  const uint64_t compute_start = conf_now_ns();
  const uint64_t compute_end = conf_now_ns();
  const uint64_t exec_end = conf_now_ns();
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceReportStatistics, "success", inst, req,
      true, exec_start, compute_start, compute_end, exec_end);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceReportStatistics, "null_request", inst,
      NULL, true, exec_start, compute_start, compute_end, exec_end);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceReportStatistics, "null_instance", NULL,
      req, true, exec_start, compute_start, compute_end, exec_end);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceReportBatchStatistics, "good", inst, 1,
      exec_start, compute_start, compute_end, exec_end);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceReportBatchStatistics, "null_instance",
      NULL, 1, exec_start, compute_start, compute_end, exec_end);
}

static void
check_setters(
    conf_report* r, TRITONBACKEND_ModelInstanceResponseStatistics* s,
    TRITONBACKEND_ModelInstance* inst, TRITONBACKEND_ResponseFactory* f)
{
  const uint64_t start = conf_now_ns();
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance, "good",
      s, inst);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance,
      "null_statistics", NULL, inst);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance,
      "null_instance", s, NULL);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory,
      "good", s, f);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory,
      "null_statistics", NULL, f);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory,
      "null_factory", s, NULL);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart, "good",
      s, start);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart,
      "null_statistics", NULL, start);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart,
      "good", s, conf_now_ns());
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart,
      "null_statistics", NULL, 0);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd, "good", s,
      conf_now_ns());
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd,
      "null_statistics", NULL, 0);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetError,
      "null_statistics", NULL, NULL);
}

/* Reports a failed and then a successful response of the request. */
static void
check_reports(conf_report* r, TRITONBACKEND_ModelInstanceResponseStatistics* s)
{
  TRITONSERVER_Error* failure =
      TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNKNOWN, "simulated failure");
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetError, "with_error", s,
      failure);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceReportResponseStatistics, "with_error", s);
  TRITONSERVER_ErrorDelete(failure);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsSetError, "null_error", s,
      NULL);
  CONF_CHECK(r, TRITONBACKEND_ModelInstanceReportResponseStatistics, "good", s);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceReportResponseStatistics, "null_statistics",
      NULL);
}

/* Reports of records that lack the instance or the factory. */
static void
check_incomplete(conf_report* r, TRITONBACKEND_ModelInstance* inst)
{
  TRITONBACKEND_ModelInstanceResponseStatistics* s = NULL;
  if (TRITONBACKEND_ModelInstanceResponseStatisticsNew(&s) != NULL) {
    return;
  }
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceReportResponseStatistics, "no_instance", s);
  TRITONSERVER_ErrorDelete(
      TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance(s, inst));
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceReportResponseStatistics, "no_factory", s);
  TRITONSERVER_ErrorDelete(
      TRITONBACKEND_ModelInstanceResponseStatisticsDelete(s));
}

void
conf_check_response_statistics(
    conf_report* r, TRITONBACKEND_ModelInstance* inst,
    TRITONBACKEND_Request* req)
{
  TRITONBACKEND_ResponseFactory* f = NULL;
  if (TRITONBACKEND_ResponseFactoryNew(&f, req) != NULL) {
    return;
  }
  TRITONBACKEND_ModelInstanceResponseStatistics* s = NULL;
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceResponseStatisticsNew, "null_out", NULL);
  if (CONF_CHECK(
          r, TRITONBACKEND_ModelInstanceResponseStatisticsNew, "good", &s)) {
    check_setters(r, s, inst, f);
    check_reports(r, s);
    CONF_CHECK(
        r, TRITONBACKEND_ModelInstanceResponseStatisticsDelete, "good", s);
    CONF_CHECK(
        r, TRITONBACKEND_ModelInstanceResponseStatisticsDelete, "twice", s);
    CONF_CHECK(
        r, TRITONBACKEND_ModelInstanceResponseStatisticsDelete, "null", NULL);
  }
  check_incomplete(r, inst);
  TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseFactoryDelete(f));
}
