package trace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/internal/trace"
	"github.com/tritonhost/tritonhost/internal/trace/tracetest"
)

// settings renders what the trace extension answers as "name=v1,v2" lines.
func settings(m *trace.Manager, model string) string {
	s, opts := m.Setting(model)
	var out []string
	for _, v := range trace.Response(s, opts) {
		out = append(out, v.Name+"="+strings.Join(v.Values, ","))
	}
	return strings.Join(out, " ")
}

func ptr[T any](v T) *T { return &v }

// TestSettingsUpdateAndClearAsTritonsTraceEndpointTest replays Triton's
// trace_endpoint_test: a model's setting follows the server's in what it
// does not set itself; clearing a field returns it to its fallback.
func TestSettingsUpdateAndClearAsTritonsTraceEndpointTest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := tracetest.NewManager(t, trace.Options{Setting: tracetest.UnittestSetting(dir)})
	file := filepath.Join(dir, "global_unittest.log")
	initial := "trace_level=TIMESTAMPS trace_rate=1 trace_count=-1 log_frequency=0 trace_file=" + file + " trace_mode=triton"
	for _, model := range []string{"", "simple"} {
		if got := settings(m, model); got != initial {
			t.Fatalf("initial %q: %s\nwant %s", model, got, initial)
		}
	}
	// test_http_update_settings
	if err := m.Update("", trace.Update{Level: ptr(core.TraceLevelTimestamps | core.TraceLevelTensors)}); err != nil {
		t.Fatal(err)
	}
	both := strings.Replace(initial, "trace_level=TIMESTAMPS", "trace_level=TIMESTAMPS,TENSORS", 1)
	if got := settings(m, "simple"); got != both {
		t.Errorf("model after the global update: %s\nwant %s", got, both)
	}
	if err := m.Update("", trace.Update{ClearLevel: true}); err != nil {
		t.Fatal(err)
	}
	// test_http_clear_settings
	if err := m.Update("simple", trace.Update{Rate: ptr[uint32](12), LogFrequency: ptr[uint32](34)}); err != nil {
		t.Fatal(err)
	}
	if err := m.Update("", trace.Update{Rate: ptr[uint32](56), Count: ptr[int32](78), Level: ptr(core.TraceLevelDisabled)}); err != nil {
		t.Fatal(err)
	}
	if err := m.Update("", trace.Update{ClearRate: true, ClearCount: true}); err != nil {
		t.Fatal(err)
	}
	off := strings.Replace(initial, "trace_level=TIMESTAMPS", "trace_level=OFF", 1)
	for _, c := range []struct{ model, want string }{
		{"", off},
		{"simple", strings.NewReplacer("trace_rate=1", "trace_rate=12", "log_frequency=0", "log_frequency=34").Replace(off)},
	} {
		if got := settings(m, c.model); got != c.want {
			t.Errorf("after the global clear, %q: %s\nwant %s", c.model, got, c.want)
		}
	}
	if err := m.Update("simple", trace.Update{ClearRate: true, ClearLevel: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := settings(m, "simple"), strings.Replace(off, "log_frequency=0", "log_frequency=34", 1); got != want {
		t.Errorf("after the model clear: %s\nwant %s", got, want)
	}
	if got := settings(m, ""); got != off {
		t.Errorf("global after the model clear: %s\nwant %s", got, off)
	}
	// A setting that would trace nothing for another reason than OFF.
	err := m.Update("", trace.Update{Level: ptr(core.TraceLevelTimestamps), Rate: ptr[uint32](0)})
	coretest.WantError(t, "rate 0", err, core.CodeInvalidArg, "Attempting to set invalid trace setting :sample rate must be non-zero")
}

// TestParseUpdateSpeaksTritonsWords: the texts and codes of each refusal,
// and the one space gRPC's count message has more than HTTP's.
func TestParseUpdateSpeaksTritonsWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		settings map[string][]string
		p        trace.Protocol
		code     core.Code
		text     string
	}{
		{map[string][]string{"trace_file": {"x"}}, trace.HTTP, core.CodeUnsupported, "trace file location can not be updated through network protocol"},
		{map[string][]string{"trace_level": {"OFF", "TIMESTAMPS"}}, trace.GRPC, core.CodeInvalidArg, "Expect only one trace level 'OFF' is specified"},
		{map[string][]string{"trace_rate": {"x"}}, trace.HTTP, core.CodeInvalidArg, "Unable to parse 'trace_rate', got: x"},
		{map[string][]string{"trace_rate": {"99999999999"}}, trace.GRPC, core.CodeInvalidArg, "Unable to parse 'trace_rate', value is out of range [ 0, 4294967295 ], got: 99999999999"},
		{map[string][]string{"trace_count": {"-2"}}, trace.HTTP, core.CodeInvalidArg, "Unable to parse 'trace_count'. Expecting value >= -1, got:-2"},
		{map[string][]string{"trace_count": {"-2"}}, trace.GRPC, core.CodeInvalidArg, "Unable to parse 'trace_count'. Expecting value >= -1, got: -2"},
		{map[string][]string{"trace_count": {"3000000000"}}, trace.GRPC, core.CodeInvalidArg, "Unable to parse 'trace_count', value is out of range [ -1, 2147483647 ], got: 3000000000"},
		{map[string][]string{"log_frequency": {"1", "2"}}, trace.GRPC, core.CodeInvalidArg, "expect only 1 value for 'log_frequency'"},
	} {
		_, err := trace.ParseUpdate(tc.settings, tc.p)
		coretest.WantError(t, fmt.Sprint(tc.settings), err, tc.code, tc.text)
		if err != nil && err.Error() != tc.text {
			t.Errorf("%v: %q, want exactly %q", tc.settings, err, tc.text)
		}
	}
	u, err := trace.ParseUpdate(map[string][]string{"trace_rate": {"12abc"}, "trace_level": {"TENSORS", "BOGUS"}, "trace_count": nil}, trace.HTTP)
	if err != nil || *u.Rate != 12 || *u.Level != core.TraceLevelTensors || !u.ClearCount {
		t.Errorf("std::stoi reads leading digits, unknown levels are ignored, nil clears: %+v, %v", u, err)
	}
}

