// Layout of the custom-metric handles (TRITONSERVER_MetricFamily,
// TRITONSERVER_Metric, TRITONSERVER_MetricArgs) and the time series behind
// them. See metrics.c for the API and metrics.go for the Go side.
//
// Memory: all C (malloc). A family and a metric each hold a key into a Go
// table of their server (metrics.go); the Go side holds the C series
// pointer. No Go pointer is stored here.
//
// Threads: a series is updated from any thread without crossing into Go:
// counter and gauge values are a double's bits updated by compare-and-swap,
// a histogram's counts and sum are guarded by its mutex. Go reads a series
// (thost_series_read) only while the registry holds the series' family
// lock, and frees it only after the registry has dropped it.
#ifndef TRITONHOST_ABI_METRICS_H
#define TRITONHOST_ABI_METRICS_H

#include "objects.h"

struct thost_metric_family {
  uint64_t handle;
  struct thost_host* host;
  TRITONSERVER_MetricKind kind;
  uint64_t key;     // Go family-handle table key
  int64_t metrics;  // atomic: metrics created through this handle, not deleted
};

struct thost_metric_args {
  uint64_t handle;
  struct thost_host* host;  // the one it is counted on
  bool histogram;           // TRITONSERVER_MetricArgsSetHistogram succeeded
  uint64_t bucket_count;
  double* buckets;  // strictly ascending, no NaN, no trailing +Inf
};

// One time series, shared by every metric handle of the same family and
// labels.
struct thost_series {
  struct thost_host* host;
  TRITONSERVER_MetricKind kind;
  uint64_t value;      // counter, gauge: the double's bits (atomic)
  pthread_mutex_t mu;  // histogram: guards sum and counts
  double sum;
  uint64_t bucket_count;
  double* bounds;    // bucket_count upper bounds
  uint64_t* counts;  // bucket_count + 1 (the last: above every bound)
};

struct thost_metric {
  uint64_t handle;
  TRITONSERVER_MetricKind kind;
  uint64_t key;  // Go metric-handle table key
  struct thost_metric_family* family;
  struct thost_series* series;
};

// Series, for the Go side. thost_series_new copies the n bounds (NULL on
// out of memory); thost_series_read stores the value (counter, gauge) or the
// sum and the bucket_count+1 counts (histogram; counts may be NULL for the
// other kinds).
struct thost_series* thost_series_new(
    struct thost_host* host, int kind, const double* bounds, uint64_t n);
void thost_series_free(struct thost_series* s);
void thost_series_read(
    struct thost_series* s, double* value, double* sum, uint64_t* counts);

#endif  // TRITONHOST_ABI_METRICS_H
