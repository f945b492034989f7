// TRITONBACKEND_ModelInstanceResponseStatistics* functions. A report is
// buffered in the request's context and reaches Go with the request's next
// crossing (see thost_reqctx_take_stats), so a backend that reports every
// response does not pay a second crossing per response. Request reports
// (TRITONBACKEND_ModelInstanceReportStatistics, model_api.c) are buffered
// the same way and usually ride along with the request's release. The
// statistics objects and the buffered reports are blocks of the calling
// thread's pools (block_pool.h), and the buffer is a lock-free list: a report
// takes no malloc and no lock.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "block_pool.h"
#include "objects.h"

#define RSTATS(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_RESPONSE_STATISTICS, "response statistics")

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsNew(
    TRITONBACKEND_ModelInstanceResponseStatistics** response_statistics)
{
  THOST_CHECK_ARG(response_statistics != NULL, "response_statistics is NULL");
  struct thost_response_statistics* s = thost_block_get(THOST_POOL_RSTATS);
  if (s == NULL)
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  thost_clear(s, sizeof(*s));
  s->handle = thost_handle_new(THOST_KIND_RESPONSE_STATISTICS, s);
  if (s->handle == 0) {
    thost_block_put(THOST_POOL_RSTATS, s);
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
  thost_block_put(THOST_POOL_RSTATS, s);
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
  struct thost_rstat* r = thost_block_get(THOST_POOL_RSTAT);
  if (r == NULL)
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  r->kind = THOST_RSTAT_RESPONSE;
  r->instance_key = instance->key;
  r->start = s->response_start;
  r->compute_output_start = s->compute_output_start;
  r->compute_end = 0;
  r->end = s->response_end;
  r->has_error = s->has_error;
  r->error_code = (int32_t)s->error_code;
  return thost_reqctx_push_stat(factory->ctx, r);
}

TRITONSERVER_Error*
thost_reqctx_push_stat(struct thost_reqctx* ctx, struct thost_rstat* r)
{
  struct thost_rstat* head = __atomic_load_n(&ctx->pending, __ATOMIC_RELAXED);
  do {
    r->next = head;
  } while (!__atomic_compare_exchange_n(
      &ctx->pending, &head, r, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
  // Usually the reports ride along with the request's next crossing; a
  // long list goes to Go now. The count is a load and a store, not an
  // atomic increment: threads reporting for one request at once may lose
  // counts of each other's, which only lengthens the list a little.
  uint32_t n = __atomic_load_n(&ctx->npending, __ATOMIC_RELAXED) + 1;
  __atomic_store_n(&ctx->npending, n, __ATOMIC_RELAXED);
  if (n < THOST_PENDING_RSTATS)
    return NULL;
  struct thost_rstat* flush = thost_reqctx_take_stats(ctx);
  TRITONSERVER_Error* err = thostResponseStatistics(ctx, flush);
  thost_rstats_free(flush);
  return err;
}
