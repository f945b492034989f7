/*
 * checks_response.c: responses, their outputs and parameters, response
 * factories and response statistics, on a request the backend owns. The
 * responses built here are deleted, never sent; the outputs use names the
 * model configuration declares, so every good case is good for Triton too.
 */
#include <stdio.h>
#include <string.h>

#include "conformance.h"

void
conf_set_parameters(
    conf_report* r, TRITONBACKEND_Response* resp, const char* kase)
{
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetStringParameter, kase, resp, "p_string",
      "hello");
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetIntParameter, kase, resp, "p_int", -42);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetBoolParameter, kase, resp, "p_bool", true);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetDoubleParameter, kase, resp, "p_double", 2.5);
  /* Longer than the host keeps interned: copied each time. */
  char long_kase[64];
  snprintf(long_kase, sizeof(long_kase), "%s_long", kase);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetStringParameter, long_kase, resp,
      "p_long_name_of_more_than_sixty_four_bytes_0123456789_0123456789_0123",
      "a value of more than sixty-four bytes, 0123456789 0123456789 "
      "0123456789");
  /* Past the text a host may keep beside a response (a few hundred bytes):
   * a parameter whose value alone is longer. */
  char past_kase[64];
  snprintf(past_kase, sizeof(past_kase), "%s_past", kase);
  char past_value[301];
  for (int i = 0; i < 300; i++) past_value[i] = (char)('a' + i % 26);
  past_value[300] = 0;
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetStringParameter, past_kase, resp, "p_past",
      past_value);
}

static void
check_parameter_errors(conf_report* r, TRITONBACKEND_Response* resp)
{
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetStringParameter, "null_name", resp, NULL,
      "x");
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetStringParameter, "null_value", resp, "x",
      NULL);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetStringParameter, "null_response", NULL, "x",
      "x");
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetIntParameter, "null_name", resp, NULL, 1);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetIntParameter, "null_response", NULL, "x", 1);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetBoolParameter, "null_name", resp, NULL, true);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetBoolParameter, "null_response", NULL, "x",
      true);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetDoubleParameter, "null_name", resp, NULL,
      1.0);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSetDoubleParameter, "null_response", NULL, "x",
      1.0);
}

static void
check_output_creation(conf_report* r, TRITONBACKEND_Response* resp)
{
  const int64_t shape[2] = {2, 3};
  TRITONBACKEND_Output* out = NULL;
  CONF_CHECK(
      r, TRITONBACKEND_ResponseOutput, "good", resp, &out, "AUTO_OUT",
      TRITONSERVER_TYPE_INT32, shape, 2);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseOutput, "duplicate_name", resp, &out, "AUTO_OUT",
      TRITONSERVER_TYPE_INT32, shape, 2);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseOutput, "undeclared_name", resp, &out,
      "NOT_IN_CONFIG", TRITONSERVER_TYPE_INT32, shape, 2);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseOutput, "invalid_datatype", resp, &out, "X1",
      TRITONSERVER_TYPE_INVALID, shape, 2);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseOutput, "unknown_datatype", resp, &out, "X2",
      (TRITONSERVER_DataType)99, shape, 2);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseOutput, "null_shape", resp, &out, "X3",
      TRITONSERVER_TYPE_INT32, NULL, 2);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseOutput, "null_name", resp, &out, NULL,
      TRITONSERVER_TYPE_INT32, shape, 2);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseOutput, "null_out", resp, NULL, "X4",
      TRITONSERVER_TYPE_INT32, shape, 2);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseOutput, "null_response", NULL, &out, "X5",
      TRITONSERVER_TYPE_INT32, shape, 2);
}

/* Output buffers and attributes on outputs CHECKS (small), VALUES (large)
 * and the scalar SCALAR of a scratch response. */
