// TRITONSERVER_* functions that backends call: errors, messages, parameters,
// buffer attributes, type names, API version. All are pure C, thread-safe,
// and never call into Go except for JSON validation and logging.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "handles.h"

int64_t thost_live[THOST_COUNT_MAX];

char* thost_strndup(const char* s, size_t n) {
  char* out = malloc(n + 1);
  if (out == NULL) return NULL;
  memcpy(out, s, n);
  out[n] = '\0';
  return out;
}

// ---- Errors ---------------------------------------------------------------

TRITONSERVER_Error* thost_error_new_n(TRITONSERVER_Error_Code code, const char* msg, size_t len) {
  TRITONSERVER_Error* e = malloc(sizeof(*e) + len + 1);
  if (e == NULL) return NULL;
  e->code = code;
  if (len > 0) memcpy(e->msg, msg, len);
  e->msg[len] = '\0';
  return e;
}

TRITONSERVER_Error* thost_errorf(TRITONSERVER_Error_Code code, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof(buf)) n = sizeof(buf) - 1;
  return thost_error_new_n(code, buf, (size_t)n);
}

TRITONSERVER_Error* TRITONSERVER_ErrorNew(TRITONSERVER_Error_Code code, const char* msg) {
  if (msg == NULL) msg = "";
  return thost_error_new_n(code, msg, strlen(msg));
}

void TRITONSERVER_ErrorDelete(TRITONSERVER_Error* error) { free(error); }

TRITONSERVER_Error_Code TRITONSERVER_ErrorCode(TRITONSERVER_Error* error) {
  return error == NULL ? TRITONSERVER_ERROR_UNKNOWN : error->code;
}

const char* TRITONSERVER_ErrorCodeString(TRITONSERVER_Error* error) {
  if (error == NULL) return "<invalid code>";
  switch (error->code) {
    case TRITONSERVER_ERROR_UNKNOWN: return "Unknown";
    case TRITONSERVER_ERROR_INTERNAL: return "Internal";
    case TRITONSERVER_ERROR_NOT_FOUND: return "Not found";
    case TRITONSERVER_ERROR_INVALID_ARG: return "Invalid argument";
    case TRITONSERVER_ERROR_UNAVAILABLE: return "Unavailable";
    case TRITONSERVER_ERROR_UNSUPPORTED: return "Unsupported";
    case TRITONSERVER_ERROR_ALREADY_EXISTS: return "Already exists";
    case TRITONSERVER_ERROR_CANCELLED: return "Cancelled";
  }
  return "<invalid code>";
}

const char* TRITONSERVER_ErrorMessage(TRITONSERVER_Error* error) {
  return error == NULL ? "" : error->msg;
}

// ---- Messages -------------------------------------------------------------

TRITONSERVER_Message* thost_message_new(const char* json, size_t len, bool host_owned) {
  TRITONSERVER_Message* m = malloc(sizeof(*m) + len + 1);
  if (m == NULL) return NULL;
  m->magic = THOST_MAGIC_MESSAGE;
  m->host_owned = host_owned;
  m->len = len;
  if (len > 0) memcpy(m->json, json, len);
  m->json[len] = '\0';
  if (host_owned) thost_count(THOST_COUNT_HOST_MESSAGE, 1);
  return m;
}

void thost_message_free(TRITONSERVER_Message* msg) {
  if (msg == NULL) return;
  if (msg->host_owned) thost_count(THOST_COUNT_HOST_MESSAGE, -1);
  msg->magic = THOST_MAGIC_DEAD;
  free(msg);
}

TRITONSERVER_Error* TRITONSERVER_MessageNewFromSerializedJson(
    TRITONSERVER_Message** message, const char* base, size_t byte_size) {
  THOST_CHECK_ARG(message != NULL, "message is NULL");
  THOST_CHECK_ARG(base != NULL || byte_size == 0, "base is NULL");
  if (!thostJSONValid((char*)base, byte_size)) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG,
                        "TRITONSERVER_MessageNewFromSerializedJson: %zu bytes are not valid JSON", byte_size);
  }
  *message = thost_message_new(base, byte_size, false);
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_MessageDelete(TRITONSERVER_Message* message) {
  THOST_CHECK_HANDLE(message, THOST_MAGIC_MESSAGE, "message");
  if (message->host_owned) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG,
                        "TRITONSERVER_MessageDelete: this message belongs to the server and must not be deleted");
  }
  thost_message_free(message);
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_MessageSerializeToJson(
    TRITONSERVER_Message* message, const char** base, size_t* byte_size) {
  THOST_CHECK_HANDLE(message, THOST_MAGIC_MESSAGE, "message");
  THOST_CHECK_ARG(base != NULL && byte_size != NULL, "base or byte_size is NULL");
  *base = message->json;
  *byte_size = message->len;
  return NULL;
}

// ---- Parameters -----------------------------------------------------------

