/*
 * checks_objects.c: the small objects of the TRITONSERVER_* API a backend
 * creates itself: errors, JSON messages and buffer attributes.
 */
#include <stdio.h>
#include <string.h>

#include "conformance.h"

static void
check_errors(conf_report* r)
{
  char key[64], msg[32];
  for (int code = TRITONSERVER_ERROR_UNKNOWN;
       code <= TRITONSERVER_ERROR_CANCELLED; code++) {
    snprintf(msg, sizeof(msg), "message %d", code);
    TRITONSERVER_Error* e =
        TRITONSERVER_ErrorNew((TRITONSERVER_Error_Code)code, msg);
    if (e == NULL) {
      conf_result(r, "TRITONSERVER_ErrorNew", "every_code", "NULL");
      return;
    }
    snprintf(key, sizeof(key), "ErrorCode.%d", code);
    conf_value(r, key, "%d", (int)TRITONSERVER_ErrorCode(e));
    snprintf(key, sizeof(key), "ErrorCodeString.%d", code);
    conf_value(r, key, "%s", TRITONSERVER_ErrorCodeString(e));
    snprintf(key, sizeof(key), "ErrorMessage.%d", code);
    conf_value(r, key, "%s", TRITONSERVER_ErrorMessage(e));
    TRITONSERVER_ErrorDelete(e);
  }
  conf_result(r, "TRITONSERVER_ErrorNew", "every_code", "OK");
  conf_result(r, "TRITONSERVER_ErrorCode", "every_code", "OK");
  conf_result(r, "TRITONSERVER_ErrorCodeString", "every_code", "OK");
  conf_result(r, "TRITONSERVER_ErrorMessage", "every_code", "OK");
  conf_result(r, "TRITONSERVER_ErrorDelete", "good", "OK");

  TRITONSERVER_Error* e =
      TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNKNOWN, NULL);
  conf_result(r, "TRITONSERVER_ErrorNew", "null_message", conf_ptr_result(e));
  if (e != NULL) {
    conf_value(
        r, "ErrorMessage.null_message", "%s", TRITONSERVER_ErrorMessage(e));
  }
  TRITONSERVER_ErrorDelete(e);
  TRITONSERVER_ErrorDelete(NULL);
  conf_result(r, "TRITONSERVER_ErrorDelete", "null", "OK");
  /* NULL means success, so there is nothing to describe. */
  conf_value(r, "ErrorCode.null", "%d", (int)TRITONSERVER_ErrorCode(NULL));
  conf_value(
      r, "ErrorCodeString.null", "%s", TRITONSERVER_ErrorCodeString(NULL));
  conf_value(r, "ErrorMessage.null", "%s", TRITONSERVER_ErrorMessage(NULL));
  conf_result(r, "TRITONSERVER_ErrorCode", "null", "OK");
  conf_result(r, "TRITONSERVER_ErrorCodeString", "null", "OK");
  conf_result(r, "TRITONSERVER_ErrorMessage", "null", "OK");
}

static void
check_messages(conf_report* r)
{
  static const char json[] = "{\"a\":[1,2],\"b\":\"x\"}";
  TRITONSERVER_Message* m = NULL;
  const char* base = NULL;
  size_t size = 0;
  if (CONF_CHECK(
          r, TRITONSERVER_MessageNewFromSerializedJson, "good", &m, json,
          strlen(json))) {
    if (CONF_CHECK(
            r, TRITONSERVER_MessageSerializeToJson, "good", m, &base, &size)) {
      conf_value(r, "Message.json", "%.*s", (int)size, base);
      conf_value(
          r, "Message.nul_terminated", "%s",
          base[size] == '\0' ? "true" : "false");
    }
    CONF_CHECK(
        r, TRITONSERVER_MessageSerializeToJson, "null_base", m, NULL, &size);
    CONF_CHECK(
        r, TRITONSERVER_MessageSerializeToJson, "null_size", m, &base, NULL);
    CONF_CHECK(r, TRITONSERVER_MessageDelete, "good", m);
  }
  /* Only the first byte_size bytes count: no NUL terminator needed. */
  if (CONF_CHECK(
          r, TRITONSERVER_MessageNewFromSerializedJson, "not_nul_terminated",
          &m, "[1,2]trailing", 5)) {
    if (TRITONSERVER_MessageSerializeToJson(m, &base, &size) == NULL) {
      conf_value(r, "Message.not_nul_terminated", "%.*s", (int)size, base);
    }
    TRITONSERVER_ErrorDelete(TRITONSERVER_MessageDelete(m));
  }
  m = NULL;
  CONF_CHECK(
      r, TRITONSERVER_MessageNewFromSerializedJson, "invalid_json", &m, "{", 1);
  CONF_CHECK(r, TRITONSERVER_MessageNewFromSerializedJson, "empty", &m, "", 0);
  CONF_CHECK(
      r, TRITONSERVER_MessageNewFromSerializedJson, "null_out", NULL, json,
      strlen(json));
  CONF_CHECK(
      r, TRITONSERVER_MessageNewFromSerializedJson, "null_base", &m, NULL, 4);
  CONF_CHECK(
      r, TRITONSERVER_MessageSerializeToJson, "null_message", NULL, &base,
      &size);
  CONF_CHECK(r, TRITONSERVER_MessageDelete, "null", NULL);
}

