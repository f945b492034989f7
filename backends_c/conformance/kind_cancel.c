/*
 * kind_cancel.c: the "cancel" request (see kinds.c): waits for the client
 * to cancel it, then answers with a CANCELLED error.
 */
#define _POSIX_C_SOURCE 200809L

#include <time.h>

#include "conformance.h"

void
conf_execute_cancel(conf_instance* st, TRITONBACKEND_Request* req)
{
  conf_report* d = &st->deferred;
  TRITONBACKEND_Response* resp = NULL;
  if (CONF_CHECK(d, TRITONBACKEND_ResponseNew, "before_cancel", &resp, req)) {
    CONF_CHECK(d, TRITONBACKEND_ResponseSend, "before_cancel", resp, 0, NULL);
  }
  bool cancelled = false;
  const struct timespec ms = {0, 1000000};
  for (int i = 0; i < 10000 && !cancelled; i++) {
    TRITONSERVER_Error* err = TRITONBACKEND_RequestIsCancelled(req, &cancelled);
    TRITONSERVER_ErrorDelete(err);
    if (err != NULL) {
      break;
    }
    if (!cancelled) {
      nanosleep(&ms, NULL);
    }
  }
  if (CONF_CHECK(
          d, TRITONBACKEND_RequestIsCancelled, "cancelled", req, &cancelled)) {
    conf_value(
        d, "cancel.request_is_cancelled", "%s", cancelled ? "true" : "false");
  }
  TRITONBACKEND_ResponseFactory* f = NULL;
  if (TRITONBACKEND_ResponseFactoryNew(&f, req) == NULL) {
    if (CONF_CHECK(
            d, TRITONBACKEND_ResponseFactoryIsCancelled, "cancelled", f,
            &cancelled)) {
      conf_value(
          d, "cancel.factory_is_cancelled", "%s", cancelled ? "true" : "false");
    }
    TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseFactoryDelete(f));
  }
  if (CONF_CHECK(d, TRITONBACKEND_ResponseNew, "cancelled", &resp, req)) {
    TRITONSERVER_Error* err = TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_CANCELLED, "conformance: cancelled");
    CONF_CHECK(
        d, TRITONBACKEND_ResponseSend, "cancelled_error", resp, CONF_FINAL,
        err);
    TRITONSERVER_ErrorDelete(err);
  }
  CONF_CHECK(
      d, TRITONBACKEND_RequestRelease, "cancelled", req, CONF_RELEASE_ALL);
}
