// Layout of the custom-metric handles (TRITONSERVER_MetricFamily,
// TRITONSERVER_Metric, TRITONSERVER_MetricArgs) and the time series behind
// them. See metrics.c for the API and metrics.go for the Go side.
//
// Memory: all C (malloc). A family handle and a metric handle each hold a
// key into a Go table (metrics.go); the Go side holds the C series pointer.
// No Go pointer is stored here.
//
// Threads: a series is updated from any thread without crossing into Go:
// counter and gauge values are a double's bits updated by compare-and-swap,
// a histogram's counts and sum are guarded by its mutex. Go reads a series
// (thost_series_read) only while the registry holds the series' family
// lock, and frees it only after the registry has dropped it.
#ifndef TRITONHOST_ABI_METRICS_H
#define TRITONHOST_ABI_METRICS_H

#include "handles.h"

enum {
  THOST_MAGIC_METRIC_FAMILY = 0x4d46414d,
  THOST_MAGIC_METRIC = 0x4d545243,
  THOST_MAGIC_METRIC_ARGS = 0x4d415247,
};

struct TRITONSERVER_MetricFamily {
  uint32_t magic;
  TRITONSERVER_MetricKind kind;
  uint64_t key;     // Go family-handle table key
  int64_t metrics;  // atomic: metrics created through this handle, not deleted
};

struct TRITONSERVER_MetricArgs {
  uint32_t magic;
  bool histogram;  // TRITONSERVER_MetricArgsSetHistogram succeeded
  uint64_t bucket_count;
  double* buckets;  // strictly ascending, no NaN, no trailing +Inf
};

// One time series, shared by every metric handle of the same family and
// labels.
struct thost_series {
  TRITONSERVER_MetricKind kind;
  uint64_t value;      // counter, gauge: the double's bits (atomic)
  pthread_mutex_t mu;  // histogram: guards sum and counts
  double sum;
  uint64_t bucket_count;
  double* bounds;    // bucket_count upper bounds
  uint64_t* counts;  // bucket_count + 1 (the last: above every bound)
};

struct TRITONSERVER_Metric {
  uint32_t magic;
  TRITONSERVER_MetricKind kind;
  uint64_t key;  // Go metric-handle table key
  TRITONSERVER_MetricFamily* family;
  struct thost_series* series;
};

// Live-object counters for leak checks (atomic).
enum {
  THOST_METRIC_COUNT_FAMILY,
  THOST_METRIC_COUNT_METRIC,
  THOST_METRIC_COUNT_ARGS,
  THOST_METRIC_COUNT_SERIES,
  THOST_METRIC_COUNT_MAX
};
int64_t thost_metric_live(int which);

// Series, for the Go side. thost_series_new copies the n bounds (NULL on
// out of memory); thost_series_read stores the value (counter, gauge) or the
// sum and the bucket_count+1 counts (histogram; counts may be NULL for the
// other kinds).
struct thost_series* thost_series_new(int kind, const double* bounds, uint64_t n);
void thost_series_free(struct thost_series* s);
void thost_series_read(struct thost_series* s, double* value, double* sum, uint64_t* counts);

#endif  // TRITONHOST_ABI_METRICS_H
