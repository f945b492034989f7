package abi_test

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/metrics"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// The codes the metrics test backend reports for the calls in its checks(),
// in order (-1: success).
const (
	codeOK          = -1
	codeInternal    = int32(core.CodeInternal)
	codeInvalidArg  = int32(core.CodeInvalidArg)
	codeUnsupported = int32(core.CodeUnsupported)
)

var wantCodes = []int32{
	codeOK, codeOK, codeOK, codeOK, // this request's Increment, Set, Increment(-1) on the gauge, Observe
	// MetricFamilyNew: NULL family, NULL name, kind 7, bad name, a counter's name as a gauge.
	codeInvalidArg, codeInvalidArg, codeInvalidArg, codeInvalidArg, codeInvalidArg,
	// MetricNew: NULL metric, NULL family, NULL labels, INT label, reserved label name,
	// histogram without args, histogram with unset args, counter with args, histogram labelled "le".
	codeInvalidArg, codeInvalidArg, codeInvalidArg, codeInvalidArg, codeInvalidArg, codeInvalidArg, codeInvalidArg, codeInvalidArg, codeInvalidArg,
	// MetricArgs: descending buckets, SetHistogram(NULL), ArgsNew(NULL).
	codeInvalidArg, codeInvalidArg, codeInvalidArg,
	// Increment(-1) and Increment(NaN) on a counter.
	codeInvalidArg, codeInvalidArg,
	// Set, Observe on a counter; Observe on a gauge; Increment, Set, Value on a histogram.
	codeUnsupported, codeUnsupported, codeUnsupported, codeUnsupported, codeUnsupported, codeUnsupported,
	// Value(NULL out), Increment(NULL), GetMetricKind(NULL metric), GetMetricKind(NULL out).
	codeInvalidArg, codeInvalidArg, codeInvalidArg, codeInvalidArg,
	// GetMetricFamilyKind(NULL family), of the gauge family, and the kind it gave.
	codeInvalidArg, codeOK, codeOK,
	// FamilyDelete of a family with metrics, FamilyDelete(NULL), MetricDelete(NULL), ArgsDelete(NULL).
	codeInternal, codeInvalidArg, codeInvalidArg, codeOK,
	codeOK, codeOK, // another handle of an existing family: new, delete
	codeOK, codeOK, codeOK, // a short-lived gauge series: new, set, delete
	codeOK, codeOK, codeOK, // a repeated label name: new, increment, delete
	codeOK, codeOK, codeOK, // a histogram with existing labels but other buckets: new, observe 0.25, delete
	codeOK, codeOK, // ArgsDelete of the two args
}

func metricsModel(t *testing.T, name string) testenv.Model {
	return testenv.Model{Name: name, Files: []string{fixture(t, "metrics_test", "metrics_backend.c")}, Config: `name: "` + name + `"
backend: "metrics_test"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_FP64 dims: [ -1 ] } ]
output [
  { name: "CODES" data_type: TYPE_INT32 dims: [ -1 ] },
  { name: "VALUES" data_type: TYPE_FP64 dims: [ 5 ] }
]
instance_group [ { count: 1 kind: KIND_CPU } ]
`}
}

