/*
 * checks_input.c: the properties and buffers of input DATA, an INT32
 * tensor the Go test splits over several buffers.
 */
#include <stdio.h>
#include <string.h>

#include "conformance.h"

#define MAX_DATA_BYTES 256

static void
check_properties(conf_report* r, TRITONBACKEND_Input* in)
{
  const char* name = NULL;
  TRITONSERVER_DataType dt = TRITONSERVER_TYPE_INVALID;
  const int64_t* shape = NULL;
  uint32_t dims = 0, buffers = 0;
  uint64_t size = 0;
  if (CONF_CHECK(
          r, TRITONBACKEND_InputProperties, "good", in, &name, &dt, &shape,
          &dims, &size, &buffers)) {
    char text[128] = "";
    size_t used = 0;
    for (uint32_t d = 0; d < dims && used < sizeof(text); d++) {
      used += (size_t)snprintf(
          text + used, sizeof(text) - used, "%s%lld", d ? "," : "",
          (long long)shape[d]);
    }
    conf_value(r, "input.DATA.name", "%s", name);
    conf_value(r, "input.DATA.datatype", "%s", TRITONSERVER_DataTypeString(dt));
    conf_value(r, "input.DATA.shape", "%s", text);
    conf_value(r, "input.DATA.byte_size", "%llu", (unsigned long long)size);
    conf_value(r, "input.DATA.buffer_count", "%u", buffers);
  }
  CONF_CHECK(
      r, TRITONBACKEND_InputProperties, "all_out_null", in, NULL, NULL, NULL,
      NULL, NULL, NULL);
  CONF_CHECK(
      r, TRITONBACKEND_InputProperties, "null_input", NULL, &name, &dt, &shape,
      &dims, &size, &buffers);
  if (CONF_CHECK(
          r, TRITONBACKEND_InputPropertiesForHostPolicy, "cpu", in, "cpu",
          &name, &dt, &shape, &dims, &size, &buffers)) {
    conf_value(
        r, "input.DATA.cpu_policy", "%llu/%u", (unsigned long long)size,
        buffers);
  }
  CONF_CHECK(
      r, TRITONBACKEND_InputPropertiesForHostPolicy, "null_policy", in, NULL,
      &name, &dt, &shape, &dims, &size, &buffers);
  CONF_CHECK(
      r, TRITONBACKEND_InputPropertiesForHostPolicy, "null_input", NULL, "cpu",
      &name, &dt, &shape, &dims, &size, &buffers);
}

/* Reads every buffer with TRITONBACKEND_InputBuffer and records the sizes
 * and the INT32 values they hold together. */
static void
check_buffers(conf_report* r, TRITONBACKEND_Input* in, uint32_t count)
{
  unsigned char data[MAX_DATA_BYTES];
  size_t total = 0;
  char sizes[128] = "";
  size_t used = 0;
  for (uint32_t i = 0; i < count; i++) {
    char kase[16];
    const void* base = NULL;
    uint64_t size = 0;
    TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
    int64_t id = 0;
    if (!CONF_CHECK(
            r, TRITONBACKEND_InputBuffer,
            conf_index_case(kase, sizeof(kase), i), in, i, &base, &size, &type,
            &id)) {
      return;
    }
    if (type != TRITONSERVER_MEMORY_CPU &&
        type != TRITONSERVER_MEMORY_CPU_PINNED) {
      conf_value(
          r, "input.DATA.buffer_memory", "%s",
          TRITONSERVER_MemoryTypeString(type));
      return;
    }
    if (used < sizeof(sizes)) {
      used += (size_t)snprintf(
          sizes + used, sizeof(sizes) - used, "%s%llu", i ? "," : "",
          (unsigned long long)size);
    }
    if (total + size <= sizeof(data)) {
      memcpy(data + total, base, size);
    }
    total += size;
  }
  conf_value(r, "input.DATA.buffer_sizes", "%s", sizes);
  char values[256] = "";
  used = 0;
  for (size_t k = 0;
       k + 4 <= total && k + 4 <= sizeof(data) && used < sizeof(values);
       k += 4) {
    int32_t v;
    memcpy(&v, data + k, sizeof(v)); /* little-endian, like the host */
    used += (size_t)snprintf(
        values + used, sizeof(values) - used, "%s%d", k ? "," : "", (int)v);
  }
  conf_value(r, "input.DATA.values", "%s", values);
}

static void
check_buffer_calls(conf_report* r, TRITONBACKEND_Input* in, uint32_t count)
{
  const void* base = NULL;
  uint64_t size = 0;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
  int64_t id = 0;
  CONF_CHECK(
      r, TRITONBACKEND_InputBuffer, "out_of_range", in, count, &base, &size,
      &type, &id);
  CONF_CHECK(
      r, TRITONBACKEND_InputBuffer, "null_out", in, 0, NULL, &size, &type, &id);
  CONF_CHECK(
      r, TRITONBACKEND_InputBuffer, "null_input", NULL, 0, &base, &size, &type,
      &id);
  if (CONF_CHECK(
          r, TRITONBACKEND_InputBufferForHostPolicy, "cpu", in, "cpu", 0, &base,
          &size, &type, &id)) {
    conf_value(
        r, "input.DATA.cpu_policy.buffer0", "%llu", (unsigned long long)size);
  }
  CONF_CHECK(
      r, TRITONBACKEND_InputBufferForHostPolicy, "null_policy", in, NULL, 0,
      &base, &size, &type, &id);
  CONF_CHECK(
      r, TRITONBACKEND_InputBufferForHostPolicy, "out_of_range", in, "cpu",
      count, &base, &size, &type, &id);

  char text[256] = "";
  size_t used = 0;
  TRITONSERVER_BufferAttributes* attrs = NULL;
  for (uint32_t i = 0; i < count; i++) {
    char kase[16];
    size_t bytes = 0;
    if (CONF_CHECK(
            r, TRITONBACKEND_InputBufferAttributes,
            conf_index_case(kase, sizeof(kase), i), in, i, &base, &attrs) &&
        TRITONSERVER_BufferAttributesMemoryType(attrs, &type) == NULL &&
        TRITONSERVER_BufferAttributesMemoryTypeId(attrs, &id) == NULL &&
        TRITONSERVER_BufferAttributesByteSize(attrs, &bytes) == NULL &&
        used < sizeof(text)) {
      used += (size_t)snprintf(
          text + used, sizeof(text) - used, "%s%s/%lld/%zu", i ? "," : "",
          TRITONSERVER_MemoryTypeString(type), (long long)id, bytes);
    }
  }
  conf_value(r, "input.DATA.buffer_attributes", "%s", text);
  CONF_CHECK(
      r, TRITONBACKEND_InputBufferAttributes, "out_of_range", in, count, &base,
      &attrs);
  CONF_CHECK(
      r, TRITONBACKEND_InputBufferAttributes, "null_out", in, 0, &base, NULL);
  CONF_CHECK(
      r, TRITONBACKEND_InputBufferAttributes, "null_input", NULL, 0, &base,
      &attrs);
}

void
conf_check_input(conf_report* report, TRITONBACKEND_Request* request)
{
  TRITONBACKEND_Input* in = NULL;
  uint32_t buffers = 0;
  if (!CONF_CHECK(
          report, TRITONBACKEND_RequestInput, "good", request, "DATA", &in) ||
      TRITONBACKEND_InputProperties(
          in, NULL, NULL, NULL, NULL, NULL, &buffers) != NULL) {
    return;
  }
  check_properties(report, in);
  check_buffers(report, in, buffers);
  check_buffer_calls(report, in, buffers);
}
