/*
 * checks_inprocess.c: the in-process server API on its own: the model
 * queries, response allocators, and building an inference request (every
 * getter and setter, with good and bad arguments), without submitting it.
 * kind_inprocess.c submits one. Run from Execute of the "inprocess" kind.
 */
#include <stdint.h>
#include <string.h>

#include "conformance.h"

/* A value that is no handle at all, and one of the wrong kind. */
#define MADE_UP ((void*)(uintptr_t)0x1234)

static void
check_model_queries(conf_report* r, TRITONSERVER_Server* server)
{
  bool ready = false;
  if (CONF_CHECK(
          r, TRITONSERVER_ServerModelIsReady, "good", server, CONF_PEER, -1,
          &ready)) {
    conf_value(r, "inprocess.peer_ready", "%s", ready ? "true" : "false");
  }
  ready = true;
  if (CONF_CHECK(
          r, TRITONSERVER_ServerModelIsReady, "unknown_model", server,
          "no_such_model", -1, &ready)) {
    conf_value(r, "inprocess.unknown_ready", "%s", ready ? "true" : "false");
  }
  CONF_CHECK(
      r, TRITONSERVER_ServerModelIsReady, "null_server", NULL, CONF_PEER, -1,
      &ready);
  CONF_CHECK(
      r, TRITONSERVER_ServerModelIsReady, "made_up_server",
      (TRITONSERVER_Server*)MADE_UP, CONF_PEER, -1, &ready);
  CONF_CHECK(
      r, TRITONSERVER_ServerModelIsReady, "null_out", server, CONF_PEER, -1,
      NULL);

  TRITONSERVER_Message* msg = NULL;
  const char* json = NULL;
  size_t size = 0;
  if (CONF_CHECK(
          r, TRITONSERVER_ServerModelMetadata, "good", server, CONF_PEER, 1,
          &msg) &&
      TRITONSERVER_MessageSerializeToJson(msg, &json, &size) == NULL) {
    conf_value(r, "inprocess.peer_metadata", "%s", json);
    TRITONSERVER_ErrorDelete(TRITONSERVER_MessageDelete(msg));
  }
  CONF_CHECK(
      r, TRITONSERVER_ServerModelMetadata, "unknown_model", server,
      "no_such_model", -1, &msg);
  CONF_CHECK(
      r, TRITONSERVER_ServerModelMetadata, "null_out", server, CONF_PEER, -1,
      NULL);
  if (CONF_CHECK(
          r, TRITONSERVER_ServerModelConfig, "good", server, CONF_PEER, -1, 1,
          &msg)) {
    if (conf_config_values(r, "inprocess.peer_config", msg)) {
      conf_result(r, "TRITONSERVER_ServerModelConfig", "parses", "OK");
    }
    TRITONSERVER_ErrorDelete(TRITONSERVER_MessageDelete(msg));
  }
  CONF_CHECK(
      r, TRITONSERVER_ServerModelConfig, "config_version_2", server, CONF_PEER,
      -1, 2, &msg);
  CONF_CHECK(
      r, TRITONSERVER_ServerModelConfig, "unknown_model", server,
      "no_such_model", -1, 1, &msg);
  CONF_CHECK(
      r, TRITONSERVER_ServerModelConfig, "null_name", server, NULL, -1, 1,
      &msg);
}

static void
check_allocators(conf_report* r)
{
  TRITONSERVER_ResponseAllocator* a = NULL;
  TRITONSERVER_ResponseAllocator* b = NULL;
  CONF_CHECK(
      r, TRITONSERVER_ResponseAllocatorNew, "null_out", NULL, conf_alloc_fn,
      conf_release_fn, NULL);
  CONF_CHECK(
      r, TRITONSERVER_ResponseAllocatorNew, "null_alloc_fn", &b, NULL,
      conf_release_fn, NULL);
  CONF_CHECK(
      r, TRITONSERVER_ResponseAllocatorNew, "null_release_fn", &b,
      conf_alloc_fn, NULL, NULL);
  if (!CONF_CHECK(
          r, TRITONSERVER_ResponseAllocatorNew, "scratch", &a, conf_alloc_fn,
          conf_release_fn, NULL)) {
    return;
  }
  CONF_CHECK(
      r, TRITONSERVER_ResponseAllocatorSetQueryFunction, "clear", a, NULL);
  CONF_CHECK(
      r, TRITONSERVER_ResponseAllocatorSetQueryFunction, "null_allocator", NULL,
      conf_query_fn);
  CONF_CHECK(
      r, TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction, "clear", a,
      NULL);
  CONF_CHECK(
      r, TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction,
      "made_up_allocator", (TRITONSERVER_ResponseAllocator*)MADE_UP,
      conf_attributes_fn);
  CONF_CHECK(r, TRITONSERVER_ResponseAllocatorDelete, "scratch", a);
  CONF_CHECK(r, TRITONSERVER_ResponseAllocatorDelete, "twice", a);
  CONF_CHECK(r, TRITONSERVER_ResponseAllocatorDelete, "null_allocator", NULL);
}

