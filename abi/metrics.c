// TRITONSERVER_Metric* functions: custom metrics for backends.
//
// Creating and deleting families and metrics crosses into Go once, to
// register them in the Go registry (metrics.go), which serves them. Value,
// Increment, Set and Observe stay in C: they update the series in C memory
// with atomics (counter, gauge) or under the series' mutex (histogram).
//
// The rules and error codes are Triton's (core src/tritonserver.cc,
// src/metric_family.cc), except that invalid handles and NULL pointers are
// refused with INVALID_ARG instead of crashing.
#include "metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"

#define FAMILY(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_METRIC_FAMILY, "metric family")
#define METRIC(var, h) THOST_OBJECT(var, h, THOST_KIND_METRIC, "metric")
#define ARGS(var, h) THOST_OBJECT(var, h, THOST_KIND_METRIC_ARGS, "metric args")

static const char*
thost_metric_kind_name(TRITONSERVER_MetricKind kind)
{
  switch (kind) {
    case TRITONSERVER_METRIC_KIND_COUNTER:
      return "counter";
    case TRITONSERVER_METRIC_KIND_GAUGE:
      return "gauge";
    case TRITONSERVER_METRIC_KIND_HISTOGRAM:
      return "histogram";
  }
  return "<invalid>";
}

// ---- Series ---------------------------------------------------------------

static inline double
thost_bits_double(uint64_t bits)
{
  double d;
  memcpy(&d, &bits, sizeof(d));
  return d;
}

static inline uint64_t
thost_double_bits(double d)
{
  uint64_t bits;
  memcpy(&bits, &d, sizeof(bits));
  return bits;
}

