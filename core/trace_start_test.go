package core_test

import (
	"encoding/binary"
	"slices"
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// samplingTracer is a Tracer that only samples (no StartTrace): never.
type samplingTracer struct {
	mu       sync.Mutex
	finished []*core.Trace
}

func (s *samplingTracer) Sample(string, int64) bool { return false }

func (s *samplingTracer) Finish(t *core.Trace) {
	s.mu.Lock()
	s.finished = append(s.finished, t)
	s.mu.Unlock()
}

func (s *samplingTracer) traces() []*core.Trace {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.finished)
}

// TestTraceAtTheTensorsLevelRecordsInputsAndOutputs: a TraceStarter's
// trace at TENSORS records the inputs as the request enters its queue and
// the outputs of its response, beside the timestamps; the tracer's data and
// the client's trace context reach it.
func TestTraceAtTheTensorsLevelRecordsInputsAndOutputs(t *testing.T) {
	t.Parallel()
	tracer := &coretest.Tracer{Level: core.TraceLevelTimestamps | core.TraceLevelTensors}
	p := coretest.NewProvider().Set("m", coretest.Echo())
	srv := coretest.Serve(t, core.Options{Backends: p, Tracer: tracer}, coretest.ModelDir{Name: "m", Config: vectorConfig()})
	req := vector("r", 4, 5, 6)
	req.TraceContext = core.TraceContext{Parent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	coretest.Succeeded(t, coretest.Infer(t, srv, req))
	tr := tracer.Wait(t, 1)[0]
	if tr.Model != "m" || tr.Version != 1 || tr.RequestID != "r" || tr.ParentID != 0 || tr.Level() != core.TraceLevelTimestamps|core.TraceLevelTensors {
		t.Errorf("trace %+v at level %v", tr, tr.Level())
	}
	if got := tr.Data(); got != req.TraceContext {
		t.Errorf("trace data %v, want the client's trace context", got)
	}
	var names []string
	for _, a := range tr.Activities() {
		names = append(names, a.Name)
	}
	for _, want := range []string{core.TraceRequestStart, core.TraceQueueStart, core.TraceRequestEnd} {
		if !slices.Contains(names, want) {
			t.Errorf("activities %v lack %s", names, want)
		}
	}
	want := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 4), 5), 6)
	tensors := tr.Tensors()
	if len(tensors) != 2 ||
		tensors[0].Activity != core.TraceTensorQueueInput || tensors[0].Name != "INPUT0" || !slices.Equal(tensors[0].Data, want) ||
		tensors[1].Activity != core.TraceTensorBackendOutput || tensors[1].Name != "OUTPUT0" || !slices.Equal(tensors[1].Data, want) ||
		!slices.Equal(tensors[1].Shape, []int64{3}) || tensors[1].DataType != core.TypeInt32 {
		t.Errorf("tensors %+v, want INPUT0 queued and OUTPUT0 sent, [4 5 6]", tensors)
	}
}

// TestTimestampsTraceRecordsNoTensors: at TIMESTAMPS alone no tensor is
// kept.
func TestTimestampsTraceRecordsNoTensors(t *testing.T) {
	t.Parallel()
	tracer := &coretest.Tracer{}
	p := coretest.NewProvider().Set("m", coretest.Echo())
	srv := coretest.Serve(t, core.Options{Backends: p, Tracer: tracer}, coretest.ModelDir{Name: "m", Config: vectorConfig()})
	coretest.Succeeded(t, coretest.Infer(t, srv, vector("r", 1)))
	if tr := tracer.Wait(t, 1)[0]; len(tr.Tensors()) != 0 || len(tr.Activities()) == 0 {
		t.Errorf("tensors %v, activities %v", tr.Tensors(), tr.Activities())
	}
}

// TestSamplingTracerTracesTheChildrenOfATracedRequest: with a Tracer that
// only samples, a request submitted as part of a traced one is traced as
// its child whatever Sample says, and one of an untraced request is not.
func TestSamplingTracerTracesTheChildrenOfATracedRequest(t *testing.T) {
	t.Parallel()
	tracer := &samplingTracer{}
	p := coretest.NewProvider().Set("m", coretest.Echo())
	srv := coretest.Serve(t, core.Options{Backends: p, Tracer: tracer}, coretest.ModelDir{Name: "m", Config: vectorConfig()})
	parent := core.NewTrace(core.TraceStart{Model: "outer", Version: 1}, core.TraceLevelTimestamps)
	child := vector("child", 1)
	child.ParentTrace = parent
	coretest.Succeeded(t, coretest.Infer(t, srv, child), coretest.Infer(t, srv, vector("alone", 2)))
	testenv.WaitUntil(t, "both requests to finish", func() bool { return srv.LiveRequests() == 0 })
	if got := tracer.traces(); len(got) != 1 || got[0].RequestID != "child" || got[0].ParentID != parent.ID || got[0].ID == parent.ID {
		t.Errorf("traces %+v, want the child's alone, with its parent's id %d", got, parent.ID)
	}
}
