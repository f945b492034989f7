package httpserver_test

import (
	"net/http"
	"testing"

	"tritonhost/core"
	"tritonhost/core/coretest"
)

// TestAbortAnswersInFlightRequests: after Drain, Abort answers an infer
// request still in its model with the reason (503, Triton's error object)
// and ends a generate_stream with the reason as an error event.
func TestAbortAnswersInFlightRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "gated", Config: vector(`instance_group [ { count: 2 kind: KIND_CPU } ]`)})
	gate := coretest.NewGate(t)
	h.p.Set("gated", coretest.Gated(gate, coretest.Echo()))
	type answer struct {
		status int
		body   string
	}
	infer, stream := make(chan answer, 1), make(chan answer, 1)
	go func() {
		status, _, body := h.call(t, "POST", "/v2/models/gated/infer", []byte(`{"id":"i","inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[7]}]}`))
		infer <- answer{status, string(body)}
	}()
	go func() {
		status, _, body := h.call(t, "POST", "/v2/models/gated/generate_stream", []byte(`{"INPUT0":[7]}`))
		stream <- answer{status, string(body)}
	}()
	coretest.WaitUntil(t, "both requests in the backend", func() bool { return len(h.p.Executions("gated")) == 2 })
	h.http.Drain()
	h.http.Abort(core.Errorf(core.CodeUnavailable, "given up at the exit timeout"))
	if a := <-infer; a.status != http.StatusServiceUnavailable || a.body != `{"error":"given up at the exit timeout"}` {
		t.Errorf("infer: %d %s, want 503 with the reason", a.status, a.body)
	}
	if a := <-stream; a.status != 200 || a.body != "data: {\"error\":\"given up at the exit timeout\"}\n\n" {
		t.Errorf("generate_stream: %d %q, want the reason as its last event", a.status, a.body)
	}
	gate.Open()
}
