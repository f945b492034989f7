// TRITONSERVER_* functions that backends call for errors, messages and
// parameters (buffer attributes are in buffer_attributes.c, names, versions
// and logging in names.c). All are pure C and thread-safe; only JSON
// validation crosses into Go.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "objects.h"

char*
thost_strndup(const char* s, size_t n)
{
  char* out = malloc(n + 1);
  if (out == NULL)
    return NULL;
  if (n > 0)
    memcpy(out, s, n);
  out[n] = '\0';
  return out;
}

// ---- Errors ---------------------------------------------------------------

TRITONSERVER_Error*
thost_error_new_n(TRITONSERVER_Error_Code code, const char* msg, size_t len)
{
  TRITONSERVER_Error* e = malloc(sizeof(*e) + len + 1);
  if (e == NULL)
    return NULL;
  e->code = code;
  if (len > 0)
    memcpy(e->msg, msg, len);
  e->msg[len] = '\0';
  return e;
}

TRITONSERVER_Error*
thost_errorf(TRITONSERVER_Error_Code code, const char* fmt, ...)
{
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n < 0)
    n = 0;
  if ((size_t)n >= sizeof(buf))
    n = sizeof(buf) - 1;
  return thost_error_new_n(code, buf, (size_t)n);
}

TRITONSERVER_Error*
TRITONSERVER_ErrorNew(TRITONSERVER_Error_Code code, const char* msg)
{
  if (msg == NULL)
    msg = "";
  return thost_error_new_n(code, msg, strlen(msg));
}

void
TRITONSERVER_ErrorDelete(TRITONSERVER_Error* error)
{
  free(error);
}

TRITONSERVER_Error_Code
TRITONSERVER_ErrorCode(TRITONSERVER_Error* error)
{
  return error == NULL ? TRITONSERVER_ERROR_UNKNOWN : error->code;
}

const char*
TRITONSERVER_ErrorCodeString(TRITONSERVER_Error* error)
{
  if (error == NULL)
    return "<invalid code>";
  switch (error->code) {
    case TRITONSERVER_ERROR_UNKNOWN:
      return "Unknown";
    case TRITONSERVER_ERROR_INTERNAL:
      return "Internal";
    case TRITONSERVER_ERROR_NOT_FOUND:
      return "Not found";
    case TRITONSERVER_ERROR_INVALID_ARG:
      return "Invalid argument";
    case TRITONSERVER_ERROR_UNAVAILABLE:
      return "Unavailable";
    case TRITONSERVER_ERROR_UNSUPPORTED:
      return "Unsupported";
    case TRITONSERVER_ERROR_ALREADY_EXISTS:
      return "Already exists";
    case TRITONSERVER_ERROR_CANCELLED:
      return "Cancelled";
  }
  return "<invalid code>";
}

const char*
TRITONSERVER_ErrorMessage(TRITONSERVER_Error* error)
{
  return error == NULL ? "" : error->msg;
}

// ---- Messages -------------------------------------------------------------

// A message made by the server for a backend to read (owner != NULL: the
// backend config, a host policy; counted on owner and never deleted by the
// backend), or for a backend to own (ModelConfig,
// MessageNewFromSerializedJson).
struct thost_message*
thost_message_new(const char* json, size_t len, struct thost_host* owner)
{
  struct thost_message* m = malloc(sizeof(*m) + len + 1);
  if (m == NULL)
    return NULL;
  m->host = owner;
  m->len = len;
  if (len > 0)
    memcpy(m->json, json, len);
  m->json[len] = '\0';
  m->handle = thost_handle_new(THOST_KIND_MESSAGE, m);
  if (m->handle == 0) {
    free(m);
    return NULL;
  }
  thost_count(owner, THOST_COUNT_HOST_MESSAGE, 1);
  return m;
}

void
thost_message_free(struct thost_message* msg)
{
  if (msg == NULL)
    return;
  thost_count(msg->host, THOST_COUNT_HOST_MESSAGE, -1);
  thost_handle_free(msg->handle);
  free(msg);
}

TRITONSERVER_Error*
TRITONSERVER_MessageNewFromSerializedJson(
    TRITONSERVER_Message** message, const char* base, size_t byte_size)
{
  THOST_CHECK_ARG(message != NULL, "message is NULL");
  THOST_CHECK_ARG(base != NULL || byte_size == 0, "base is NULL");
  if (!thostJSONValid((char*)base, byte_size)) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "TRITONSERVER_MessageNewFromSerializedJson: %zu bytes are not valid "
        "JSON",
        byte_size);
  }
  struct thost_message* m = thost_message_new(base, byte_size, NULL);
  if (m == NULL)
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", __func__);
  *message = THOST_AS_HANDLE(TRITONSERVER_Message, m->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_MessageDelete(TRITONSERVER_Message* message)
{
  if (message == NULL)
    return NULL;  // as deleting a null pointer in Triton
  struct thost_message* m;
  THOST_OBJECT(m, message, THOST_KIND_MESSAGE, "message");
  if (m->host != NULL) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "TRITONSERVER_MessageDelete: this message belongs to the server and "
        "must not be deleted");
  }
  thost_message_free(m);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_MessageSerializeToJson(
    TRITONSERVER_Message* message, const char** base, size_t* byte_size)
{
  struct thost_message* m;
  THOST_OBJECT(m, message, THOST_KIND_MESSAGE, "message");
  THOST_CHECK_ARG(
      base != NULL && byte_size != NULL, "base or byte_size is NULL");
  *base = m->json;
  *byte_size = m->len;
  return NULL;
}

// ---- Parameters -----------------------------------------------------------

TRITONSERVER_Parameter*
TRITONSERVER_ParameterNew(
    const char* name, const TRITONSERVER_ParameterType type, const void* value)
{
  if (name == NULL || value == NULL)
    return NULL;
  TRITONSERVER_Parameter* p = calloc(1, sizeof(*p));
  if (p == NULL)
    return NULL;
  p->type = type;
  switch (type) {
    case TRITONSERVER_PARAMETER_STRING:
      p->s_len = strlen((const char*)value);
      p->s = thost_strndup((const char*)value, p->s_len);
      break;
    case TRITONSERVER_PARAMETER_INT:
      p->i = *(const int64_t*)value;
      break;
    case TRITONSERVER_PARAMETER_BOOL:
      p->b = *(const bool*)value;
      break;
    case TRITONSERVER_PARAMETER_DOUBLE:
      p->d = *(const double*)value;
      break;
    default:
      free(p);
      return NULL;  // BYTES needs ParameterBytesNew
  }
  p->name_len = strlen(name);
  p->name = thost_strndup(name, p->name_len);
  return p;
}

TRITONSERVER_Parameter*
TRITONSERVER_ParameterBytesNew(
    const char* name, const void* byte_ptr, const uint64_t size)
{
  if (name == NULL || (byte_ptr == NULL && size > 0))
    return NULL;
  TRITONSERVER_Parameter* p = calloc(1, sizeof(*p));
  if (p == NULL)
    return NULL;
  p->type = TRITONSERVER_PARAMETER_BYTES;
  p->name_len = strlen(name);
  p->name = thost_strndup(name, p->name_len);
  p->bytes =
      (void*)byte_ptr;  // not copied: the caller keeps it alive, as in Triton
  p->byte_size = size;
  return p;
}

void
TRITONSERVER_ParameterDelete(TRITONSERVER_Parameter* parameter)
{
  if (parameter == NULL)
    return;
  free(parameter->name);
  free(parameter->s);
  free(parameter);
}
