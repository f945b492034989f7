package ensemble_test

import (
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// TestTracedEnsembleTracesItsStepsAsChildren: a traced ensemble request
// has a trace for each step, whose parent is the ensemble's trace, as
// Triton's parent_id says; the tracer samples only the ensemble.
func TestTracedEnsembleTracesItsStepsAsChildren(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider().Set("pre", coretest.Echo()).Set("post", coretest.Echo())
	tracer := &coretest.Tracer{Models: []string{"pipe"}}
	srv := coretest.Serve(t, core.Options{Backends: p, Tracer: tracer}, append(vectorModels("pre", "post"), pipeline())...)
	coretest.Succeeded(t, coretest.Infer(t, srv, coretest.Request("pipe", "e1", input("IN", 1, 2))))
	traces := tracer.Wait(t, 3)
	byModel := map[string]*core.Trace{}
	for _, tr := range traces {
		byModel[tr.Model] = tr
	}
	pipe, pre, post := byModel["pipe"], byModel["pre"], byModel["post"]
	if len(traces) != 3 || pipe == nil || pre == nil || post == nil {
		t.Fatalf("traces of %v, want pipe, pre and post", byModel)
	}
	if pipe.ParentID != 0 || pre.ParentID != pipe.ID || post.ParentID != pipe.ID || pre.RequestID != "e1" {
		t.Errorf("ids: pipe %d (parent %d), pre parent %d, post parent %d", pipe.ID, pipe.ParentID, pre.ParentID, post.ParentID)
	}
	if traces[2] != pipe {
		t.Errorf("the ensemble's trace finished before a step's")
	}
}