// serveTraced serves an echo model "m" traced by m.
func serveTraced(t *testing.T, m *trace.Manager) *core.Server {
	p := coretest.NewProvider().Set("m", coretest.Echo())
	return coretest.Serve(t, core.Options{Backends: p, Tracer: m}, coretest.ModelDir{Name: "m", Config: coretest.VectorConfig("")})
}

func run(t *testing.T, srv *core.Server, n int) {
	t.Helper()
	for i := range n {
		coretest.Succeeded(t, coretest.Infer(t, srv, coretest.Request("m", fmt.Sprint("r", i), coretest.Int32Input("INPUT0", []int64{2}, 7, 8))))
	}
	testenv.WaitUntil(t, "the requests to finish", func() bool { return srv.LiveRequests() == 0 })
}

// TestTraceFileIsRotatedByLogFrequency: with log_frequency 2, every two
// traces go to <file>.<n>, each a JSON array as Triton writes it; the last
// odd trace is written when the manager closes.
func TestTraceFileIsRotatedByLogFrequency(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := tracetest.UnittestSetting(dir)
	s.LogFrequency = 2
	m, err := trace.New(trace.Options{Setting: s})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveTraced(t, m)
	run(t, srv, 5)
	file := filepath.Join(dir, "global_unittest.log")
	testenv.WaitUntil(t, "two indexed files", func() bool {
		_, err := os.Stat(file + ".1")
		return err == nil
	})
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ids []float64
	for i, want := range []int{2, 2, 1} {
		objs := tracetest.ReadFile(t, fmt.Sprintf("%s.%d", file, i))
		traces := 0
		for _, o := range objs {
			if o["model_name"] == "m" {
				traces++
				ids = append(ids, o["id"].(float64))
				if o["model_version"] != 1.0 || !strings.HasPrefix(o["request_id"].(string), "r") || o["parent_id"] != nil {
					t.Errorf("trace header %v", o)
				}
			}
		}
		if traces != want {
			t.Errorf("%s.%d holds %d traces, want %d: %v", file, i, traces, want, objs)
		}
	}
	if _, err := os.Stat(file); err == nil {
		t.Errorf("%s was written, though every trace went to an indexed file", file)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(ids)))) != 5 {
		t.Errorf("trace ids %v, want 5 different", ids)
	}
}

