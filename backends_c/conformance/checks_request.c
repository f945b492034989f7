/*
 * checks_request.c: a request and its inputs, inside
 * TRITONBACKEND_ModelInstanceExecute while the backend owns the request.
 * The "main" request of the Go test carries input DATA (INT32, split over
 * several buffers), four parameters, an integer correlation id, flags and a
 * timeout.
 */
#include <stdio.h>
#include <string.h>

#include "conformance.h"

static void
check_header(conf_report* r, TRITONBACKEND_Request* req)
{
  const char* id = NULL;
  if (CONF_CHECK(r, TRITONBACKEND_RequestId, "good", req, &id)) {
    conf_value(r, "request.id", "%s", id != NULL ? id : "(null)");
  }
  CONF_CHECK(r, TRITONBACKEND_RequestId, "null_request", NULL, &id);
  CONF_CHECK(r, TRITONBACKEND_RequestId, "null_out", req, NULL);

  uint64_t timeout = 1;
  if (CONF_CHECK(
          r, TRITONBACKEND_InferenceRequestTimeoutMicroseconds, "good", req,
          &timeout)) {
    conf_value(r, "request.timeout_us", "%llu", (unsigned long long)timeout);
  }
  CONF_CHECK(
      r, TRITONBACKEND_InferenceRequestTimeoutMicroseconds, "null_request",
      NULL, &timeout);
  CONF_CHECK(
      r, TRITONBACKEND_InferenceRequestTimeoutMicroseconds, "null_out", req,
      NULL);

  uint32_t flags = 99;
  if (CONF_CHECK(r, TRITONBACKEND_RequestFlags, "good", req, &flags)) {
    conf_value(r, "request.flags", "%u", flags);
  }
  CONF_CHECK(r, TRITONBACKEND_RequestFlags, "null_request", NULL, &flags);
  CONF_CHECK(r, TRITONBACKEND_RequestFlags, "null_out", req, NULL);

  bool cancelled = true;
  if (CONF_CHECK(
          r, TRITONBACKEND_RequestIsCancelled, "good", req, &cancelled)) {
    conf_value(r, "request.is_cancelled", "%s", cancelled ? "true" : "false");
  }
  CONF_CHECK(
      r, TRITONBACKEND_RequestIsCancelled, "null_request", NULL, &cancelled);
  CONF_CHECK(r, TRITONBACKEND_RequestIsCancelled, "null_out", req, NULL);

  TRITONSERVER_InferenceTrace* trace = NULL;
  if (CONF_CHECK(r, TRITONBACKEND_RequestTrace, "good", req, &trace)) {
    conf_value(r, "request.trace", "%s", trace == NULL ? "null" : "set");
  }
  CONF_CHECK(r, TRITONBACKEND_RequestTrace, "null_request", NULL, &trace);
  CONF_CHECK(r, TRITONBACKEND_RequestTrace, "null_out", req, NULL);
}

void
conf_check_correlation_id(
    conf_report* r, TRITONBACKEND_Request* req, bool is_string)
{
  const char* kase = is_string ? "string_id" : "integer_id";
  uint64_t id = 0;
  const char* sid = NULL;
  if (CONF_CHECK(r, TRITONBACKEND_RequestCorrelationId, kase, req, &id)) {
    conf_value(r, "request.correlation_id", "%llu", (unsigned long long)id);
  }
  if (CONF_CHECK(
          r, TRITONBACKEND_RequestCorrelationIdString, kase, req, &sid)) {
    conf_value(r, "request.correlation_id_string", "%s", sid);
  }
  if (!is_string) {
    CONF_CHECK(
        r, TRITONBACKEND_RequestCorrelationId, "null_request", NULL, &id);
    CONF_CHECK(r, TRITONBACKEND_RequestCorrelationId, "null_out", req, NULL);
    CONF_CHECK(
        r, TRITONBACKEND_RequestCorrelationIdString, "null_request", NULL,
        &sid);
    CONF_CHECK(
        r, TRITONBACKEND_RequestCorrelationIdString, "null_out", req, NULL);
  }
}

static void
check_parameters(conf_report* r, TRITONBACKEND_Request* req)
{
  uint32_t count = 0;
  if (CONF_CHECK(r, TRITONBACKEND_RequestParameterCount, "good", req, &count)) {
    conf_value(r, "request.parameter_count", "%u", count);
  }
  CONF_CHECK(
      r, TRITONBACKEND_RequestParameterCount, "null_request", NULL, &count);
  CONF_CHECK(r, TRITONBACKEND_RequestParameterCount, "null_out", req, NULL);
  const char* key = NULL;
  TRITONSERVER_ParameterType type = TRITONSERVER_PARAMETER_BYTES;
  const void* value = NULL;
  for (uint32_t i = 0; i < count; i++) {
    char kase[16];
    if (!CONF_CHECK(
            r, TRITONBACKEND_RequestParameter,
            conf_index_case(kase, sizeof(kase), i), req, i, &key, &type,
            &value)) {
      continue;
    }
    char name[96];
    snprintf(name, sizeof(name), "request.parameter.%s", key);
    switch (type) {
      case TRITONSERVER_PARAMETER_STRING:
        conf_value(r, name, "STRING:%s", (const char*)value);
        break;
      case TRITONSERVER_PARAMETER_INT:
        conf_value(r, name, "INT:%lld", (long long)*(const int64_t*)value);
        break;
      case TRITONSERVER_PARAMETER_BOOL:
        conf_value(r, name, "BOOL:%s", *(const bool*)value ? "true" : "false");
        break;
      case TRITONSERVER_PARAMETER_DOUBLE:
        conf_value(r, name, "DOUBLE:%g", *(const double*)value);
        break;
      default:
        conf_value(r, name, "%s", TRITONSERVER_ParameterTypeString(type));
    }
  }
  CONF_CHECK(
      r, TRITONBACKEND_RequestParameter, "out_of_range", req, count, &key,
      &type, &value);
  CONF_CHECK(
      r, TRITONBACKEND_RequestParameter, "null_request", NULL, 0, &key, &type,
      &value);
  CONF_CHECK(
      r, TRITONBACKEND_RequestParameter, "null_out", req, 0, &key, NULL,
      &value);
}