/* Id, flags, correlation ids, priority and timeout: set, read back. */
static void
check_request_metadata(conf_report* r, TRITONSERVER_InferenceRequest* q)
{
  const char* s = NULL;
  uint32_t u32 = 0;
  uint64_t u64 = 0;
  if (CONF_CHECK(r, TRITONSERVER_InferenceRequestId, "default", q, &s)) {
    conf_value(r, "inprocess.default_id", "%s", s);
  }
  CONF_CHECK(r, TRITONSERVER_InferenceRequestId, "null_out", q, NULL);
  CONF_CHECK(r, TRITONSERVER_InferenceRequestSetId, "good", q, "peer-1");
  CONF_CHECK(r, TRITONSERVER_InferenceRequestSetId, "null_id", q, NULL);
  if (CONF_CHECK(r, TRITONSERVER_InferenceRequestId, "after_set", q, &s)) {
    conf_value(r, "inprocess.id", "%s", s);
  }
  CONF_CHECK(r, TRITONSERVER_InferenceRequestSetFlags, "good", q, 3);
  if (CONF_CHECK(r, TRITONSERVER_InferenceRequestFlags, "good", q, &u32)) {
    conf_value(r, "inprocess.flags", "%u", u32);
  }
  CONF_CHECK(r, TRITONSERVER_InferenceRequestFlags, "null_out", q, NULL);
  CONF_CHECK(r, TRITONSERVER_InferenceRequestSetFlags, "null_request", NULL, 0);

  if (CONF_CHECK(
          r, TRITONSERVER_InferenceRequestCorrelationId, "default", q, &u64)) {
    conf_value(
        r, "inprocess.default_correlation_id", "%llu", (unsigned long long)u64);
  }
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestCorrelationIdString, "numeric", q, &s);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetCorrelationIdString, "good", q,
      "seq-7");
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetCorrelationIdString, "null_id", q,
      NULL);
  if (CONF_CHECK(
          r, TRITONSERVER_InferenceRequestCorrelationIdString, "good", q, &s)) {
    conf_value(r, "inprocess.correlation_id_string", "%s", s);
  }
  CONF_CHECK(r, TRITONSERVER_InferenceRequestCorrelationId, "string", q, &u64);
  CONF_CHECK(r, TRITONSERVER_InferenceRequestSetCorrelationId, "good", q, 7);
  if (CONF_CHECK(
          r, TRITONSERVER_InferenceRequestCorrelationId, "good", q, &u64)) {
    conf_value(r, "inprocess.correlation_id", "%llu", (unsigned long long)u64);
  }

  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetPriorityUInt64, "large", q,
      (uint64_t)1 << 40);
  if (CONF_CHECK(r, TRITONSERVER_InferenceRequestPriority, "capped", q, &u32)) {
    conf_value(r, "inprocess.priority_capped", "%u", u32);
  }
  CONF_CHECK(r, TRITONSERVER_InferenceRequestSetPriority, "good", q, 2);
  if (CONF_CHECK(
          r, TRITONSERVER_InferenceRequestPriorityUInt64, "good", q, &u64)) {
    conf_value(r, "inprocess.priority", "%llu", (unsigned long long)u64);
  }
  CONF_CHECK(r, TRITONSERVER_InferenceRequestPriority, "null_out", q, NULL);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestPriorityUInt64, "null_out", q, NULL);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetTimeoutMicroseconds, "good", q,
      30000000);
  if (CONF_CHECK(
          r, TRITONSERVER_InferenceRequestTimeoutMicroseconds, "good", q,
          &u64)) {
    conf_value(r, "inprocess.timeout_us", "%llu", (unsigned long long)u64);
  }
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestTimeoutMicroseconds, "null_out", q, NULL);
}

static void
check_request_parameters(conf_report* r, TRITONSERVER_InferenceRequest* q)
{
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetStringParameter, "good", q, "s",
      "text");
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetStringParameter, "null_value", q, "s",
      NULL);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetIntParameter, "good", q, "i", -5);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetIntParameter, "null_key", q, NULL, 1);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetBoolParameter, "good", q, "b", true);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetBoolParameter, "null_request", NULL,
      "b", true);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetDoubleParameter, "good", q, "d", 1.5);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetDoubleParameter, "null_key", q, NULL,
      1.5);
}

void
conf_check_inprocess_api(conf_report* r, TRITONSERVER_Server* server)
{
  check_model_queries(r, server);
  conf_check_model_control(r, server);
  check_allocators(r);
  TRITONSERVER_InferenceRequest* q = NULL;
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestNew, "unknown_model", &q, server,
      "no_such_model", -1);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestNew, "null_out", NULL, server, CONF_PEER,
      -1);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestNew, "null_name", &q, server, NULL, -1);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestNew, "made_up_server", &q,
      (TRITONSERVER_Server*)MADE_UP, CONF_PEER, -1);
  if (!CONF_CHECK(
          r, TRITONSERVER_InferenceRequestNew, "scratch", &q, server, CONF_PEER,
          -1)) {
    return;
  }
  check_request_metadata(r, q);
  check_request_parameters(r, q);
  conf_check_inprocess_tensors(r, q);
  CONF_CHECK(r, TRITONSERVER_InferenceRequestDelete, "scratch", q);
  CONF_CHECK(r, TRITONSERVER_InferenceRequestDelete, "null", NULL);
  CONF_CHECK(r, TRITONSERVER_InferenceRequestDelete, "twice", q);
  const char* id = NULL;
  CONF_CHECK(r, TRITONSERVER_InferenceRequestId, "deleted_request", q, &id);
  CONF_CHECK(
      r, TRITONSERVER_InferenceRequestSetId, "made_up_request",
      (TRITONSERVER_InferenceRequest*)MADE_UP, "x");
}