// TestTraceFileHoldsTimestampsAndTensors: with log_frequency 0 the traces
// go to the file itself, one object for the trace, one per timestamp and,
// at TENSORS, one per tensor.
func TestTraceFileHoldsTimestampsAndTensors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := tracetest.UnittestSetting(dir)
	s.Level = core.TraceLevelTimestamps | core.TraceLevelTensors
	m, err := trace.New(trace.Options{Setting: s})
	if err != nil {
		t.Fatal(err)
	}
	run(t, serveTraced(t, m), 1)
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	objs := tracetest.ReadFile(t, filepath.Join(dir, "global_unittest.log"))
	var names []string
	var tensors []string
	for _, o := range objs {
		if ts, ok := o["timestamps"].([]any); ok {
			names = append(names, ts[0].(map[string]any)["name"].(string))
		}
		if tn, ok := o["tensor"].(map[string]any); ok {
			tensors = append(tensors, fmt.Sprintf("%s %s %s %s %s", o["activity"], tn["name"], tn["data"], tn["shape"], tn["dtype"]))
		}
	}
	if objs[0]["model_name"] != "m" || objs[0]["request_id"] != "r0" {
		t.Errorf("first object %v, want the trace's", objs[0])
	}
	if names[0] != "REQUEST_START" || names[len(names)-1] != "REQUEST_END" || !slices.Contains(names, "QUEUE_START") {
		t.Errorf("timestamps %v", names)
	}
	if want := []string{"TENSOR_QUEUE_INPUT INPUT0 7,8 2 INT32", "TENSOR_BACKEND_OUTPUT OUTPUT0 7,8 2 INT32"}; !slices.Equal(tensors, want) {
		t.Errorf("tensors %q, want %q", tensors, want)
	}
}

// TestRateAndCount: one request in rate is traced, and no more than count.
func TestRateAndCount(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := tracetest.UnittestSetting(dir)
	s.Rate, s.Count = 2, 2
	m := tracetest.NewManager(t, trace.Options{Setting: s})
	run(t, serveTraced(t, m), 8)
	if got := settings(m, ""); !strings.Contains(got, "trace_count=0 ") {
		t.Errorf("settings %s, want the count used up", got)
	}
	file := filepath.Join(dir, "global_unittest.log")
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	traces := 0
	for _, o := range tracetest.ReadFile(t, file) {
		if o["model_name"] != nil {
			traces++
		}
	}
	if traces != 2 {
		t.Errorf("%d traces, want 2 (rate 2, count 2, 8 requests)", traces)
	}
}

// blockingExporter holds the writer in Export until released.
type blockingExporter struct {
	entered chan struct{} // closed when the writer first waits in Export
	once    sync.Once
	release chan struct{}
	mu      sync.Mutex
	got     []*core.Trace
}

func (b *blockingExporter) Start(*core.Trace, core.TraceStart, any) any { return nil }

func (b *blockingExporter) Export(t *core.Trace, _ any) {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	b.mu.Lock()
	b.got = append(b.got, t)
	b.mu.Unlock()
}

func (b *blockingExporter) Close(context.Context) error { return nil }

