// TRITONBACKEND_ModelInstanceResponseStatistics* functions. A report is
// buffered in the request's context and reaches Go with the request's next
// crossing (see thost_reqctx_take_stats), so a backend that reports every
// response does not pay a second crossing per response.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "objects.h"

#define RSTATS(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_RESPONSE_STATISTICS, "response statistics")

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsNew(
    TRITONBACKEND_ModelInstanceResponseStatistics** response_statistics)
{
  THOST_CHECK_ARG(response_statistics != NULL, "response_statistics is NULL");
  struct thost_response_statistics* s = calloc(1, sizeof(*s));
  if (s == NULL)
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  s->handle = thost_handle_new(THOST_KIND_RESPONSE_STATISTICS, s);
  if (s->handle == 0) {
    free(s);
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: out of handles", __func__);
  }
  s->host = thost_ambient_host();  // named by no argument: counted on the
                                   // thread's server
  thost_count(s->host, THOST_COUNT_RSTATS, 1);
  *response_statistics =
      THOST_AS_HANDLE(TRITONBACKEND_ModelInstanceResponseStatistics, s->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsDelete(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics)
{
  struct thost_response_statistics* s;
  RSTATS(s, response_statistics);
  thost_count(s->host, THOST_COUNT_RSTATS, -1);
  thost_handle_free(s->handle);
  free(s);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics,
    TRITONBACKEND_ModelInstance* model_instance)
{
  struct thost_response_statistics* s;
  struct thost_instance* i;
  RSTATS(s, response_statistics);
  THOST_OBJECT(i, model_instance, THOST_KIND_INSTANCE, "model instance");
  s->instance = i->handle;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics,
    TRITONBACKEND_ResponseFactory* response_factory)
{
  struct thost_response_statistics* s;
  struct thost_factory* f;
  RSTATS(s, response_statistics);
  THOST_OBJECT(f, response_factory, THOST_KIND_FACTORY, "response factory");
  s->factory = f->handle;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics,
    uint64_t response_start)
{
  struct thost_response_statistics* s;
  RSTATS(s, response_statistics);
  s->response_start = response_start;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics,
    uint64_t compute_output_start)
{
  struct thost_response_statistics* s;
  RSTATS(s, response_statistics);
  s->compute_output_start = compute_output_start;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics,
    uint64_t response_end)
{
  struct thost_response_statistics* s;
  RSTATS(s, response_statistics);
  s->response_end = response_end;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetError(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics,
    TRITONSERVER_Error* error)
{
  struct thost_response_statistics* s;
  RSTATS(s, response_statistics);
  s->has_error = error != NULL;
  s->error_code = error != NULL ? error->code : TRITONSERVER_ERROR_UNKNOWN;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceReportResponseStatistics(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics)
{
  struct thost_response_statistics* s;
  struct thost_instance* instance;
  struct thost_factory* factory;
  RSTATS(s, response_statistics);
  // The instance and the factory must still be live when the report is made.
  THOST_OBJECT(
      instance, (void*)(uintptr_t)s->instance, THOST_KIND_INSTANCE,
      "model instance in response statistics");
  THOST_OBJECT(
      factory, (void*)(uintptr_t)s->factory, THOST_KIND_FACTORY,
      "response factory in response statistics");
  struct thost_reqctx* ctx = factory->ctx;
  struct thost_rstat flush[THOST_PENDING_RSTATS];
  uint32_t nflush = 0;
  pthread_mutex_lock(&ctx->mu);
  if (ctx->npending == THOST_PENDING_RSTATS) {
    nflush = ctx->npending;
    memcpy(flush, ctx->pending, sizeof(flush));
    ctx->npending = 0;
  }
  struct thost_rstat* r = &ctx->pending[ctx->npending++];
  r->instance_key = instance->key;
  r->start = s->response_start;
  r->compute_output_start = s->compute_output_start;
  r->end = s->response_end;
  r->has_error = s->has_error;
  r->error_code = (int32_t)s->error_code;
  pthread_mutex_unlock(&ctx->mu);
  // Usually the reports ride along with the request's next send; a full
  // buffer goes to Go now.
  if (nflush > 0)
    return thostResponseStatistics(ctx, flush, nflush);
  return NULL;
}