TRITONSERVER_Parameter* TRITONSERVER_ParameterNew(
    const char* name, const TRITONSERVER_ParameterType type, const void* value) {
  if (name == NULL || value == NULL) return NULL;
  TRITONSERVER_Parameter* p = calloc(1, sizeof(*p));
  if (p == NULL) return NULL;
  p->type = type;
  switch (type) {
    case TRITONSERVER_PARAMETER_STRING: p->s = strdup((const char*)value); break;
    case TRITONSERVER_PARAMETER_INT: p->i = *(const int64_t*)value; break;
    case TRITONSERVER_PARAMETER_BOOL: p->b = *(const bool*)value; break;
    case TRITONSERVER_PARAMETER_DOUBLE: p->d = *(const double*)value; break;
    default: free(p); return NULL;  // BYTES needs ParameterBytesNew
  }
  p->name = strdup(name);
  return p;
}

TRITONSERVER_Parameter* TRITONSERVER_ParameterBytesNew(
    const char* name, const void* byte_ptr, const uint64_t size) {
  if (name == NULL || (byte_ptr == NULL && size > 0)) return NULL;
  TRITONSERVER_Parameter* p = calloc(1, sizeof(*p));
  if (p == NULL) return NULL;
  p->type = TRITONSERVER_PARAMETER_BYTES;
  p->name = strdup(name);
  p->bytes = (void*)byte_ptr;  // not copied: the caller keeps it alive, as in Triton
  p->byte_size = size;
  return p;
}

void TRITONSERVER_ParameterDelete(TRITONSERVER_Parameter* parameter) {
  if (parameter == NULL) return;
  free(parameter->name);
  free(parameter->s);
  free(parameter);
}

// ---- Buffer attributes ----------------------------------------------------