static void
check_output_buffers(conf_report* r, TRITONBACKEND_Response* resp)
{
  TRITONBACKEND_Output* small = NULL;
  TRITONBACKEND_Output* large = NULL;
  const int64_t shape[1] = {3};
  if (!CONF_CHECK(
          r, TRITONBACKEND_ResponseOutput, "scalar", resp, &small, "CHECKS",
          TRITONSERVER_TYPE_INT32, NULL, 0) ||
      TRITONBACKEND_ResponseOutput(
          resp, &large, "VALUES", TRITONSERVER_TYPE_BYTES, shape, 1) != NULL) {
    return;
  }
  TRITONSERVER_BufferAttributes* attrs = NULL;
  size_t size = 7;
  if (CONF_CHECK(
          r, TRITONBACKEND_OutputBufferAttributes, "before_buffer", small,
          &attrs) &&
      TRITONSERVER_BufferAttributesByteSize(attrs, &size) == NULL) {
    conf_value(r, "output.attributes_before_buffer.byte_size", "%zu", size);
  }
  void* buffer = NULL;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_GPU; /* preferred: GPU */
  int64_t id = 0;
  if (CONF_CHECK(
          r, TRITONBACKEND_OutputBuffer, "good", small, &buffer, 4, &type,
          &id)) {
    conf_value(
        r, "output.buffer.memory", "%s/%lld",
        TRITONSERVER_MemoryTypeString(type), (long long)id);
    memset(buffer, 0x5a, 4);
  }
  CONF_CHECK(
      r, TRITONBACKEND_OutputBuffer, "second_buffer", small, &buffer, 4, &type,
      &id);
  type = TRITONSERVER_MEMORY_CPU;
  if (CONF_CHECK(
          r, TRITONBACKEND_OutputBuffer, "large", large, &buffer, 100000, &type,
          &id)) {
    memset(buffer, 0x5a, 100000);
  }
  CONF_CHECK(
      r, TRITONBACKEND_OutputBuffer, "null_out", large, NULL, 4, &type, &id);
  CONF_CHECK(
      r, TRITONBACKEND_OutputBuffer, "null_output", NULL, &buffer, 4, &type,
      &id);
  if (CONF_CHECK(
          r, TRITONBACKEND_OutputBufferAttributes, "after_buffer", small,
          &attrs) &&
      TRITONSERVER_BufferAttributesByteSize(attrs, &size) == NULL &&
      TRITONSERVER_BufferAttributesMemoryType(attrs, &type) == NULL &&
      TRITONSERVER_BufferAttributesMemoryTypeId(attrs, &id) == NULL) {
    conf_value(
        r, "output.attributes", "%s/%lld/%zu",
        TRITONSERVER_MemoryTypeString(type), (long long)id, size);
  }
  CONF_CHECK(r, TRITONBACKEND_OutputBufferAttributes, "null_out", small, NULL);
  CONF_CHECK(
      r, TRITONBACKEND_OutputBufferAttributes, "null_output", NULL, &attrs);
}

static void
check_output_lookup(conf_report* r, TRITONBACKEND_Response* resp)
{
  TRITONSERVER_DataType dt = TRITONSERVER_TYPE_INVALID;
  const int64_t* shape = NULL;
  uint64_t dims = 0;
  const char* name = NULL;
  if (CONF_CHECK(
          r, TRITONBACKEND_InferenceResponseOutputByName, "good", resp,
          "AUTO_OUT", &dt, &shape, &dims)) {
    conf_value(
        r, "response.output_by_name.AUTO_OUT", "%s/%llu/%lld,%lld",
        TRITONSERVER_DataTypeString(dt), (unsigned long long)dims,
        (long long)shape[0], (long long)shape[1]);
  }
  CONF_CHECK(
      r, TRITONBACKEND_InferenceResponseOutputByName, "unknown_name", resp,
      "NOPE", &dt, &shape, &dims);
  CONF_CHECK(
      r, TRITONBACKEND_InferenceResponseOutputByName, "null_name", resp, NULL,
      &dt, &shape, &dims);
  CONF_CHECK(
      r, TRITONBACKEND_InferenceResponseOutputByName, "null_response", NULL,
      "AUTO_OUT", &dt, &shape, &dims);
  for (uint32_t i = 0; i < 4; i++) {
    char key[64];
    if (TRITONBACKEND_InferenceResponseOutput(
            resp, i, &name, &dt, &shape, &dims) != NULL) {
      break;
    }
    snprintf(key, sizeof(key), "response.output.%u", i);
    conf_value(
        r, key, "%s/%s/%llu", name, TRITONSERVER_DataTypeString(dt),
        (unsigned long long)dims);
  }
  CONF_CHECK(
      r, TRITONBACKEND_InferenceResponseOutput, "good", resp, 0, &name, &dt,
      &shape, &dims);
  CONF_CHECK(
      r, TRITONBACKEND_InferenceResponseOutput, "out_of_range", resp, 99, &name,
      &dt, &shape, &dims);
  CONF_CHECK(
      r, TRITONBACKEND_InferenceResponseOutput, "null_out", resp, 0, NULL, &dt,
      &shape, &dims);
  CONF_CHECK(
      r, TRITONBACKEND_InferenceResponseOutput, "null_response", NULL, 0, &name,
      &dt, &shape, &dims);
}