static void
check_input_lookup(conf_report* r, TRITONBACKEND_Request* req)
{
  uint32_t count = 0;
  if (CONF_CHECK(r, TRITONBACKEND_RequestInputCount, "good", req, &count)) {
    conf_value(r, "request.input_count", "%u", count);
  }
  CONF_CHECK(r, TRITONBACKEND_RequestInputCount, "null_request", NULL, &count);
  CONF_CHECK(r, TRITONBACKEND_RequestInputCount, "null_out", req, NULL);
  const char* name = NULL;
  TRITONBACKEND_Input* input = NULL;
  for (uint32_t i = 0; i < count; i++) {
    char kase[16];
    char key[64];
    if (CONF_CHECK(
            r, TRITONBACKEND_RequestInputName,
            conf_index_case(kase, sizeof(kase), i), req, i, &name)) {
      snprintf(key, sizeof(key), "request.input.%u", i);
      conf_value(r, key, "%s", name);
    }
    if (CONF_CHECK(
            r, TRITONBACKEND_RequestInputByIndex,
            conf_index_case(kase, sizeof(kase), i), req, i, &input) &&
        TRITONBACKEND_InputProperties(
            input, &name, NULL, NULL, NULL, NULL, NULL) == NULL) {
      snprintf(key, sizeof(key), "request.input_by_index.%u", i);
      conf_value(r, key, "%s", name);
    }
  }
  CONF_CHECK(
      r, TRITONBACKEND_RequestInputName, "out_of_range", req, count, &name);
  CONF_CHECK(r, TRITONBACKEND_RequestInputName, "null_request", NULL, 0, &name);
  CONF_CHECK(r, TRITONBACKEND_RequestInputName, "null_out", req, 0, NULL);
  CONF_CHECK(
      r, TRITONBACKEND_RequestInputByIndex, "out_of_range", req, count, &input);
  CONF_CHECK(
      r, TRITONBACKEND_RequestInputByIndex, "null_request", NULL, 0, &input);
  CONF_CHECK(r, TRITONBACKEND_RequestInputByIndex, "null_out", req, 0, NULL);
  CONF_CHECK(
      r, TRITONBACKEND_RequestInput, "unknown_name", req, "NOPE", &input);
  CONF_CHECK(r, TRITONBACKEND_RequestInput, "null_name", req, NULL, &input);
  CONF_CHECK(
      r, TRITONBACKEND_RequestInput, "null_request", NULL, "DATA", &input);
  CONF_CHECK(r, TRITONBACKEND_RequestInput, "null_out", req, "DATA", NULL);
}

static void
check_outputs_requested(conf_report* r, TRITONBACKEND_Request* req)
{
  uint32_t count = 0;
  if (CONF_CHECK(r, TRITONBACKEND_RequestOutputCount, "good", req, &count)) {
    conf_value(r, "request.output_count", "%u", count);
  }
  CONF_CHECK(r, TRITONBACKEND_RequestOutputCount, "null_request", NULL, &count);
  CONF_CHECK(r, TRITONBACKEND_RequestOutputCount, "null_out", req, NULL);
  const char* name = NULL;
  for (uint32_t i = 0; i < count; i++) {
    char kase[16];
    if (CONF_CHECK(
            r, TRITONBACKEND_RequestOutputName,
            conf_index_case(kase, sizeof(kase), i), req, i, &name)) {
      char key[64];
      snprintf(key, sizeof(key), "request.output.%u", i);
      conf_value(r, key, "%s", name);
    }
  }
  CONF_CHECK(
      r, TRITONBACKEND_RequestOutputName, "out_of_range", req, count, &name);
  CONF_CHECK(
      r, TRITONBACKEND_RequestOutputName, "null_request", NULL, 0, &name);
  CONF_CHECK(r, TRITONBACKEND_RequestOutputName, "null_out", req, 0, NULL);

  size_t size = 16;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_GPU;
  int64_t id = 3;
  if (CONF_CHECK(
          r, TRITONBACKEND_RequestOutputBufferProperties, "good", req, "CHECKS",
          &size, &type, &id)) {
    conf_value(
        r, "request.output_buffer_properties", "%s/%lld",
        TRITONSERVER_MemoryTypeString(type), (long long)id);
  }
  CONF_CHECK(
      r, TRITONBACKEND_RequestOutputBufferProperties, "null_name", req, NULL,
      NULL, &type, &id);
  CONF_CHECK(
      r, TRITONBACKEND_RequestOutputBufferProperties, "null_memory_type", req,
      "CHECKS", &size, NULL, &id);
  CONF_CHECK(
      r, TRITONBACKEND_RequestOutputBufferProperties, "null_request", NULL,
      "CHECKS", &size, &type, &id);
}

void
conf_check_request(conf_report* report, TRITONBACKEND_Request* request)
{
  check_header(report, request);
  conf_check_correlation_id(report, request, false);
  check_parameters(report, request);
  check_input_lookup(report, request);
  conf_check_input(report, request);
  check_outputs_requested(report, request);
}
