// A backend that uses the custom-metrics API. ModelInitialize creates a
// counter, a gauge and a histogram family with labelled metrics; Execute
// updates them from the request's input IN (FP64) and answers with
//
//   CODES  (INT32): the error code of every call in checks() below, in
//                   order, -1 for success (the Go test knows what to expect);
//   VALUES (FP64):  the counter (read through a second handle of the same
//                   series), the gauge, and the kinds of the three metrics.
//
// A model named "metrics_threads" instead updates the metrics from IN[0]
// threads, IN[1] times each, and answers CODES = [number of failed calls].
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "triton/core/tritonbackend.h"

struct state {
  int threaded;
  TRITONSERVER_MetricFamily *counters, *counters_again, *gauges, *histograms;
  TRITONSERVER_Metric *requests, *requests_alias, *odd, *level, *latency;
  char model[128];
};

#define RETURN_IF_ERROR(X)           \
  do {                               \
    TRITONSERVER_Error* err__ = (X); \
    if (err__ != NULL)               \
      return err__;                  \
  } while (0)

static TRITONSERVER_Parameter*
label(const char* name, const char* value)
{
  return TRITONSERVER_ParameterNew(name, TRITONSERVER_PARAMETER_STRING, value);
}

// Creates a metric labelled model=<model> and, if name is set, name=value.
static TRITONSERVER_Error*
metric(
    struct state* st, TRITONSERVER_MetricFamily* family, const char* name,
    const char* value, TRITONSERVER_Metric** out)
{
  const TRITONSERVER_Parameter* labels[2];
  uint64_t n = 0;
  if (name != NULL)
    labels[n++] = label(name, value);  // before model: order does not matter
  labels[n++] = label("model", st->model);
  TRITONSERVER_Error* err;
  TRITONSERVER_MetricKind kind = TRITONSERVER_METRIC_KIND_COUNTER;
  if (family == st->gauges)
    kind = TRITONSERVER_METRIC_KIND_GAUGE;
  if (family == st->histograms)
    kind = TRITONSERVER_METRIC_KIND_HISTOGRAM;
  if (kind == TRITONSERVER_METRIC_KIND_HISTOGRAM) {
    TRITONSERVER_MetricArgs* args;
    err = TRITONSERVER_MetricArgsNew(&args);
    if (err == NULL) {
      const double buckets[4] = {
          0.5, 1, 2.5, INFINITY};  // the +Inf bound is implicit anyway
      err = TRITONSERVER_MetricArgsSetHistogram(args, buckets, 4);
      if (err == NULL)
        err = TRITONSERVER_MetricNewWithArgs(out, family, labels, n, args);
      TRITONSERVER_Error* derr =
          TRITONSERVER_MetricArgsDelete(args);  // the metric keeps its buckets
      if (err == NULL)
        err = derr;
      else if (derr != NULL)
        TRITONSERVER_ErrorDelete(derr);
    }
  } else {
    err = TRITONSERVER_MetricNew(out, family, labels, n);
  }
  for (uint64_t i = 0; i < n; i++)
    TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter*)labels[i]);
  return err;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model)
{
  const char* name;
  RETURN_IF_ERROR(TRITONBACKEND_ModelName(model, &name));
  struct state* st = calloc(1, sizeof(*st));
  strncpy(st->model, name, sizeof(st->model) - 1);
  st->threaded = strcmp(name, "metrics_threads") == 0;
  RETURN_IF_ERROR(TRITONBACKEND_ModelSetState(model, st));

  RETURN_IF_ERROR(TRITONSERVER_MetricFamilyNew(
      &st->counters, TRITONSERVER_METRIC_KIND_COUNTER, "thost_test_requests",
      "Requests seen by the \"metrics\" test backend,\nin two lines with a \\ "
      "backslash."));
  // The same name and kind again: Triton shares the family (and its help).
  RETURN_IF_ERROR(TRITONSERVER_MetricFamilyNew(
      &st->counters_again, TRITONSERVER_METRIC_KIND_COUNTER,
      "thost_test_requests", "ignored"));
  RETURN_IF_ERROR(TRITONSERVER_MetricFamilyNew(
      &st->gauges, TRITONSERVER_METRIC_KIND_GAUGE, "thost_test_level",
      "Last level set."));
  RETURN_IF_ERROR(TRITONSERVER_MetricFamilyNew(
      &st->histograms, TRITONSERVER_METRIC_KIND_HISTOGRAM, "thost_test_latency",
      "Observed latencies."));
  RETURN_IF_ERROR(metric(st, st->counters, "kind", "ok", &st->requests));
  RETURN_IF_ERROR(metric(
      st, st->counters_again, "kind", "ok",
      &st->requests_alias));  // same series
  RETURN_IF_ERROR(metric(
      st, st->counters, "kind", "quote \" backslash \\ newline \n", &st->odd));
  RETURN_IF_ERROR(TRITONSERVER_MetricIncrement(st->odd, 2));
  RETURN_IF_ERROR(metric(st, st->gauges, NULL, NULL, &st->level));
  RETURN_IF_ERROR(metric(st, st->histograms, NULL, NULL, &st->latency));
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model)
{
  void* vstate;
  RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &vstate));
  struct state* st = vstate;
  TRITONSERVER_Metric* metrics[] = {
      st->requests, st->requests_alias, st->odd, st->level, st->latency};
  for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
    RETURN_IF_ERROR(TRITONSERVER_MetricDelete(metrics[i]));
  RETURN_IF_ERROR(TRITONSERVER_MetricFamilyDelete(st->counters));
  RETURN_IF_ERROR(TRITONSERVER_MetricFamilyDelete(st->counters_again));
  RETURN_IF_ERROR(TRITONSERVER_MetricFamilyDelete(st->gauges));
  RETURN_IF_ERROR(TRITONSERVER_MetricFamilyDelete(st->histograms));
  free(st);
  return NULL;
}

