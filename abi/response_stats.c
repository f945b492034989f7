// TRITONBACKEND_ModelInstanceResponseStatistics* functions. A report is
// buffered in the request's context and reaches Go with the request's next
// crossing (see thost_reqctx_take_stats), so a backend that reports every
// response does not pay a second crossing per response.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "handles.h"

// Frees a dead handle after a delay (request_api.c), so that a second delete
// of it is refused instead of touching freed memory.
void thost_quarantine_free(void* dead);

#define CHECK_FACTORY(f) THOST_CHECK_HANDLE(f, THOST_MAGIC_FACTORY, "response factory")

#define CHECK_RSTATS(s) THOST_CHECK_HANDLE(s, THOST_MAGIC_RSTATS, "response statistics")

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsNew(
    TRITONBACKEND_ModelInstanceResponseStatistics** response_statistics) {
  THOST_CHECK_ARG(response_statistics != NULL, "response_statistics is NULL");
  TRITONBACKEND_ModelInstanceResponseStatistics* s = calloc(1, sizeof(*s));
  if (s == NULL) return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  s->magic = THOST_MAGIC_RSTATS;
  thost_count(THOST_COUNT_RSTATS, 1);
  *response_statistics = s;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsDelete(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics) {
  CHECK_RSTATS(response_statistics);
  response_statistics->magic = THOST_MAGIC_DEAD;
  thost_quarantine_free(response_statistics);
  thost_count(THOST_COUNT_RSTATS, -1);
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics, TRITONBACKEND_ModelInstance* model_instance) {
  CHECK_RSTATS(response_statistics);
  THOST_CHECK_HANDLE(model_instance, THOST_MAGIC_INSTANCE, "model instance");
  response_statistics->instance = model_instance;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics,
    TRITONBACKEND_ResponseFactory* response_factory) {
  CHECK_RSTATS(response_statistics);
  CHECK_FACTORY(response_factory);
  response_statistics->factory = response_factory;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics, uint64_t response_start) {
  CHECK_RSTATS(response_statistics);
  response_statistics->response_start = response_start;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics, uint64_t compute_output_start) {
  CHECK_RSTATS(response_statistics);
  response_statistics->compute_output_start = compute_output_start;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics, uint64_t response_end) {
  CHECK_RSTATS(response_statistics);
  response_statistics->response_end = response_end;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceResponseStatisticsSetError(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics, TRITONSERVER_Error* error) {
  CHECK_RSTATS(response_statistics);
  response_statistics->has_error = error != NULL;
  response_statistics->error_code = error != NULL ? error->code : TRITONSERVER_ERROR_UNKNOWN;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceReportResponseStatistics(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics) {
  CHECK_RSTATS(response_statistics);
  THOST_CHECK_HANDLE(response_statistics->instance, THOST_MAGIC_INSTANCE, "model instance in response statistics");
  CHECK_FACTORY(response_statistics->factory);
  TRITONBACKEND_ModelInstanceResponseStatistics* s = response_statistics;
  struct thost_reqctx* ctx = s->factory->ctx;
  struct thost_rstat flush[THOST_PENDING_RSTATS];
  uint32_t nflush = 0;
  pthread_mutex_lock(&ctx->mu);
  if (ctx->npending == THOST_PENDING_RSTATS) {
    nflush = ctx->npending;
    memcpy(flush, ctx->pending, sizeof(flush));
    ctx->npending = 0;
  }
  struct thost_rstat* r = &ctx->pending[ctx->npending++];
  r->instance_key = s->instance->key;
  r->start = s->response_start;
  r->compute_output_start = s->compute_output_start;
  r->end = s->response_end;
  r->has_error = s->has_error;
  r->error_code = (int32_t)s->error_code;
  pthread_mutex_unlock(&ctx->mu);
  // Usually the reports ride along with the request's next send; a full
  // buffer goes to Go now.
  if (nflush > 0) return thostResponseStatistics(ctx->key, flush, nflush);
  return NULL;
}
