// A test backend that uses handles it no longer owns, or never had, and
// reports what the server answered. For each request it:
//   - frees a handle of each kind it can free (factory, response, response
//     statistics, request), then makes and frees FURTHER_FREES more
//     handles, then uses the first one again;
//   - passes made-up pointers (a stack address, heap memory, NULL) and a
//     live handle of another kind where a handle is expected.
// The response carries one string parameter per check: the name of the
// check, the error code's name ("OK" when the call succeeded).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "triton/core/tritonbackend.h"

#define FURTHER_FREES 10000

static const char*
code_name(TRITONSERVER_Error* err)
{
  if (err == NULL)
    return "OK";
  switch (TRITONSERVER_ErrorCode(err)) {
    case TRITONSERVER_ERROR_INVALID_ARG:
      return "INVALID_ARG";
    case TRITONSERVER_ERROR_NOT_FOUND:
      return "NOT_FOUND";
    case TRITONSERVER_ERROR_INTERNAL:
      return "INTERNAL";
    default:
      return "OTHER";
  }
}

// Records the outcome of one check on the response and frees the error.
static void
report(
    TRITONBACKEND_Response* response, const char* check,
    TRITONSERVER_Error* err)
{
  TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseSetStringParameter(
      response, check, code_name(err)));
  TRITONSERVER_ErrorDelete(err);
}

// Makes and frees n response factories of request.
static void
churn_factories(TRITONBACKEND_Request* request, int n)
{
  for (int i = 0; i < n; i++) {
    TRITONBACKEND_ResponseFactory* f = NULL;
    TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseFactoryNew(&f, request));
    TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseFactoryDelete(f));
  }
}

static void
check_request(TRITONBACKEND_Request* request)
{
  // The factory outlives the request, so that the request can be released
  // first and the results still sent.
  TRITONBACKEND_ResponseFactory* factory = NULL;
  TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseFactoryNew(&factory, request));
  TRITONBACKEND_Response* response = NULL;
  TRITONSERVER_ErrorDelete(
      TRITONBACKEND_ResponseNewFromFactory(&response, factory));

  // A factory, freed, then FURTHER_FREES more.
  TRITONBACKEND_ResponseFactory* stale_factory = NULL;
  TRITONSERVER_ErrorDelete(
      TRITONBACKEND_ResponseFactoryNew(&stale_factory, request));
  TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseFactoryDelete(stale_factory));
  churn_factories(request, FURTHER_FREES);
  report(
      response, "stale_factory.delete",
      TRITONBACKEND_ResponseFactoryDelete(stale_factory));
  TRITONBACKEND_Response* r2 = NULL;
  report(
      response, "stale_factory.response_new",
      TRITONBACKEND_ResponseNewFromFactory(&r2, stale_factory));
  report(
      response, "stale_factory.send_flags",
      TRITONBACKEND_ResponseFactorySendFlags(
          stale_factory, TRITONSERVER_RESPONSE_COMPLETE_FINAL));

  // A response, deleted, then FURTHER_FREES more.
  TRITONBACKEND_Response* stale_response = NULL;
  TRITONSERVER_ErrorDelete(
      TRITONBACKEND_ResponseNewFromFactory(&stale_response, factory));
  TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseDelete(stale_response));
  for (int i = 0; i < FURTHER_FREES; i++) {
    TRITONBACKEND_Response* r = NULL;
    TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseNewFromFactory(&r, factory));
    TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseDelete(r));
  }
  report(
      response, "stale_response.send",
      TRITONBACKEND_ResponseSend(
          stale_response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, NULL));
  report(
      response, "stale_response.delete",
      TRITONBACKEND_ResponseDelete(stale_response));

  // Response statistics, deleted, then FURTHER_FREES more.
  TRITONBACKEND_ModelInstanceResponseStatistics* stale_stats = NULL;
  TRITONSERVER_ErrorDelete(
      TRITONBACKEND_ModelInstanceResponseStatisticsNew(&stale_stats));
  TRITONSERVER_ErrorDelete(
      TRITONBACKEND_ModelInstanceResponseStatisticsDelete(stale_stats));
  for (int i = 0; i < FURTHER_FREES; i++) {
    TRITONBACKEND_ModelInstanceResponseStatistics* s = NULL;
    TRITONSERVER_ErrorDelete(
        TRITONBACKEND_ModelInstanceResponseStatisticsNew(&s));
    TRITONSERVER_ErrorDelete(
        TRITONBACKEND_ModelInstanceResponseStatisticsDelete(s));
  }
  report(
      response, "stale_statistics.delete",
      TRITONBACKEND_ModelInstanceResponseStatisticsDelete(stale_stats));

  // Pointers that were never handles, and a live handle of another kind.
  int on_stack = 0;
  void* on_heap = calloc(1, 256);
  const char* id = NULL;
  report(
      response, "foreign.stack",
      TRITONBACKEND_RequestId((TRITONBACKEND_Request*)&on_stack, &id));
  report(
      response, "foreign.heap",
      TRITONBACKEND_RequestId((TRITONBACKEND_Request*)on_heap, &id));
  report(response, "foreign.null", TRITONBACKEND_RequestId(NULL, &id));
  report(
      response, "foreign.other_kind",
      TRITONBACKEND_RequestId((TRITONBACKEND_Request*)factory, &id));
  report(
      response, "foreign.live_request", TRITONBACKEND_RequestId(request, &id));
  free(on_heap);

  // The request itself, released, then FURTHER_FREES more frees: of
  // responses, which take the request's freed slot over and over (a slot
  // serves handles of every kind).
  TRITONSERVER_ErrorDelete(
      TRITONBACKEND_RequestRelease(request, TRITONSERVER_REQUEST_RELEASE_ALL));
  for (int i = 0; i < FURTHER_FREES; i++) {
    TRITONBACKEND_Response* r = NULL;
    TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseNewFromFactory(&r, factory));
    TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseDelete(r));
  }
  report(response, "stale_request.id", TRITONBACKEND_RequestId(request, &id));
  report(
      response, "stale_request.release",
      TRITONBACKEND_RequestRelease(request, TRITONSERVER_REQUEST_RELEASE_ALL));

  TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseSend(
      response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, NULL));
  TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseFactoryDelete(factory));
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  (void)instance;
  for (uint32_t i = 0; i < request_count; i++) check_request(requests[i]);
  return NULL;
}
