/*
 * kinds.c: the requests the conformance backend answers, chosen by the
 * string in the request's BYTES input KIND.
 *
 *   main        Every check on a request the backend owns. Answers with
 *               the checks of all entry points so far, the response
 *               parameters p_string/p_int/p_bool/p_double/p_long_name...
 *               and AUTO_OUT = 7.
 *               Checks after its final response (sending again, releasing
 *               wrongly, using the released request) go to the deferred
 *               report.
 *   thread      Takes a response factory, releases the request and answers
 *               from a thread: a non-final response (AUTO_OUT = 99), then a
 *               final one with the thread's checks. The thread's checks after
 *               the final response go to the deferred report.
 *   reschedule  Released with TRITONSERVER_REQUEST_RELEASE_RESCHEDULE until
 *               its third execution, which answers with the count.
 *   cancel      Sends a non-final response, waits (up to 10 s) until the
 *               client cancels, then answers with a CANCELLED error.
 *   inprocess   Runs the in-process server API: checks its objects, then
 *               calls the model conformance_peer (kind peer) and answers
 *               with what the allocator and callbacks saw.
 *   peer        Answers a request another backend submitted: two responses
 *               with outputs from the submitter's allocator, one deleted,
 *               then a flags-only final; echoes what it received as
 *               response parameters.
 *   collect     Waits for the backend's threads and answers with the
 *               deferred report.
 */
#include <string.h>

#include "conformance.h"

/* Adds an INT32 output of shape [1] holding value. */
TRITONSERVER_Error*
conf_add_int32_output(
    TRITONBACKEND_Response* resp, const char* name, int32_t value)
{
  const int64_t shape[1] = {1};
  TRITONBACKEND_Output* out = NULL;
  void* buffer = NULL;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
  int64_t id = 0;
  TRITONSERVER_Error* err = TRITONBACKEND_ResponseOutput(
      resp, &out, name, TRITONSERVER_TYPE_INT32, shape, 1);
  if (err == NULL) {
    err = TRITONBACKEND_OutputBuffer(out, &buffer, sizeof(value), &type, &id);
  }
  if (err == NULL) {
    memcpy(buffer, &value, sizeof(value));
  }
  return err;
}

/* Sends report as the final response made by 'resp' (a response of the
 * request, or NULL when creating it failed) and records the send in 'into'
 * as "TRITONBACKEND_ResponseSend <kase>". */
void
conf_send_report(
    conf_report* into, const char* kase, TRITONBACKEND_Response* resp,
    conf_report* report)
{
  if (resp == NULL) {
    return;
  }
  TRITONSERVER_Error* err = conf_add_report_outputs(resp, report);
  CONF_CHECK(into, TRITONBACKEND_ResponseSend, kase, resp, CONF_FINAL, err);
  TRITONSERVER_ErrorDelete(err);
}

/* Answers an unusable request with an error and releases it. */
void
conf_refuse(TRITONBACKEND_Request* req, const char* why)
{
  TRITONBACKEND_Response* resp = NULL;
  if (TRITONBACKEND_ResponseNew(&resp, req) == NULL) {
    TRITONSERVER_Error* err =
        TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, why);
    TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseSend(resp, CONF_FINAL, err));
    TRITONSERVER_ErrorDelete(err);
  }
  TRITONSERVER_ErrorDelete(TRITONBACKEND_RequestRelease(req, CONF_RELEASE_ALL));
}

void
conf_execute_collect(conf_instance* st, TRITONBACKEND_Request* req)
{
  conf_join_threads(st);
  conf_report r;
  conf_report_init(&r);
  conf_report_move(&r, &st->deferred);
  TRITONBACKEND_Response* resp = NULL;
  if (TRITONBACKEND_ResponseNew(&resp, req) == NULL) {
    TRITONSERVER_Error* err = conf_add_report_outputs(resp, &r);
    TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseSend(resp, CONF_FINAL, err));
    TRITONSERVER_ErrorDelete(err);
  }
  TRITONSERVER_ErrorDelete(TRITONBACKEND_RequestRelease(req, CONF_RELEASE_ALL));
  conf_report_destroy(&r);
}

/* ---- dispatch ---------------------------------------------------------- */

/* Copies the first element of the one-element BYTES input KIND into buf. */
static bool
request_kind(TRITONBACKEND_Request* req, char* buf, size_t size)
{
  TRITONBACKEND_Input* in = NULL;
  const void* base = NULL;
  uint64_t bytes = 0;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
  int64_t id = 0;
  TRITONSERVER_Error* err = TRITONBACKEND_RequestInput(req, "KIND", &in);
  if (err == NULL) {
    err = TRITONBACKEND_InputBuffer(in, 0, &base, &bytes, &type, &id);
  }
  if (err != NULL) {
    TRITONSERVER_ErrorDelete(err);
    return false;
  }
  const unsigned char* p = base;
  if (bytes < 4 || type == TRITONSERVER_MEMORY_GPU) {
    return false;
  }
  uint32_t n = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
               (uint32_t)p[3] << 24;
  if (n > bytes - 4 || n >= size) {
    return false;
  }
  memcpy(buf, p + 4, n);
  buf[n] = '\0';
  return true;
}

void
conf_execute(conf_instance* st, TRITONBACKEND_Request* req)
{
  char kind[32];
  if (!request_kind(req, kind, sizeof(kind))) {
    conf_refuse(req, "conformance: input KIND must be one BYTES element");
  } else if (strcmp(kind, "main") == 0) {
    conf_execute_main(st, req);
  } else if (strcmp(kind, "thread") == 0) {
    conf_execute_thread(st, req);
  } else if (strcmp(kind, "reschedule") == 0) {
    conf_execute_reschedule(st, req);
  } else if (strcmp(kind, "cancel") == 0) {
    conf_execute_cancel(st, req);
  } else if (strcmp(kind, "inprocess") == 0) {
    conf_execute_inprocess(st, req);
  } else if (strcmp(kind, "peer") == 0) {
    conf_execute_peer(st, req);
  } else if (strcmp(kind, "collect") == 0) {
    conf_execute_collect(st, req);
  } else {
    conf_refuse(req, "conformance: unknown KIND");
  }
}