// ---- Checks -----------------------------------------------------------------

#define MAX_CODES 64

struct codes {
  int32_t v[MAX_CODES];
  uint32_t n;
};

static void
record(struct codes* c, TRITONSERVER_Error* err)
{
  int32_t code = -1;
  if (err != NULL) {
    code = (int32_t)TRITONSERVER_ErrorCode(err);
    TRITONSERVER_ErrorDelete(err);
  }
  if (c->n < MAX_CODES)
    c->v[c->n++] = code;
}

// Each record() is one entry of CODES; keep in step with wantCodes in
// loader/metrics_test.go.
static void
checks(struct state* st, const double in[3], struct codes* c)
{
  const TRITONSERVER_Parameter* model_label[1] = {label("model", st->model)};
  int64_t i64 = 1;
  const TRITONSERVER_Parameter* int_label[1] = {
      TRITONSERVER_ParameterNew("n", TRITONSERVER_PARAMETER_INT, &i64)};
  const TRITONSERVER_Parameter* reserved_label[1] = {label("__reserved", "x")};
  const TRITONSERVER_Parameter* le_label[1] = {label("le", "1")};
  const TRITONSERVER_Parameter* tmp_labels[2] = {
      label("model", st->model), label("tmp", "yes")};
  // "kind" twice: the last value counts, as in Triton (a std::map).
  const TRITONSERVER_Parameter* dup_labels[3] = {
      label("kind", "first"), label("model", st->model), label("kind", "ok")};
  TRITONSERVER_MetricArgs *unset, *hist;
  TRITONSERVER_MetricArgsNew(&unset);
  TRITONSERVER_MetricArgsNew(&hist);
  const double buckets[2] = {1, 2}, descending[2] = {2, 1};
  TRITONSERVER_MetricArgsSetHistogram(hist, buckets, 2);
  TRITONSERVER_MetricFamily* f = NULL;
  TRITONSERVER_Metric* m = NULL;
  TRITONSERVER_MetricKind kind;
  double v;

  // 0-3: the updates of this request.
  record(c, TRITONSERVER_MetricIncrement(st->requests, in[0]));
  record(c, TRITONSERVER_MetricSet(st->level, in[1]));
  record(c, TRITONSERVER_MetricIncrement(st->level, -1.0));
  record(c, TRITONSERVER_MetricObserve(st->latency, in[2]));
  // 4-8: bad families.
  record(
      c, TRITONSERVER_MetricFamilyNew(
             NULL, TRITONSERVER_METRIC_KIND_COUNTER, "thost_test_x", "x"));
  record(
      c, TRITONSERVER_MetricFamilyNew(
             &f, TRITONSERVER_METRIC_KIND_COUNTER, NULL, "x"));
  record(
      c, TRITONSERVER_MetricFamilyNew(
             &f, (TRITONSERVER_MetricKind)7, "thost_test_x", "x"));
  record(
      c, TRITONSERVER_MetricFamilyNew(
             &f, TRITONSERVER_METRIC_KIND_COUNTER, "bad name", "x"));
  record(
      c, TRITONSERVER_MetricFamilyNew(
             &f, TRITONSERVER_METRIC_KIND_GAUGE, "thost_test_requests", "x"));
  // 9-17: bad metrics.
  record(c, TRITONSERVER_MetricNew(NULL, st->counters, model_label, 1));
  record(c, TRITONSERVER_MetricNew(&m, NULL, model_label, 1));
  record(c, TRITONSERVER_MetricNew(&m, st->counters, NULL, 2));
  record(c, TRITONSERVER_MetricNew(&m, st->counters, int_label, 1));
  record(c, TRITONSERVER_MetricNew(&m, st->counters, reserved_label, 1));
  record(c, TRITONSERVER_MetricNew(&m, st->histograms, model_label, 1));
  record(
      c, TRITONSERVER_MetricNewWithArgs(
             &m, st->histograms, model_label, 1, unset));
  record(
      c,
      TRITONSERVER_MetricNewWithArgs(&m, st->counters, model_label, 1, hist));
  record(
      c, TRITONSERVER_MetricNewWithArgs(&m, st->histograms, le_label, 1, hist));
  // 18-20: bad args.
  record(c, TRITONSERVER_MetricArgsSetHistogram(unset, descending, 2));
  record(c, TRITONSERVER_MetricArgsSetHistogram(NULL, buckets, 2));
  record(c, TRITONSERVER_MetricArgsNew(NULL));
  // 21-32: bad updates and reads.
  record(c, TRITONSERVER_MetricIncrement(st->requests, -1.0));
  record(c, TRITONSERVER_MetricIncrement(st->requests, NAN));
  record(c, TRITONSERVER_MetricSet(st->requests, 1));
  record(c, TRITONSERVER_MetricObserve(st->requests, 1));
  record(c, TRITONSERVER_MetricObserve(st->level, 1));
  record(c, TRITONSERVER_MetricIncrement(st->latency, 1));
  record(c, TRITONSERVER_MetricSet(st->latency, 1));
  record(c, TRITONSERVER_MetricValue(st->latency, &v));
  record(c, TRITONSERVER_MetricValue(st->requests, NULL));
  record(c, TRITONSERVER_MetricIncrement(NULL, 1));
  record(c, TRITONSERVER_GetMetricKind(NULL, &kind));
  record(c, TRITONSERVER_GetMetricKind(st->requests, NULL));
  // 33-35: the kind of a family.
  record(c, TRITONSERVER_GetMetricFamilyKind(NULL, &kind));
  kind = TRITONSERVER_METRIC_KIND_HISTOGRAM;
  record(c, TRITONSERVER_GetMetricFamilyKind(st->gauges, &kind));
  record(
      c, kind == TRITONSERVER_METRIC_KIND_GAUGE
             ? NULL
             : TRITONSERVER_ErrorNew(
                   TRITONSERVER_ERROR_INTERNAL, "wrong family kind"));
  // 36-39: bad deletes.
  record(
      c,
      TRITONSERVER_MetricFamilyDelete(st->counters));  // it still has metrics
  record(c, TRITONSERVER_MetricFamilyDelete(NULL));
  record(c, TRITONSERVER_MetricDelete(NULL));
  record(c, TRITONSERVER_MetricArgsDelete(NULL));  // Triton accepts NULL here
  // 37-38: one more handle of an existing family, deleted again.
  record(
      c, TRITONSERVER_MetricFamilyNew(
             &f, TRITONSERVER_METRIC_KIND_COUNTER, "thost_test_requests", "x"));
  record(c, TRITONSERVER_MetricFamilyDelete(f));
  // 39-41: a short-lived series that must leave the output.
  record(c, TRITONSERVER_MetricNew(&m, st->gauges, tmp_labels, 2));
  record(c, TRITONSERVER_MetricSet(m, 99));
  record(c, TRITONSERVER_MetricDelete(m));
  // 42-44: repeated label name: the series kind="ok", shared with requests.
  record(c, TRITONSERVER_MetricNew(&m, st->counters, dup_labels, 3));
  record(c, TRITONSERVER_MetricIncrement(m, 1));
  record(c, TRITONSERVER_MetricDelete(m));
  // 45-47: a histogram with the labels of an existing one shares it, and
  // its buckets (0.5, 1, 2.5), not these (1, 2).
  record(
      c,
      TRITONSERVER_MetricNewWithArgs(&m, st->histograms, model_label, 1, hist));
  record(c, TRITONSERVER_MetricObserve(m, 0.25));
  record(c, TRITONSERVER_MetricDelete(m));
  // 48-49: arguments.
  record(c, TRITONSERVER_MetricArgsDelete(unset));
  record(c, TRITONSERVER_MetricArgsDelete(hist));

  const TRITONSERVER_Parameter** all[] = {
      model_label, int_label, reserved_label, le_label};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
    TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter*)all[i][0]);
  for (size_t i = 0; i < 2; i++)
    TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter*)tmp_labels[i]);
  for (size_t i = 0; i < 3; i++)
    TRITONSERVER_ParameterDelete((TRITONSERVER_Parameter*)dup_labels[i]);
}

