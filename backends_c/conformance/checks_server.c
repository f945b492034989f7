/*
 * checks_server.c: the TRITONSERVER_* helpers a backend may call from any
 * entry point: API versions, type names and sizes, parameters and logging
 * (errors, messages and buffer attributes are in checks_objects.c). Run
 * from TRITONBACKEND_Initialize.
 */
#include <stdio.h>
#include <string.h>

#include "conformance.h"

static void
check_api_versions(conf_report* r)
{
  uint32_t major = 0, minor = 0;
  if (CONF_CHECK(r, TRITONSERVER_ApiVersion, "good", &major, &minor)) {
    conf_value(r, "server.api_version", "%u.%u", major, minor);
  }
  CONF_CHECK(r, TRITONSERVER_ApiVersion, "null_major", NULL, &minor);
  CONF_CHECK(r, TRITONSERVER_ApiVersion, "null_minor", &major, NULL);
  if (CONF_CHECK(r, TRITONBACKEND_ApiVersion, "good", &major, &minor)) {
    conf_value(r, "backend.api_version", "%u.%u", major, minor);
  }
  CONF_CHECK(r, TRITONBACKEND_ApiVersion, "null_major", NULL, &minor);
  CONF_CHECK(r, TRITONBACKEND_ApiVersion, "null_minor", &major, NULL);
}

/* Names and sizes of every enum value, and of one past the last. */
static void
check_names(conf_report* r)
{
  char key[64];
  for (int t = TRITONSERVER_TYPE_INVALID; t <= TRITONSERVER_TYPE_BF16 + 1;
       t++) {
    const char* name = TRITONSERVER_DataTypeString((TRITONSERVER_DataType)t);
    snprintf(key, sizeof(key), "DataTypeString.%d", t);
    conf_value(r, key, "%s", name ? name : "(null)");
    snprintf(key, sizeof(key), "DataTypeByteSize.%d", t);
    conf_value(
        r, key, "%u", TRITONSERVER_DataTypeByteSize((TRITONSERVER_DataType)t));
    if (name != NULL) {
      snprintf(key, sizeof(key), "StringToDataType.%s", name);
      conf_value(r, key, "%d", (int)TRITONSERVER_StringToDataType(name));
    }
  }
  conf_result(r, "TRITONSERVER_DataTypeString", "every_type", "OK");
  conf_result(r, "TRITONSERVER_DataTypeByteSize", "every_type", "OK");
  conf_result(r, "TRITONSERVER_StringToDataType", "every_name", "OK");
  conf_value(
      r, "StringToDataType.lowercase", "%d",
      (int)TRITONSERVER_StringToDataType("int32"));
  conf_value(
      r, "StringToDataType.unknown", "%d",
      (int)TRITONSERVER_StringToDataType("NOPE"));
  conf_value(
      r, "StringToDataType.null", "%d",
      (int)TRITONSERVER_StringToDataType(NULL));
  conf_result(r, "TRITONSERVER_StringToDataType", "unknown_name", "OK");
  conf_result(r, "TRITONSERVER_StringToDataType", "null_name", "OK");

  for (int m = 0; m <= TRITONSERVER_MEMORY_GPU + 1; m++) {
    snprintf(key, sizeof(key), "MemoryTypeString.%d", m);
    conf_value(
        r, key, "%s",
        TRITONSERVER_MemoryTypeString((TRITONSERVER_MemoryType)m));
  }
  conf_result(r, "TRITONSERVER_MemoryTypeString", "every_type", "OK");
  for (int p = 0; p <= TRITONSERVER_PARAMETER_BYTES + 1; p++) {
    snprintf(key, sizeof(key), "ParameterTypeString.%d", p);
    conf_value(
        r, key, "%s",
        TRITONSERVER_ParameterTypeString((TRITONSERVER_ParameterType)p));
  }
  conf_result(r, "TRITONSERVER_ParameterTypeString", "every_type", "OK");
  for (int k = 0; k <= TRITONSERVER_INSTANCEGROUPKIND_MODEL + 1; k++) {
    snprintf(key, sizeof(key), "InstanceGroupKindString.%d", k);
    conf_value(
        r, key, "%s",
        TRITONSERVER_InstanceGroupKindString(
            (TRITONSERVER_InstanceGroupKind)k));
  }
  conf_result(r, "TRITONSERVER_InstanceGroupKindString", "every_kind", "OK");
}