func float64s(vs ...float64) []byte {
	b := make([]byte, 8*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return b
}

// metricsResponse sends in to model and returns the CODES and VALUES outputs.
func metricsResponse(t *testing.T, srv *testServer, model string, in ...float64) ([]int32, []float64) {
	t.Helper()
	events := infer(t, srv, &core.Submission{Model: model,
		Inputs: []core.Input{core.NewInput("IN", core.TypeFP64, []int64{int64(len(in))}, float64s(in...))}})
	if len(events) != 1 || events[0].resp == nil || events[0].resp.Err != nil {
		t.Fatalf("want one successful response, got %+v", events)
	}
	var codes []int32
	data := output(t, events[0].resp, "CODES").Data
	for i := 0; i+4 <= len(data); i += 4 {
		codes = append(codes, int32(binary.LittleEndian.Uint32(data[i:])))
	}
	var values []float64
	data = output(t, events[0].resp, "VALUES").Data
	for i := 0; i+8 <= len(data); i += 8 {
		values = append(values, math.Float64frombits(binary.LittleEndian.Uint64(data[i:])))
	}
	return codes, values
}

// checkMetricsReleased adds a check that runs after the server stopped: the
// backend deleted every family and metric, so nothing of them is left, in C,
// in Go or in the registry.
func checkMetricsReleased(t *testing.T, srv *testServer) {
	srv.afterStop = append(srv.afterStop, func() {
		if got := srv.host.LiveMetrics(); !got.Zero() {
			t.Errorf("metric objects after the server stopped: %+v, want none", got)
		}
		for _, f := range srv.host.Metrics().Gather() {
			if strings.HasPrefix(f.Name, "thost_test_") {
				t.Errorf("family %s is still served after its backend deleted it", f.Name)
			}
		}
	})
}

func metricFamily(t *testing.T, srv *testServer, name string) metrics.FamilySnapshot {
	t.Helper()
	for _, f := range srv.host.Metrics().Gather() {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("family %s is not in the registry", name)
	return metrics.FamilySnapshot{}
}

func TestBackendMetricsFollowTritonRules(t *testing.T) {
	t.Parallel()
	srv := startServer(t, testenv.Repository(t, metricsModel(t, "metrics")))
	checkMetricsReleased(t, srv)

	// Each request: counter += in[0] (and += 1 through a handle whose labels
	// repeat a name), gauge = in[1] - 1, histogram observes in[2] (and 0.25
	// through a second handle of the same series).
	for _, tt := range []struct {
		in           []float64
		counter, lvl float64
	}{
		{[]float64{1.5, 10, 0.25}, 2.5, 9},
		{[]float64{2, 4, 1}, 5.5, 3},
		{[]float64{0.5, 7, 3}, 7, 6},
	} {
		codes, values := metricsResponse(t, srv, "metrics", tt.in...)
		if !slices.Equal(codes, wantCodes) {
			for i := range max(len(codes), len(wantCodes)) {
				if i >= len(codes) || i >= len(wantCodes) || codes[i] != wantCodes[i] {
					t.Errorf("call %d: code %v, want %v", i, codeAt(codes, i), codeAt(wantCodes, i))
				}
			}
			t.Fatalf("codes %v\nwant  %v", codes, wantCodes)
		}
		want := []float64{tt.counter, tt.lvl, 0, 1, 2} // counter, gauge, kinds COUNTER, GAUGE, HISTOGRAM
		if !slices.Equal(values, want) {
			t.Errorf("in %v: values %v, want %v", tt.in, values, want)
		}
	}

	// Through the Go registry.
	requests := metricFamily(t, srv, "thost_test_requests")
	if requests.Kind != metrics.KindCounter || len(requests.Series) != 2 ||
		requests.Series[0].Sample.Value != 7 || requests.Series[1].Sample.Value != 2 {
		t.Errorf("thost_test_requests = %+v, want the kind=ok series at 7 and the odd one at 2", requests)
	}
	level := metricFamily(t, srv, "thost_test_level")
	if len(level.Series) != 1 || level.Series[0].Sample.Value != 6 {
		t.Errorf("thost_test_level = %+v, want one series (the deleted one gone) at 6", level)
	}
	latency := metricFamily(t, srv, "thost_test_latency").Series
	if len(latency) != 1 || !slices.Equal(latency[0].Sample.Bounds, []float64{0.5, 1, 2.5}) ||
		!slices.Equal(latency[0].Sample.Counts, []uint64{4, 1, 0, 1}) || latency[0].Sample.Sum != 5 {
		t.Errorf("thost_test_latency = %+v, want bounds [0.5 1 2.5], counts [4 1 0 1], sum 5", latency)
	}
	if !strings.Contains(srv.log.String(), "already exists with buckets [0.5 1 2.5]") {
		t.Error("no warning in the log about the histogram created again with other buckets")
	}
}

func codeAt(s []int32, i int) any {
	if i < len(s) {
		return s[i]
	}
	return "none"
}

func TestBackendMetricsCountExactlyFromManyThreads(t *testing.T) {
	t.Parallel()
	srv := startServer(t, testenv.Repository(t, metricsModel(t, "metrics_threads")))
	checkMetricsReleased(t, srv)
	const threads, each = 8, 50000
	codes, values := metricsResponse(t, srv, "metrics_threads", threads, each)
	if !slices.Equal(codes, []int32{0}) {
		t.Fatalf("failed calls in the threads: %v, want [0]", codes)
	}
	// Half the threads increment through a second handle of the same series.
	if want := float64(threads * each / 2); values[0] != want || values[1] != threads*each {
		t.Errorf("counter %v, gauge %v; want %v and %v", values[0], values[1], want, threads*each)
	}
	latency := metricFamily(t, srv, "thost_test_latency").Series
	// Observations cycle through 0, 0.5, 1, 1.5: buckets le 0.5, le 1, le 2.5.
	n := uint64(threads * each)
	if len(latency) != 1 || !slices.Equal(latency[0].Sample.Counts, []uint64{n / 2, n / 4, n / 4, 0}) ||
		latency[0].Sample.Sum != float64(n)*0.75 {
		t.Errorf("latency = %+v, want counts [%d %d %d 0], sum %v", latency, n/2, n/4, n/4, float64(n)*0.75)
	}
	requests := metricFamily(t, srv, "thost_test_requests")
	if len(requests.Series) != 2 || requests.Series[0].Sample.Value != float64(threads*each/2) {
		t.Errorf("thost_test_requests = %+v", requests)
	}
}