static void
thost_series_add(struct thost_series* s, double delta)
{
  uint64_t old = __atomic_load_n(&s->value, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(
      &s->value, &old, thost_double_bits(thost_bits_double(old) + delta), true,
      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

struct thost_series*
thost_series_new(
    struct thost_host* host, int kind, const double* bounds, uint64_t n)
{
  struct thost_series* s = calloc(1, sizeof(*s));
  if (s == NULL)
    return NULL;
  s->host = host;
  s->kind = (TRITONSERVER_MetricKind)kind;
  if (kind == TRITONSERVER_METRIC_KIND_HISTOGRAM) {
    s->bucket_count = n;
    s->bounds = malloc((n > 0 ? n : 1) * sizeof(double));
    s->counts = calloc(n + 1, sizeof(uint64_t));
    if (s->bounds == NULL || s->counts == NULL) {
      free(s->bounds);
      free(s->counts);
      free(s);
      return NULL;
    }
    if (n > 0)
      memcpy(s->bounds, bounds, n * sizeof(double));
    pthread_mutex_init(&s->mu, NULL);
  }
  thost_count(host, THOST_COUNT_SERIES, 1);
  return s;
}

void
thost_series_free(struct thost_series* s)
{
  if (s == NULL)
    return;
  if (s->kind == TRITONSERVER_METRIC_KIND_HISTOGRAM) {
    pthread_mutex_destroy(&s->mu);
    free(s->bounds);
    free(s->counts);
  }
  thost_count(s->host, THOST_COUNT_SERIES, -1);
  free(s);
}

void
thost_series_read(
    struct thost_series* s, double* value, double* sum, uint64_t* counts)
{
  if (s->kind != TRITONSERVER_METRIC_KIND_HISTOGRAM) {
    *value = thost_bits_double(__atomic_load_n(&s->value, __ATOMIC_RELAXED));
    return;
  }
  pthread_mutex_lock(&s->mu);
  *sum = s->sum;
  memcpy(counts, s->counts, (s->bucket_count + 1) * sizeof(uint64_t));
  pthread_mutex_unlock(&s->mu);
}

// ---- Families -------------------------------------------------------------
// A family is registered with the calling thread's server (its arguments name
// none): the one whose entry point or request the thread works for.

TRITONSERVER_Error*
TRITONSERVER_MetricFamilyNew(
    TRITONSERVER_MetricFamily** family, const TRITONSERVER_MetricKind kind,
    const char* name, const char* description)
{
  THOST_CHECK_ARG(family != NULL, "family is NULL");
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  THOST_CHECK_ARG(description != NULL, "description is NULL");
  if ((unsigned)kind > TRITONSERVER_METRIC_KIND_HISTOGRAM) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG, "%s: unsupported metric kind %d",
        __func__, (int)kind);
  }
  struct thost_host* host = thost_ambient_host();
  if (host == NULL)
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: no server is running", __func__);
  struct thost_metric_family* f = calloc(1, sizeof(*f));
  if (f == NULL)
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", __func__);
  f->handle = thost_handle_new(THOST_KIND_METRIC_FAMILY, f);
  if (f->handle == 0) {
    free(f);
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: out of handles", __func__);
  }
  uint64_t key = 0;
  TRITONSERVER_Error* err = thostMetricFamilyNew(
      host, (int)kind, (char*)name, (char*)description, &key);
  if (err != NULL) {
    thost_handle_free(f->handle);
    free(f);
    return err;
  }
  f->host = host;
  f->kind = kind;
  f->key = key;
  thost_count(host, THOST_COUNT_METRIC_FAMILY, 1);
  *family = THOST_AS_HANDLE(TRITONSERVER_MetricFamily, f->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_MetricFamilyDelete(TRITONSERVER_MetricFamily* family)
{
  struct thost_metric_family* f;
  FAMILY(f, family);
  int64_t live = __atomic_load_n(&f->metrics, __ATOMIC_ACQUIRE);
  if (live > 0) {
    // Triton: INTERNAL, and the family stays.
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL,
        "%s: %lld metric(s) of this family have not been deleted; call "
        "TRITONSERVER_MetricDelete on every metric of a family before deleting "
        "it",
        __func__, (long long)live);
  }
  thostMetricFamilyDelete(f->host, f->key);
  thost_count(f->host, THOST_COUNT_METRIC_FAMILY, -1);
  thost_handle_free(f->handle);
  free(f);
  return NULL;
}

// ---- Arguments ------------------------------------------------------------

TRITONSERVER_Error*
TRITONSERVER_MetricArgsNew(TRITONSERVER_MetricArgs** args)
{
  THOST_CHECK_ARG(args != NULL, "args is NULL");
  struct thost_metric_args* a = calloc(1, sizeof(*a));
  if (a == NULL)
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", __func__);
  a->handle = thost_handle_new(THOST_KIND_METRIC_ARGS, a);
  if (a->handle == 0) {
    free(a);
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: out of handles", __func__);
  }
  a->host = thost_ambient_host();
  thost_count(a->host, THOST_COUNT_METRIC_ARGS, 1);
  *args = THOST_AS_HANDLE(TRITONSERVER_MetricArgs, a->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_MetricArgsSetHistogram(
    TRITONSERVER_MetricArgs* args, const double* buckets,
    const uint64_t buckets_count)
{
  struct thost_metric_args* a;
  ARGS(a, args);
  THOST_CHECK_ARG(buckets != NULL || buckets_count == 0, "buckets is NULL");
  for (uint64_t i = 0; i < buckets_count; i++) {
    if (isnan(buckets[i])) {
      return thost_errorf(
          TRITONSERVER_ERROR_INVALID_ARG, "%s: bucket bound %llu is NaN",
          __func__, (unsigned long long)i);
    }
    if (i > 0 && !(buckets[i] > buckets[i - 1])) {
      return thost_errorf(
          TRITONSERVER_ERROR_INVALID_ARG,
          "%s: bucket bounds must be strictly ascending: bound %llu (%g) is "
          "not above bound %llu (%g)",
          __func__, (unsigned long long)i, buckets[i],
          (unsigned long long)(i - 1), buckets[i - 1]);
    }
  }
  uint64_t n = buckets_count;
  if (n > 0 && isinf(buckets[n - 1]) && buckets[n - 1] > 0)
    n--;  // the +Inf bucket is always there
  double* copy = NULL;
  if (n > 0) {
    copy = malloc(n * sizeof(double));
    if (copy == NULL)
      return thost_errorf(
          TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", __func__);
    memcpy(copy, buckets, n * sizeof(double));
  }
  free(a->buckets);
  a->buckets = copy;
  a->bucket_count = n;
  a->histogram = true;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_MetricArgsDelete(TRITONSERVER_MetricArgs* args)
{
  // NULL is accepted, as Triton (which deletes a null pointer) does: the
  // Python backend deletes the NULL args it used for counters and gauges.
  if (args == NULL)
    return NULL;
  struct thost_metric_args* a;
  ARGS(a, args);
  thost_count(a->host, THOST_COUNT_METRIC_ARGS, -1);
  thost_handle_free(a->handle);
  free(a->buckets);
  free(a);
  return NULL;
}

// ---- Metrics --------------------------------------------------------------

TRITONSERVER_Error*
TRITONSERVER_MetricNew(
    TRITONSERVER_Metric** metric, TRITONSERVER_MetricFamily* family,
    const TRITONSERVER_Parameter** labels, const uint64_t label_count)
{
  return TRITONSERVER_MetricNewWithArgs(
      metric, family, labels, label_count, NULL);
}

TRITONSERVER_Error*
TRITONSERVER_MetricNewWithArgs(
    TRITONSERVER_Metric** metric, TRITONSERVER_MetricFamily* family,
    const TRITONSERVER_Parameter** labels, const uint64_t label_count,
    const TRITONSERVER_MetricArgs* args)
{
  struct thost_metric_family* f;
  struct thost_metric_args* a = NULL;
  THOST_CHECK_ARG(metric != NULL, "metric is NULL");
  FAMILY(f, family);
  THOST_CHECK_ARG(labels != NULL || label_count == 0, "labels is NULL");
  if (args != NULL)
    ARGS(a, args);
  for (uint64_t i = 0; i < label_count; i++) {
    const TRITONSERVER_Parameter* p = labels[i];
    if (p == NULL) {
      return thost_errorf(
          TRITONSERVER_ERROR_INVALID_ARG, "%s: label %llu is NULL", __func__,
          (unsigned long long)i);
    }
    if (p->type != TRITONSERVER_PARAMETER_STRING || p->s == NULL ||
        p->name == NULL) {
      return thost_errorf(
          TRITONSERVER_ERROR_INVALID_ARG,
          "%s: parameter [%s] must have a type of "
          "TRITONSERVER_PARAMETER_STRING to be added as a label",
          __func__, p->name != NULL ? p->name : "");
    }
  }
  switch (f->kind) {
    case TRITONSERVER_METRIC_KIND_COUNTER:
    case TRITONSERVER_METRIC_KIND_GAUGE:
      if (a != NULL) {
        return thost_errorf(
            TRITONSERVER_ERROR_INVALID_ARG,
            "%s: unexpected args for a %s metric", __func__,
            thost_metric_kind_name(f->kind));
      }
      break;
    case TRITONSERVER_METRIC_KIND_HISTOGRAM:
      if (a == NULL) {
        return thost_errorf(
            TRITONSERVER_ERROR_INVALID_ARG,
            "%s: bucket boundaries not found: a histogram metric needs "
            "TRITONSERVER_MetricNewWithArgs with "
            "TRITONSERVER_MetricArgsSetHistogram",
            __func__);
      }
      if (!a->histogram) {
        return thost_errorf(
            TRITONSERVER_ERROR_INVALID_ARG,
            "%s: metric args not set to histogram kind", __func__);
      }
      break;
  }
  struct thost_metric* m = calloc(1, sizeof(*m));
  if (m == NULL)
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", __func__);
  m->handle = thost_handle_new(THOST_KIND_METRIC, m);
  if (m->handle == 0) {
    free(m);
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: out of handles", __func__);
  }
  TRITONSERVER_Error* err = thostMetricNew(
      f->host, f->key, (TRITONSERVER_Parameter**)labels, label_count,
      a != NULL ? a->buckets : NULL, a != NULL ? a->bucket_count : 0, &m->key,
      &m->series);
  if (err != NULL) {
    thost_handle_free(m->handle);
    free(m);
    return err;
  }
  m->kind = f->kind;
  m->family = f;
  __atomic_add_fetch(&f->metrics, 1, __ATOMIC_RELEASE);
  thost_count(f->host, THOST_COUNT_METRIC, 1);
  *metric = THOST_AS_HANDLE(TRITONSERVER_Metric, m->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_MetricDelete(TRITONSERVER_Metric* metric)
{
  struct thost_metric* m;
  METRIC(m, metric);
  TRITONSERVER_Error* err = thostMetricDelete(m->family->host, m->key);
  if (err != NULL)
    return err;
  __atomic_sub_fetch(&m->family->metrics, 1, __ATOMIC_RELEASE);
  thost_count(m->family->host, THOST_COUNT_METRIC, -1);
  thost_handle_free(m->handle);
  free(m);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_GetMetricKind(
    TRITONSERVER_Metric* metric, TRITONSERVER_MetricKind* kind)
{
  struct thost_metric* m;
  METRIC(m, metric);
  THOST_CHECK_ARG(kind != NULL, "kind is NULL");
  *kind = m->kind;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_GetMetricFamilyKind(
    TRITONSERVER_MetricFamily* family, TRITONSERVER_MetricKind* kind)
{
  struct thost_metric_family* f;
  FAMILY(f, family);
  THOST_CHECK_ARG(kind != NULL, "kind is NULL");
  *kind = f->kind;
  return NULL;
}

// ---- Values (never cross into Go) -----------------------------------------

static TRITONSERVER_Error*
thost_metric_unsupported(const char* fn, struct thost_metric* m, const char* op)
{
  return thost_errorf(
      TRITONSERVER_ERROR_UNSUPPORTED, "%s: a %s metric does not support %s", fn,
      thost_metric_kind_name(m->kind), op);
}

TRITONSERVER_Error*
TRITONSERVER_MetricValue(TRITONSERVER_Metric* metric, double* value)
{
  struct thost_metric* m;
  METRIC(m, metric);
  THOST_CHECK_ARG(value != NULL, "value is NULL");
  if (m->kind == TRITONSERVER_METRIC_KIND_HISTOGRAM)
    return thost_metric_unsupported(__func__, m, "Value");
  *value =
      thost_bits_double(__atomic_load_n(&m->series->value, __ATOMIC_RELAXED));
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_MetricIncrement(TRITONSERVER_Metric* metric, double value)
{
  struct thost_metric* m;
  METRIC(m, metric);
  switch (m->kind) {
    case TRITONSERVER_METRIC_KIND_COUNTER:
      if (!(value >= 0.0)) {  // also refuses NaN, which would stick
        return thost_errorf(
            TRITONSERVER_ERROR_INVALID_ARG,
            "%s: a counter can only be incremented monotonically by "
            "non-negative values, not %g",
            __func__, value);
      }
      thost_series_add(m->series, value);
      return NULL;
    case TRITONSERVER_METRIC_KIND_GAUGE:
      thost_series_add(m->series, value);
      return NULL;
    default:
      return thost_metric_unsupported(__func__, m, "Increment");
  }
}

TRITONSERVER_Error*
TRITONSERVER_MetricSet(TRITONSERVER_Metric* metric, double value)
{
  struct thost_metric* m;
  METRIC(m, metric);
  if (m->kind != TRITONSERVER_METRIC_KIND_GAUGE)
    return thost_metric_unsupported(__func__, m, "Set");
  __atomic_store_n(
      &m->series->value, thost_double_bits(value), __ATOMIC_RELAXED);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_MetricObserve(TRITONSERVER_Metric* metric, double value)
{
  struct thost_metric* m;
  METRIC(m, metric);
  if (m->kind != TRITONSERVER_METRIC_KIND_HISTOGRAM)
    return thost_metric_unsupported(__func__, m, "Observe");
  struct thost_series* s = m->series;
  // The first bucket whose bound is not below value (Prometheus' "le");
  // NaN lands in the +Inf bucket, as in prometheus-cpp.
  uint64_t lo = 0, hi = s->bucket_count;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (s->bounds[mid] >= value) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  pthread_mutex_lock(&s->mu);
  s->counts[lo]++;
  s->sum += value;
  pthread_mutex_unlock(&s->mu);
  return NULL;
}