TRITONSERVER_Error* TRITONSERVER_BufferAttributesNew(TRITONSERVER_BufferAttributes** buffer_attributes) {
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  *buffer_attributes = calloc(1, sizeof(**buffer_attributes));
  return *buffer_attributes == NULL ? thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory") : NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesDelete(TRITONSERVER_BufferAttributes* buffer_attributes) {
  free(buffer_attributes);
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetMemoryTypeId(
    TRITONSERVER_BufferAttributes* buffer_attributes, int64_t memory_type_id) {
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  buffer_attributes->memory_type_id = memory_type_id;
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetMemoryType(
    TRITONSERVER_BufferAttributes* buffer_attributes, TRITONSERVER_MemoryType memory_type) {
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  buffer_attributes->memory_type = memory_type;
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetCudaIpcHandle(
    TRITONSERVER_BufferAttributes* buffer_attributes, void* cuda_ipc_handle) {
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  buffer_attributes->cuda_ipc_handle = cuda_ipc_handle;
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetByteSize(
    TRITONSERVER_BufferAttributes* buffer_attributes, size_t byte_size) {
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  buffer_attributes->byte_size = byte_size;
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesMemoryTypeId(
    TRITONSERVER_BufferAttributes* buffer_attributes, int64_t* memory_type_id) {
  THOST_CHECK_ARG(buffer_attributes != NULL && memory_type_id != NULL, "NULL argument");
  *memory_type_id = buffer_attributes->memory_type_id;
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesMemoryType(
    TRITONSERVER_BufferAttributes* buffer_attributes, TRITONSERVER_MemoryType* memory_type) {
  THOST_CHECK_ARG(buffer_attributes != NULL && memory_type != NULL, "NULL argument");
  *memory_type = buffer_attributes->memory_type;
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesCudaIpcHandle(
    TRITONSERVER_BufferAttributes* buffer_attributes, void** cuda_ipc_handle) {
  THOST_CHECK_ARG(buffer_attributes != NULL && cuda_ipc_handle != NULL, "NULL argument");
  *cuda_ipc_handle = buffer_attributes->cuda_ipc_handle;
  return NULL;
}

TRITONSERVER_Error* TRITONSERVER_BufferAttributesByteSize(
    TRITONSERVER_BufferAttributes* buffer_attributes, size_t* byte_size) {
  THOST_CHECK_ARG(buffer_attributes != NULL && byte_size != NULL, "NULL argument");
  *byte_size = buffer_attributes->byte_size;
  return NULL;
}

// ---- Names and sizes ------------------------------------------------------

static const char* const thost_type_names[] = {
    [TRITONSERVER_TYPE_BOOL] = "BOOL",     [TRITONSERVER_TYPE_UINT8] = "UINT8",
    [TRITONSERVER_TYPE_UINT16] = "UINT16", [TRITONSERVER_TYPE_UINT32] = "UINT32",
    [TRITONSERVER_TYPE_UINT64] = "UINT64", [TRITONSERVER_TYPE_INT8] = "INT8",
    [TRITONSERVER_TYPE_INT16] = "INT16",   [TRITONSERVER_TYPE_INT32] = "INT32",
    [TRITONSERVER_TYPE_INT64] = "INT64",   [TRITONSERVER_TYPE_FP16] = "FP16",
    [TRITONSERVER_TYPE_FP32] = "FP32",     [TRITONSERVER_TYPE_FP64] = "FP64",
    [TRITONSERVER_TYPE_BYTES] = "BYTES",   [TRITONSERVER_TYPE_BF16] = "BF16",
};
#define THOST_TYPE_COUNT (sizeof(thost_type_names) / sizeof(thost_type_names[0]))

const char* TRITONSERVER_DataTypeString(TRITONSERVER_DataType datatype) {
  if ((unsigned)datatype < THOST_TYPE_COUNT && thost_type_names[datatype] != NULL) {
    return thost_type_names[datatype];
  }
  return "<invalid>";
}

TRITONSERVER_DataType TRITONSERVER_StringToDataType(const char* dtype) {
  if (dtype == NULL) return TRITONSERVER_TYPE_INVALID;
  for (unsigned i = 1; i < THOST_TYPE_COUNT; i++) {
    if (thost_type_names[i] != NULL && strcmp(dtype, thost_type_names[i]) == 0) {
      return (TRITONSERVER_DataType)i;
    }
  }
  return TRITONSERVER_TYPE_INVALID;
}

uint32_t TRITONSERVER_DataTypeByteSize(TRITONSERVER_DataType datatype) {
  switch (datatype) {
    case TRITONSERVER_TYPE_BOOL:
    case TRITONSERVER_TYPE_INT8:
    case TRITONSERVER_TYPE_UINT8: return 1;
    case TRITONSERVER_TYPE_INT16:
    case TRITONSERVER_TYPE_UINT16:
    case TRITONSERVER_TYPE_FP16:
    case TRITONSERVER_TYPE_BF16: return 2;
    case TRITONSERVER_TYPE_INT32:
    case TRITONSERVER_TYPE_UINT32:
    case TRITONSERVER_TYPE_FP32: return 4;
    case TRITONSERVER_TYPE_INT64:
    case TRITONSERVER_TYPE_UINT64:
    case TRITONSERVER_TYPE_FP64: return 8;
    default: return 0;
  }
}

const char* TRITONSERVER_MemoryTypeString(TRITONSERVER_MemoryType memtype) {
  switch (memtype) {
    case TRITONSERVER_MEMORY_CPU: return "CPU";
    case TRITONSERVER_MEMORY_CPU_PINNED: return "CPU_PINNED";
    case TRITONSERVER_MEMORY_GPU: return "GPU";
  }
  return "<invalid>";
}

const char* TRITONSERVER_ParameterTypeString(TRITONSERVER_ParameterType paramtype) {
  switch (paramtype) {
    case TRITONSERVER_PARAMETER_STRING: return "STRING";
    case TRITONSERVER_PARAMETER_INT: return "INT";
    case TRITONSERVER_PARAMETER_BOOL: return "BOOL";
    case TRITONSERVER_PARAMETER_DOUBLE: return "DOUBLE";
    case TRITONSERVER_PARAMETER_BYTES: return "BYTES";
  }
  return "<invalid>";
}

const char* TRITONSERVER_InstanceGroupKindString(TRITONSERVER_InstanceGroupKind kind) {
  switch (kind) {
    case TRITONSERVER_INSTANCEGROUPKIND_AUTO: return "AUTO";
    case TRITONSERVER_INSTANCEGROUPKIND_CPU: return "CPU";
    case TRITONSERVER_INSTANCEGROUPKIND_GPU: return "GPU";
    case TRITONSERVER_INSTANCEGROUPKIND_MODEL: return "MODEL";
  }
  return "<invalid>";
}

TRITONSERVER_Error* TRITONSERVER_ApiVersion(uint32_t* major, uint32_t* minor) {
  THOST_CHECK_ARG(major != NULL && minor != NULL, "major or minor is NULL");
  *major = TRITONSERVER_API_VERSION_MAJOR;
  *minor = TRITONSERVER_API_VERSION_MINOR;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_ApiVersion(uint32_t* major, uint32_t* minor) {
  THOST_CHECK_ARG(major != NULL && minor != NULL, "major or minor is NULL");
  *major = TRITONBACKEND_API_VERSION_MAJOR;
  *minor = TRITONBACKEND_API_VERSION_MINOR;
  return NULL;
}

// ---- Logging --------------------------------------------------------------

// Which levels are on, mirrored from the Go logger so that disabled messages
// never cross into Go. Index: TRITONSERVER_LogLevel.
static int thost_log_on[4] = {1, 1, 1, 0};

void thost_log_set_enabled(int level, bool on) {
  if (level >= 0 && level < 4) __atomic_store_n(&thost_log_on[level], on ? 1 : 0, __ATOMIC_RELAXED);
}

bool TRITONSERVER_LogIsEnabled(TRITONSERVER_LogLevel level) {
  if ((unsigned)level >= 4) return false;
  return __atomic_load_n(&thost_log_on[level], __ATOMIC_RELAXED) != 0;
}

TRITONSERVER_Error* TRITONSERVER_LogMessage(
    TRITONSERVER_LogLevel level, const char* filename, const int line, const char* msg) {
  if ((unsigned)level >= 4) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG, "TRITONSERVER_LogMessage: unknown log level %d", (int)level);
  }
  if (!TRITONSERVER_LogIsEnabled(level)) return NULL;
  thostLog((int)level, (char*)(filename ? filename : ""), line, (char*)(msg ? msg : ""));
  return NULL;
}