// ---- Threads ----------------------------------------------------------------

struct worker {
  pthread_t thread;
  struct state* st;
  TRITONSERVER_Metric* counter;  // requests or requests_alias: one series
  int64_t iterations;
  int64_t failures;
};

static void
count_failure(struct worker* w, TRITONSERVER_Error* err)
{
  if (err != NULL) {
    w->failures++;
    TRITONSERVER_ErrorDelete(err);
  }
}

static void*
work(void* arg)
{
  struct worker* w = arg;
  for (int64_t i = 0; i < w->iterations; i++) {
    count_failure(w, TRITONSERVER_MetricIncrement(w->counter, 0.5));
    count_failure(w, TRITONSERVER_MetricIncrement(w->st->level, 1));
    count_failure(
        w, TRITONSERVER_MetricObserve(w->st->latency, (double)(i % 4) * 0.5));
  }
  return NULL;
}

static void
run_threads(struct state* st, const double in[2], struct codes* c)
{
  int n = (int)in[0];
  if (n < 1)
    n = 1;
  if (n > 64)
    n = 64;
  struct worker workers[64];
  int32_t failures = 0;
  for (int i = 0; i < n; i++) {
    workers[i] = (struct worker){
        .st = st,
        .counter = (i % 2) ? st->requests_alias : st->requests,
        .iterations = (int64_t)in[1]};
    if (pthread_create(&workers[i].thread, NULL, work, &workers[i]) != 0) {
      failures = -1000;
      n = i;
      break;
    }
  }
  for (int i = 0; i < n; i++) {
    pthread_join(workers[i].thread, NULL);
    failures += (int32_t)workers[i].failures;
  }
  c->v[c->n++] = failures;
}

