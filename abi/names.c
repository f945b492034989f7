// TRITONSERVER_* and TRITONBACKEND_* helpers that need no handle: type
// names and sizes, the API versions, and logging. Pure C except that an
// enabled log message crosses into Go once.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "objects.h"

// ---- Names and sizes ------------------------------------------------------

static const char* const thost_type_names[] = {
    [TRITONSERVER_TYPE_BOOL] = "BOOL",
    [TRITONSERVER_TYPE_UINT8] = "UINT8",
    [TRITONSERVER_TYPE_UINT16] = "UINT16",
    [TRITONSERVER_TYPE_UINT32] = "UINT32",
    [TRITONSERVER_TYPE_UINT64] = "UINT64",
    [TRITONSERVER_TYPE_INT8] = "INT8",
    [TRITONSERVER_TYPE_INT16] = "INT16",
    [TRITONSERVER_TYPE_INT32] = "INT32",
    [TRITONSERVER_TYPE_INT64] = "INT64",
    [TRITONSERVER_TYPE_FP16] = "FP16",
    [TRITONSERVER_TYPE_FP32] = "FP32",
    [TRITONSERVER_TYPE_FP64] = "FP64",
    [TRITONSERVER_TYPE_BYTES] = "BYTES",
    [TRITONSERVER_TYPE_BF16] = "BF16",
};
#define THOST_TYPE_COUNT \
  (sizeof(thost_type_names) / sizeof(thost_type_names[0]))

const char*
TRITONSERVER_DataTypeString(TRITONSERVER_DataType datatype)
{
  if ((unsigned)datatype < THOST_TYPE_COUNT &&
      thost_type_names[datatype] != NULL) {
    return thost_type_names[datatype];
  }
  return "<invalid>";
}

TRITONSERVER_DataType
TRITONSERVER_StringToDataType(const char* dtype)
{
  if (dtype == NULL)
    return TRITONSERVER_TYPE_INVALID;
  for (unsigned i = 1; i < THOST_TYPE_COUNT; i++) {
    if (thost_type_names[i] != NULL &&
        strcmp(dtype, thost_type_names[i]) == 0) {
      return (TRITONSERVER_DataType)i;
    }
  }
  return TRITONSERVER_TYPE_INVALID;
}

uint32_t
TRITONSERVER_DataTypeByteSize(TRITONSERVER_DataType datatype)
{
  switch (datatype) {
    case TRITONSERVER_TYPE_BOOL:
    case TRITONSERVER_TYPE_INT8:
    case TRITONSERVER_TYPE_UINT8:
      return 1;
    case TRITONSERVER_TYPE_INT16:
    case TRITONSERVER_TYPE_UINT16:
    case TRITONSERVER_TYPE_FP16:
    case TRITONSERVER_TYPE_BF16:
      return 2;
    case TRITONSERVER_TYPE_INT32:
    case TRITONSERVER_TYPE_UINT32:
    case TRITONSERVER_TYPE_FP32:
      return 4;
    case TRITONSERVER_TYPE_INT64:
    case TRITONSERVER_TYPE_UINT64:
    case TRITONSERVER_TYPE_FP64:
      return 8;
    default:
      return 0;
  }
}

const char*
TRITONSERVER_MemoryTypeString(TRITONSERVER_MemoryType memtype)
{
  switch (memtype) {
    case TRITONSERVER_MEMORY_CPU:
      return "CPU";
    case TRITONSERVER_MEMORY_CPU_PINNED:
      return "CPU_PINNED";
    case TRITONSERVER_MEMORY_GPU:
      return "GPU";
  }
  return "<invalid>";
}

const char*
TRITONSERVER_ParameterTypeString(TRITONSERVER_ParameterType paramtype)
{
  switch (paramtype) {
    case TRITONSERVER_PARAMETER_STRING:
      return "STRING";
    case TRITONSERVER_PARAMETER_INT:
      return "INT";
    case TRITONSERVER_PARAMETER_BOOL:
      return "BOOL";
    case TRITONSERVER_PARAMETER_DOUBLE:
      return "DOUBLE";
    case TRITONSERVER_PARAMETER_BYTES:
      return "BYTES";
  }
  return "<invalid>";
}

const char*
TRITONSERVER_InstanceGroupKindString(TRITONSERVER_InstanceGroupKind kind)
{
  switch (kind) {
    case TRITONSERVER_INSTANCEGROUPKIND_AUTO:
      return "AUTO";
    case TRITONSERVER_INSTANCEGROUPKIND_CPU:
      return "CPU";
    case TRITONSERVER_INSTANCEGROUPKIND_GPU:
      return "GPU";
    case TRITONSERVER_INSTANCEGROUPKIND_MODEL:
      return "MODEL";
  }
  return "<invalid>";
}

TRITONSERVER_Error*
TRITONSERVER_ApiVersion(uint32_t* major, uint32_t* minor)
{
  THOST_CHECK_ARG(major != NULL && minor != NULL, "major or minor is NULL");
  *major = TRITONSERVER_API_VERSION_MAJOR;
  *minor = TRITONSERVER_API_VERSION_MINOR;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ApiVersion(uint32_t* major, uint32_t* minor)
{
  THOST_CHECK_ARG(major != NULL && minor != NULL, "major or minor is NULL");
  *major = TRITONBACKEND_API_VERSION_MAJOR;
  *minor = TRITONBACKEND_API_VERSION_MINOR;
  return NULL;
}

// ---- Logging --------------------------------------------------------------
// Which levels are on is mirrored from the server's Go logger into its C
// side, so that disabled messages never cross into Go. The server is the
// calling thread's (see thost_ambient_host); with none open, info, warnings
// and errors go to standard error.

bool
TRITONSERVER_LogIsEnabled(TRITONSERVER_LogLevel level)
{
  if ((unsigned)level >= 4)
    return false;
  struct thost_host* h = thost_ambient_host();
  if (h == NULL)
    return level != TRITONSERVER_LOG_VERBOSE;
  return __atomic_load_n(&h->log_on[level], __ATOMIC_RELAXED) != 0;
}

TRITONSERVER_Error*
TRITONSERVER_LogMessage(
    TRITONSERVER_LogLevel level, const char* filename, const int line,
    const char* msg)
{
  if ((unsigned)level >= 4) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "TRITONSERVER_LogMessage: unknown log level %d", (int)level);
  }
  struct thost_host* h = thost_ambient_host();
  if (h == NULL) {
    if (level != TRITONSERVER_LOG_VERBOSE) {
      fprintf(
          stderr, "%s:%d] %s\n", filename ? filename : "", line,
          msg ? msg : "");
    }
    return NULL;
  }
  if (!__atomic_load_n(&h->log_on[level], __ATOMIC_RELAXED))
    return NULL;
  thostLog(
      h, (int)level, (char*)(filename ? filename : ""), line,
      (char*)(msg ? msg : ""));
  return NULL;
}
