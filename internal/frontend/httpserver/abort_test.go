package httpserver_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestAbortAnswersInFlightRequests: after Drain, Abort answers every
// request still in its model with the reason: an infer or generate
// request (on a decoupled model too) with 503 and Triton's error object,
// a generate_stream that has sent nothing yet with 503 and the reason as
// its one event (an error first gives a stream its status).
func TestAbortAnswersInFlightRequests(t *testing.T) {
	t.Parallel()
	const reason = "given up at the exit timeout"
	cases := []struct {
		route, model, body string
		status             int
		answer             string
	}{
		{"infer", "gated", `{"id":"i","inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[7]}]}`,
			http.StatusServiceUnavailable, `{"error":"` + reason + `"}`},
		{"generate", "gated", `{"INPUT0":[7]}`, http.StatusServiceUnavailable, `{"error":"` + reason + `"}`},
		{"generate", "gated_decoupled", `{"INPUT0":[7]}`, http.StatusServiceUnavailable, `{"error":"` + reason + `"}`},
		{"generate_stream", "gated", `{"INPUT0":[7]}`, http.StatusServiceUnavailable, "data: {\"error\":\"" + reason + "\"}\n\n"},
		{"generate_stream", "gated_decoupled", `{"INPUT0":[7]}`, http.StatusServiceUnavailable, "data: {\"error\":\"" + reason + "\"}\n\n"},
	}
	h := newHarness(t, setup{},
		coretest.ModelDir{Name: "gated", Config: vector(`instance_group [ { count: 3 kind: KIND_CPU } ]`)},
		coretest.ModelDir{Name: "gated_decoupled", Config: vector(coretest.Decoupled + "\n" + `instance_group [ { count: 2 kind: KIND_CPU } ]`)})
	gate := coretest.NewGate(t)
	h.p.Set("gated", coretest.Gated(gate, coretest.Echo()))
	h.p.Set("gated_decoupled", coretest.Gated(gate, coretest.Echo()))
	type answer struct {
		status int
		body   string
	}
	answers := make([]chan answer, len(cases))
	for i, c := range cases {
		answers[i] = make(chan answer, 1)
		go func() {
			status, _, body := h.call(t, "POST", "/v2/models/"+c.model+"/"+c.route, []byte(c.body))
			answers[i] <- answer{status, string(body)}
		}()
	}
	testenv.WaitUntil(t, "every request in the backend", func() bool {
		return len(h.p.Executions("gated")) == 3 && len(h.p.Executions("gated_decoupled")) == 2
	})
	h.http.Drain()
	h.http.Abort(core.Errorf(core.CodeUnavailable, reason))
	for i, c := range cases {
		select {
		case a := <-answers[i]:
			if a.status != c.status || a.body != c.answer {
				t.Errorf("%s on %s: %d %q, want %d %q", c.route, c.model, a.status, a.body, c.status, c.answer)
			}
		case <-time.After(testenv.Patience):
			t.Errorf("%s on %s: no answer %v after the abort", c.route, c.model, testenv.Patience)
		}
	}
	gate.Open()
}