static void
check_buffer_attributes(conf_report* r)
{
  TRITONSERVER_BufferAttributes* a = NULL;
  CONF_CHECK(r, TRITONSERVER_BufferAttributesNew, "null_out", NULL);
  if (!CONF_CHECK(r, TRITONSERVER_BufferAttributesNew, "good", &a)) {
    return;
  }
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_GPU;
  int64_t id = -1;
  size_t size = 99;
  void* ipc = &size;
  if (CONF_CHECK(r, TRITONSERVER_BufferAttributesMemoryType, "new", a, &type) &&
      CONF_CHECK(r, TRITONSERVER_BufferAttributesMemoryTypeId, "new", a, &id) &&
      CONF_CHECK(r, TRITONSERVER_BufferAttributesByteSize, "new", a, &size) &&
      CONF_CHECK(
          r, TRITONSERVER_BufferAttributesCudaIpcHandle, "new", a, &ipc)) {
    conf_value(
        r, "BufferAttributes.new", "%s/%lld/%zu/%s",
        TRITONSERVER_MemoryTypeString(type), (long long)id, size,
        ipc == NULL ? "null" : "set");
  }
  static int handle; /* stands in for a cudaIpcMemHandle_t */
  CONF_CHECK(
      r, TRITONSERVER_BufferAttributesSetMemoryType, "good", a,
      TRITONSERVER_MEMORY_CPU_PINNED);
  CONF_CHECK(r, TRITONSERVER_BufferAttributesSetMemoryTypeId, "good", a, 3);
  CONF_CHECK(r, TRITONSERVER_BufferAttributesSetByteSize, "good", a, 1234);
  CONF_CHECK(
      r, TRITONSERVER_BufferAttributesSetCudaIpcHandle, "good", a, &handle);
  if (CONF_CHECK(
          r, TRITONSERVER_BufferAttributesMemoryType, "after_set", a, &type) &&
      CONF_CHECK(
          r, TRITONSERVER_BufferAttributesMemoryTypeId, "after_set", a, &id) &&
      CONF_CHECK(
          r, TRITONSERVER_BufferAttributesByteSize, "after_set", a, &size) &&
      CONF_CHECK(
          r, TRITONSERVER_BufferAttributesCudaIpcHandle, "after_set", a,
          &ipc)) {
    conf_value(
        r, "BufferAttributes.after_set", "%s/%lld/%zu/%s",
        TRITONSERVER_MemoryTypeString(type), (long long)id, size,
        ipc == &handle ? "same" : "different");
  }
  CONF_CHECK(
      r, TRITONSERVER_BufferAttributesSetMemoryType, "null_attributes", NULL,
      TRITONSERVER_MEMORY_CPU);
  CONF_CHECK(
      r, TRITONSERVER_BufferAttributesSetMemoryTypeId, "null_attributes", NULL,
      0);
  CONF_CHECK(
      r, TRITONSERVER_BufferAttributesSetByteSize, "null_attributes", NULL, 0);
  CONF_CHECK(
      r, TRITONSERVER_BufferAttributesSetCudaIpcHandle, "null_attributes", NULL,
      NULL);
  CONF_CHECK(
      r, TRITONSERVER_BufferAttributesMemoryType, "null_attributes", NULL,
      &type);
  CONF_CHECK(
      r, TRITONSERVER_BufferAttributesMemoryTypeId, "null_attributes", NULL,
      &id);
  CONF_CHECK(
      r, TRITONSERVER_BufferAttributesByteSize, "null_attributes", NULL, &size);
  CONF_CHECK(
      r, TRITONSERVER_BufferAttributesCudaIpcHandle, "null_attributes", NULL,
      &ipc);
  CONF_CHECK(r, TRITONSERVER_BufferAttributesMemoryType, "null_out", a, NULL);
  CONF_CHECK(r, TRITONSERVER_BufferAttributesMemoryTypeId, "null_out", a, NULL);
  CONF_CHECK(r, TRITONSERVER_BufferAttributesByteSize, "null_out", a, NULL);
  CONF_CHECK(
      r, TRITONSERVER_BufferAttributesCudaIpcHandle, "null_out", a, NULL);
  CONF_CHECK(r, TRITONSERVER_BufferAttributesDelete, "good", a);
  CONF_CHECK(r, TRITONSERVER_BufferAttributesDelete, "null", NULL);
}

void
conf_check_server_objects(conf_report* report)
{
  check_errors(report);
  check_messages(report);
  check_buffer_attributes(report);
}
