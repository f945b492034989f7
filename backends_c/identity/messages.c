/*
 * messages.c: printf-style logging and error creation for identity.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "identity.h"

/* vsnprintf into a malloc'd buffer; NULL if out of memory. */
static char*
format(const char* fmt, va_list ap)
{
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  if (n < 0) {
    return NULL;
  }
  char* s = malloc((size_t)n + 1);
  if (s != NULL) {
    vsnprintf(s, (size_t)n + 1, fmt, ap);
  }
  return s;
}

void
identity_log(
    TRITONSERVER_LogLevel level, const char* file, int line, const char* fmt,
    ...)
{
  va_list ap;
  va_start(ap, fmt);
  char* msg = format(fmt, ap);
  va_end(ap);
  TRITONSERVER_Error* err = TRITONSERVER_LogMessage(
      level, file, line, (msg != NULL) ? msg : "(out of memory)");
  if (err != NULL) {
    /* The host's log is unusable; stderr is the last place left. */
    fprintf(
        stderr, "%s:%d: %s (logging failed: %s)\n", file, line,
        (msg != NULL) ? msg : fmt, TRITONSERVER_ErrorMessage(err));
    TRITONSERVER_ErrorDelete(err);
  }
  free(msg);
}

TRITONSERVER_Error*
identity_error(TRITONSERVER_Error_Code code, const char* fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char* msg = format(fmt, ap);
  va_end(ap);
  /* TRITONSERVER_ErrorNew copies the message. */
  TRITONSERVER_Error* err =
      TRITONSERVER_ErrorNew(code, (msg != NULL) ? msg : fmt);
  free(msg);
  return err;
}

void
identity_log_if_error(
    TRITONSERVER_Error* err, const char* file, int line, const char* context)
{
  if (err != NULL) {
    identity_log(
        TRITONSERVER_LOG_ERROR, file, line, "%s: %s - %s", context,
        TRITONSERVER_ErrorCodeString(err), TRITONSERVER_ErrorMessage(err));
    TRITONSERVER_ErrorDelete(err);
  }
}

char*
identity_strdup(const char* s)
{
  size_t n = strlen(s) + 1;
  char* d = malloc(n);
  if (d != NULL) {
    memcpy(d, s, n);
  }
  return d;
}