void
conf_check_responses(conf_report* r, TRITONBACKEND_Request* req)
{
  TRITONBACKEND_Response* resp = NULL;
  CONF_CHECK(r, TRITONBACKEND_ResponseNew, "null_out", NULL, req);
  CONF_CHECK(r, TRITONBACKEND_ResponseNew, "null_request", &resp, NULL);
  if (!CONF_CHECK(r, TRITONBACKEND_ResponseNew, "good", &resp, req)) {
    return;
  }
  check_output_creation(r, resp);
  check_output_buffers(r, resp);
  check_output_lookup(r, resp);
  conf_set_parameters(r, resp, "scratch");
  check_parameter_errors(r, resp);
  CONF_CHECK(r, TRITONBACKEND_ResponseDelete, "good", resp);
  CONF_CHECK(r, TRITONBACKEND_ResponseDelete, "twice", resp);
  CONF_CHECK(r, TRITONBACKEND_ResponseDelete, "null", NULL);

  /* A send the host refuses still takes the response. */
  if (TRITONBACKEND_ResponseNew(&resp, req) == NULL) {
    CONF_CHECK(r, TRITONBACKEND_ResponseSend, "unknown_flags", resp, 4, NULL);
    CONF_CHECK(r, TRITONBACKEND_ResponseDelete, "after_send", resp);
  }
  CONF_CHECK(
      r, TRITONBACKEND_ResponseSend, "null_response", NULL,
      TRITONSERVER_RESPONSE_COMPLETE_FINAL, NULL);
}

void
conf_check_factory(conf_report* r, TRITONBACKEND_Request* req)
{
  TRITONBACKEND_ResponseFactory* f = NULL;
  CONF_CHECK(r, TRITONBACKEND_ResponseFactoryNew, "null_out", NULL, req);
  CONF_CHECK(r, TRITONBACKEND_ResponseFactoryNew, "null_request", &f, NULL);
  if (!CONF_CHECK(r, TRITONBACKEND_ResponseFactoryNew, "good", &f, req)) {
    return;
  }
  bool cancelled = true;
  if (CONF_CHECK(
          r, TRITONBACKEND_ResponseFactoryIsCancelled, "good", f, &cancelled)) {
    conf_value(r, "factory.is_cancelled", "%s", cancelled ? "true" : "false");
  }
  CONF_CHECK(
      r, TRITONBACKEND_ResponseFactoryIsCancelled, "null_factory", NULL,
      &cancelled);
  CONF_CHECK(r, TRITONBACKEND_ResponseFactoryIsCancelled, "null_out", f, NULL);
  CONF_CHECK(r, TRITONBACKEND_ResponseFactorySendFlags, "no_flags", f, 0);
  CONF_CHECK(r, TRITONBACKEND_ResponseFactorySendFlags, "unknown_flags", f, 4);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseFactorySendFlags, "null_factory", NULL,
      TRITONSERVER_RESPONSE_COMPLETE_FINAL);
  TRITONBACKEND_Response* resp = NULL;
  if (CONF_CHECK(r, TRITONBACKEND_ResponseNewFromFactory, "good", &resp, f)) {
    CONF_CHECK(r, TRITONBACKEND_ResponseDelete, "from_factory", resp);
  }
  CONF_CHECK(r, TRITONBACKEND_ResponseNewFromFactory, "null_out", NULL, f);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseNewFromFactory, "null_factory", &resp, NULL);
  CONF_CHECK(r, TRITONBACKEND_ResponseFactoryDelete, "good", f);
  CONF_CHECK(r, TRITONBACKEND_ResponseFactoryDelete, "twice", f);
  CONF_CHECK(r, TRITONBACKEND_ResponseFactoryDelete, "null", NULL);
  CONF_CHECK(
      r, TRITONBACKEND_ResponseNewFromFactory, "deleted_factory", &resp, f);
}