// ---- Execute ----------------------------------------------------------------

static TRITONSERVER_Error*
add_output(
    TRITONBACKEND_Response* response, const char* name,
    TRITONSERVER_DataType type, const void* data, uint32_t count, uint32_t size)
{
  TRITONBACKEND_Output* output;
  const int64_t shape[1] = {count};
  RETURN_IF_ERROR(
      TRITONBACKEND_ResponseOutput(response, &output, name, type, shape, 1));
  void* buffer;
  TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
  int64_t memory_type_id = 0;
  RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(
      output, &buffer, (uint64_t)count * size, &memory_type, &memory_type_id));
  memcpy(buffer, data, (size_t)count * size);
  return NULL;
}

static TRITONSERVER_Error*
execute_one(
    struct state* st, TRITONBACKEND_Request* request,
    TRITONBACKEND_Response* response)
{
  TRITONBACKEND_Input* input;
  RETURN_IF_ERROR(TRITONBACKEND_RequestInput(request, "IN", &input));
  const void* buffer;
  uint64_t byte_size;
  TRITONSERVER_MemoryType memory_type;
  int64_t memory_type_id;
  RETURN_IF_ERROR(TRITONBACKEND_InputBuffer(
      input, 0, &buffer, &byte_size, &memory_type, &memory_type_id));
  double in[3] = {0, 0, 0};
  memcpy(in, buffer, byte_size < sizeof(in) ? byte_size : sizeof(in));

  struct codes codes = {.n = 0};
  if (st->threaded) {
    run_threads(st, in, &codes);
  } else {
    checks(st, in, &codes);
  }
  double values[5] = {0, 0, -1, -1, -1};
  TRITONSERVER_MetricKind kind;
  RETURN_IF_ERROR(TRITONSERVER_MetricValue(st->requests_alias, &values[0]));
  RETURN_IF_ERROR(TRITONSERVER_MetricValue(st->level, &values[1]));
  TRITONSERVER_Metric* metrics[3] = {st->requests, st->level, st->latency};
  for (int i = 0; i < 3; i++) {
    RETURN_IF_ERROR(TRITONSERVER_GetMetricKind(metrics[i], &kind));
    values[2 + i] = (double)kind;
  }
  RETURN_IF_ERROR(add_output(
      response, "CODES", TRITONSERVER_TYPE_INT32, codes.v, codes.n,
      sizeof(int32_t)));
  return add_output(
      response, "VALUES", TRITONSERVER_TYPE_FP64, values, 5, sizeof(double));
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  TRITONBACKEND_Model* model;
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
  void* vstate;
  RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &vstate));
  struct state* st = vstate;
  for (uint32_t r = 0; r < request_count; r++) {
    TRITONBACKEND_Response* response;
    RETURN_IF_ERROR(TRITONBACKEND_ResponseNew(&response, requests[r]));
    TRITONSERVER_Error* err = execute_one(st, requests[r], response);
    TRITONSERVER_Error* send = TRITONBACKEND_ResponseSend(
        response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err);
    if (err != NULL)
      TRITONSERVER_ErrorDelete(err);
    if (send != NULL)
      TRITONSERVER_ErrorDelete(send);
    RETURN_IF_ERROR(TRITONBACKEND_RequestRelease(
        requests[r], TRITONSERVER_REQUEST_RELEASE_ALL));
  }
  return NULL;
}
