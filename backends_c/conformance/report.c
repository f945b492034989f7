/*
 * report.c: the lines a conformance check leaves behind, and how they
 * leave the backend (two BYTES output tensors). See conformance.h for the
 * line format.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conformance.h"
#include "error_code_name.h"

/* ---- lines ------------------------------------------------------------- */

static void
lines_init(conf_lines* lines)
{
  pthread_mutex_init(&lines->mu, NULL);
  lines->items = NULL;
  lines->count = 0;
  lines->cap = 0;
}

static void
lines_destroy(conf_lines* lines)
{
  for (size_t i = 0; i < lines->count; i++) {
    free(lines->items[i]);
  }
  free(lines->items);
  pthread_mutex_destroy(&lines->mu);
}

/* Takes ownership of s; a NULL s (out of memory) is dropped. */
static void
lines_push(conf_lines* lines, char* s)
{
  if (s == NULL) {
    return;
  }
  pthread_mutex_lock(&lines->mu);
  if (lines->count == lines->cap) {
    size_t cap = (lines->cap == 0) ? 64 : 2 * lines->cap;
    char** items = realloc(lines->items, cap * sizeof(*items));
    if (items == NULL) {
      pthread_mutex_unlock(&lines->mu);
      free(s);
      return;
    }
    lines->items = items;
    lines->cap = cap;
  }
  lines->items[lines->count++] = s;
  pthread_mutex_unlock(&lines->mu);
}

/* Detaches src's array (under its lock) and pushes each line to dst,
 * copying them unless move is set. */
static void
lines_transfer(conf_lines* dst, conf_lines* src, bool move)
{
  pthread_mutex_lock(&src->mu);
  size_t count = src->count;
  char** items = malloc((count + 1) * sizeof(*items));
  if (items != NULL) {
    for (size_t i = 0; i < count; i++) {
      items[i] = move ? src->items[i] : strdup(src->items[i]);
    }
    if (move) {
      src->count = 0;
    }
  }
  pthread_mutex_unlock(&src->mu);
  if (items == NULL) {
    return;
  }
  for (size_t i = 0; i < count; i++) {
    lines_push(dst, items[i]);
  }
  free(items);
}

static char*
vformat(const char* fmt, va_list ap)
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

static char* format(const char* fmt, ...) CONF_PRINTF(1, 2);

static char*
format(const char* fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char* s = vformat(fmt, ap);
  va_end(ap);
  return s;
}

/* ---- reports ----------------------------------------------------------- */

void
conf_report_init(conf_report* report)
{
  lines_init(&report->checks);
  lines_init(&report->values);
}

void
conf_report_destroy(conf_report* report)
{
  lines_destroy(&report->checks);
  lines_destroy(&report->values);
}

void
conf_report_copy(conf_report* dst, conf_report* src)
{
  lines_transfer(&dst->checks, &src->checks, false);
  lines_transfer(&dst->values, &src->values, false);
}

void
conf_report_move(conf_report* dst, conf_report* src)
{
  lines_transfer(&dst->checks, &src->checks, true);
  lines_transfer(&dst->values, &src->values, true);
}

const char*
conf_code_name(TRITONSERVER_Error_Code code)
{
  return thost_error_code_name(code);
}

bool
conf_check(
    conf_report* report, const char* fn, const char* kase,
    TRITONSERVER_Error* err)
{
  if (err == NULL) {
    conf_result(report, fn, kase, "OK");
    return true;
  }
  conf_result(report, fn, kase, conf_code_name(TRITONSERVER_ErrorCode(err)));
  lines_push(
      &report->values,
      format("error.%s.%s=%s", fn, kase, TRITONSERVER_ErrorMessage(err)));
  TRITONSERVER_ErrorDelete(err);
  return false;
}

void
conf_result(
    conf_report* report, const char* fn, const char* kase, const char* result)
{
  lines_push(&report->checks, format("%s %s %s", fn, kase, result));
}

void
conf_value(conf_report* report, const char* key, const char* fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char* value = vformat(fmt, ap);
  va_end(ap);
  if (value != NULL) {
    lines_push(&report->values, format("%s=%s", key, value));
  }
  free(value);
}

const char*
conf_index_case(char* buf, size_t size, uint32_t i)
{
  snprintf(buf, size, "index_%u", i);
  return buf;
}

const char*
conf_ptr_result(const void* p)
{
  return (p != NULL) ? "OK" : "NULL";
}

uint64_t
conf_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- outputs ----------------------------------------------------------- */

/* Adds output 'name' as a BYTES tensor of shape [count], one element per
 * line (4-byte little-endian length, then the bytes). */
static TRITONSERVER_Error*
add_lines_output(
    TRITONBACKEND_Response* response, const char* name, conf_lines* lines)
{
  pthread_mutex_lock(&lines->mu);
  uint64_t size = 0;
  for (size_t i = 0; i < lines->count; i++) {
    size += 4 + strlen(lines->items[i]);
  }
  const int64_t shape[1] = {(int64_t)lines->count};
  TRITONBACKEND_Output* output = NULL;
  void* buffer = NULL;
  TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
  int64_t memory_type_id = 0;
  TRITONSERVER_Error* err = TRITONBACKEND_ResponseOutput(
      response, &output, name, TRITONSERVER_TYPE_BYTES, shape, 1);
  if (err == NULL) {
    err = TRITONBACKEND_OutputBuffer(
        output, &buffer, size, &memory_type, &memory_type_id);
  }
  if (err == NULL && memory_type == TRITONSERVER_MEMORY_GPU) {
    err = TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INTERNAL,
        "conformance: output buffer in GPU memory");
  }
  unsigned char* p = buffer;
  for (size_t i = 0; err == NULL && i < lines->count; i++) {
    uint32_t n = (uint32_t)strlen(lines->items[i]);
    for (int b = 0; b < 4; b++) {
      *p++ = (unsigned char)(n >> (8 * b));
    }
    memcpy(p, lines->items[i], n);
    p += n;
  }
  pthread_mutex_unlock(&lines->mu);
  return err;
}

TRITONSERVER_Error*
conf_add_report_outputs(TRITONBACKEND_Response* response, conf_report* report)
{
  TRITONSERVER_Error* err =
      add_lines_output(response, "CHECKS", &report->checks);
  if (err == NULL) {
    err = add_lines_output(response, "VALUES", &report->values);
  }
  return err;
}