// TestFullQueueDropsAndCountsWithoutBlocking: a writer that cannot keep up
// holds no request: once the queue is full, finished traces are dropped
// and counted, and the requests complete.
func TestFullQueueDropsAndCountsWithoutBlocking(t *testing.T) {
	t.Parallel()
	exp := &blockingExporter{entered: make(chan struct{}), release: make(chan struct{})}
	s := trace.DefaultSetting()
	s.Level, s.Rate, s.Mode = core.TraceLevelTimestamps, 1, trace.ModeOpenTelemetry
	m := tracetest.NewManager(t, trace.Options{Setting: s, Exporter: exp, QueueSize: 2})
	srv := serveTraced(t, m)
	run(t, srv, 1)
	<-exp.entered
	run(t, srv, 5) // the first in Export: two queued, three dropped
	if m.Dropped() != 3 {
		t.Errorf("Dropped() = %d, want 3", m.Dropped())
	}
	close(exp.release)
	testenv.WaitUntil(t, "the queued traces to be exported", func() bool {
		exp.mu.Lock()
		defer exp.mu.Unlock()
		return len(exp.got) == 3
	})
}

// TestRetiredSettingWaitsForTheParentAfterItsChildren: the traces of a
// request's steps (children) count among the traces a replaced setting
// waits for, so that a parent that finishes after its children and after
// the replacement still reaches its own last file.
func TestRetiredSettingWaitsForTheParentAfterItsChildren(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := tracetest.UnittestSetting(dir)
	s.LogFrequency = 2
	m := tracetest.NewManager(t, trace.Options{Setting: s})
	parent := m.StartTrace(core.TraceStart{Model: "ens", Version: 1, RequestID: "p"})
	if parent == nil {
		t.Fatal("the parent was not sampled at rate 1")
	}
	for _, step := range []string{"a", "b"} {
		m.Finish(m.StartTrace(core.TraceStart{Model: step, Version: 1, RequestID: "p", Parent: parent}))
	}
	file := filepath.Join(dir, "global_unittest.log")
	testenv.WaitUntil(t, "the children's file", func() bool {
		_, err := os.Stat(file + ".0")
		return err == nil
	})
	if err := m.Update("", trace.Update{Level: ptr(core.TraceLevelDisabled)}); err != nil {
		t.Fatal(err)
	}
	m.Finish(parent)
	testenv.WaitUntil(t, "the parent's file, written when its setting retired", func() bool {
		_, err := os.Stat(file + ".1")
		return err == nil
	})
	objs := tracetest.ReadFile(t, file+".1")
	if len(objs) == 0 || objs[0]["model_name"] != "ens" {
		t.Errorf("%s.1 = %v, want the parent's trace", file, objs)
	}
}

// TestTraceFilesStopAtTheirBound: the trace files, the file itself or its
// indexed files, hold no more bytes than MaxFileBytes: traces past it are
// dropped and counted, the first one logged once, and every file written
// is still a whole JSON array.
func TestTraceFilesStopAtTheirBound(t *testing.T) {
	t.Parallel()
	const maxBytes = 4000 // a few traces of TIMESTAMPS and TENSORS
	for _, logFrequency := range []uint32{0, 1, 3} {
		t.Run(fmt.Sprintf("log frequency %d", logFrequency), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := tracetest.UnittestSetting(dir)
			s.Level = core.TraceLevelTimestamps | core.TraceLevelTensors
			s.LogFrequency = logFrequency
			log := &testenv.LogBuffer{}
			m, err := trace.New(trace.Options{Setting: s, MaxFileBytes: maxBytes, Logger: serverlog.New(log)})
			if err != nil {
				t.Fatal(err)
			}
			const requests = 40
			run(t, serveTraced(t, m), requests)
			if err := m.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "global_unittest.log*"))
			var size int64
			traces := 0
			for _, f := range files {
				info, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				size += info.Size()
				for _, o := range tracetest.ReadFile(t, f) {
					if o["model_name"] == "m" {
						traces++
					}
				}
			}
			t.Logf("%d traces in %d files of %d bytes in all; %d dropped", traces, len(files), size, m.Dropped())
			if size > maxBytes {
				t.Errorf("the trace files hold %d bytes, past the bound of %d", size, maxBytes)
			}
			if traces == 0 || uint64(traces)+m.Dropped() != requests {
				t.Errorf("%d traces written and %d dropped, want %d in all, some written", traces, m.Dropped(), requests)
			}
			if n := log.Count("--trace-file-max-size"); n != 1 {
				t.Errorf("the bound was logged %d times, want once:\n%s", n, log)
			}
		})
	}
}