/* Creates a parameter, records whether it was created, deletes it. */
static void
try_parameter(
    conf_report* r, const char* kase, const char* name,
    TRITONSERVER_ParameterType type, const void* value)
{
  TRITONSERVER_Parameter* p = TRITONSERVER_ParameterNew(name, type, value);
  conf_result(r, "TRITONSERVER_ParameterNew", kase, conf_ptr_result(p));
  TRITONSERVER_ParameterDelete(p);
}

static void
check_parameters(conf_report* r)
{
  const int64_t i = -7;
  const bool b = true;
  const double d = 0.25;
  const char bytes[3] = {1, 2, 3};
  try_parameter(r, "string", "s", TRITONSERVER_PARAMETER_STRING, "str");
  try_parameter(r, "int", "i", TRITONSERVER_PARAMETER_INT, &i);
  try_parameter(r, "bool", "b", TRITONSERVER_PARAMETER_BOOL, &b);
  try_parameter(r, "double", "d", TRITONSERVER_PARAMETER_DOUBLE, &d);
  try_parameter(r, "bytes_type", "x", TRITONSERVER_PARAMETER_BYTES, bytes);
  try_parameter(r, "unknown_type", "x", (TRITONSERVER_ParameterType)9, &i);
  try_parameter(r, "null_name", NULL, TRITONSERVER_PARAMETER_INT, &i);
  try_parameter(r, "null_value", "x", TRITONSERVER_PARAMETER_INT, NULL);

  TRITONSERVER_Parameter* p = TRITONSERVER_ParameterBytesNew("x", bytes, 3);
  conf_result(r, "TRITONSERVER_ParameterBytesNew", "good", conf_ptr_result(p));
  TRITONSERVER_ParameterDelete(p);
  p = TRITONSERVER_ParameterBytesNew("x", NULL, 0);
  conf_result(r, "TRITONSERVER_ParameterBytesNew", "empty", conf_ptr_result(p));
  TRITONSERVER_ParameterDelete(p);
  p = TRITONSERVER_ParameterBytesNew(NULL, bytes, 3);
  conf_result(
      r, "TRITONSERVER_ParameterBytesNew", "null_name", conf_ptr_result(p));
  TRITONSERVER_ParameterDelete(p);
  p = TRITONSERVER_ParameterBytesNew("x", NULL, 3);
  conf_result(
      r, "TRITONSERVER_ParameterBytesNew", "null_bytes", conf_ptr_result(p));
  TRITONSERVER_ParameterDelete(p);
  conf_result(r, "TRITONSERVER_ParameterDelete", "good", "OK");
  TRITONSERVER_ParameterDelete(NULL);
  conf_result(r, "TRITONSERVER_ParameterDelete", "null", "OK");
}

static void
check_logging(conf_report* r)
{
  char key[64];
  for (int level = 0; level <= TRITONSERVER_LOG_VERBOSE + 1; level++) {
    snprintf(key, sizeof(key), "LogIsEnabled.%d", level);
    conf_value(
        r, key, "%s",
        TRITONSERVER_LogIsEnabled((TRITONSERVER_LogLevel)level) ? "true"
                                                                : "false");
  }
  conf_result(r, "TRITONSERVER_LogIsEnabled", "every_level", "OK");
  conf_result(r, "TRITONSERVER_LogIsEnabled", "unknown_level", "OK");

  const char* file = "conformance_probe.c";
  CONF_CHECK(
      r, TRITONSERVER_LogMessage, "info", TRITONSERVER_LOG_INFO, file, 4201,
      "conformance: info message");
  CONF_CHECK(
      r, TRITONSERVER_LogMessage, "warn", TRITONSERVER_LOG_WARN, file, 4202,
      "conformance: warn message");
  CONF_CHECK(
      r, TRITONSERVER_LogMessage, "error", TRITONSERVER_LOG_ERROR, file, 4203,
      "conformance: error message");
  CONF_CHECK(
      r, TRITONSERVER_LogMessage, "verbose", TRITONSERVER_LOG_VERBOSE, file,
      4204, "conformance: verbose message");
  CONF_CHECK(
      r, TRITONSERVER_LogMessage, "unknown_level", (TRITONSERVER_LogLevel)9,
      file, 4205, "conformance: unknown level");
  CONF_CHECK(
      r, TRITONSERVER_LogMessage, "null_file", TRITONSERVER_LOG_INFO, NULL, 0,
      "conformance: no file");
  CONF_CHECK(
      r, TRITONSERVER_LogMessage, "null_message", TRITONSERVER_LOG_INFO, file,
      4206, NULL);
}

void
conf_check_server_api(conf_report* report)
{
  check_api_versions(report);
  check_names(report);
  check_parameters(report);
  check_logging(report);
  conf_check_server_objects(report);
}
