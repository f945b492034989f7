package abi_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/loader"
)

// pairConfig is identity with two inputs (and outputs): bytes and INT32.
const pairConfig = `name: "pair"
backend: "identity"
input [ { name: "INPUT0" data_type: TYPE_UINT8 dims: [ -1 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_UINT8 dims: [ -1 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ -1 ] } ]
`

// pair is a request of pair with n bytes and the INT32 values vs.
func pair(n int, frees bool, vs ...int32) *core.Submission {
	return &core.Submission{Model: "pair", FreesResponses: frees, Inputs: []core.Input{
		core.NewInput("INPUT0", core.TypeUint8, []int64{int64(n)}, sample(core.TypeUint8, n)),
		core.NewInput("INPUT1", core.TypeInt32, []int64{int64(len(vs))}, int32s(vs...)),
	}}
}

// lentServer serves pair and square.
func lentServer(t *testing.T, mutate ...func(*core.Options, *loader.Options)) *testServer {
	t.Helper()
	return startServer(t, testenv.Repository(t,
		testenv.Model{Name: "pair", Config: pairConfig},
		testenv.Model{Name: "square_int32", Config: testenv.ExampleConfig(t, "square_int32")}), mutate...)
}

func TestLentOutputsLiveUntilFreed(t *testing.T) {
	t.Parallel()
	srv := lentServer(t)
	data := sample(core.TypeUint8, 1<<20)
	events := infer(t, srv, pair(1<<20, true, 7))
	if len(events) != 1 || events[0].resp == nil || events[0].resp.Err != nil {
		t.Fatalf("events %+v", events)
	}
	resp := events[0].resp
	if resp.Lent == nil {
		t.Fatal("the response of a request with FreesResponses holds no lent memory")
	}
	// The response does not hold its request: the backend let go of
	// everything but the lent memory.
	if !testenv.Eventually(func() bool {
		l := srv.host.Live()
		return l.RequestContexts == 0 && l.Responses == 0 && l.GoRequests == 0
	}) {
		t.Errorf("gave up waiting for the request to be let go: %s", srv.host.Live().String())
	}
	if got := srv.host.Live().LentResponses; got != 1 {
		t.Errorf("lent responses before Free: %d, want 1", got)
	}
	out := output(t, resp, "OUTPUT0")
	if !bytes.Equal(out.Data, data) || !slices.Equal(out.Shape, []int64{1 << 20}) || scalarInt32(t, resp, "OUTPUT1") != 7 {
		t.Errorf("lent outputs: OUTPUT0 shape %v, %d bytes (equal: %v); OUTPUT1 %v", out.Shape, len(out.Data), bytes.Equal(out.Data, data),
			output(t, resp, "OUTPUT1").Data)
	}
	resp.Free()
	resp.Free() // a second Free does nothing
	if got := srv.host.Live().LentResponses; got != 0 {
		t.Errorf("lent responses after Free: %d, want 0", got)
	}
}

func TestLentResponsesFreedInTheCallbackAreFreedBySend(t *testing.T) {
	t.Parallel()
	srv := lentServer(t)
	const k = 200
	c := newCollector()
	var values []int32
	fn := func(resp *core.Response, final bool) {
		if resp != nil {
			if resp.Lent == nil {
				t.Error("a response without lent memory")
			}
			values = append(values, scalarInt32(t, resp, "OUT"))
			resp.Free()
		}
		c.fn(nil, final)
	}
	if err := srv.Infer(t.Context(), &core.Submission{Model: "square_int32", FreesResponses: true,
		Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(k))}}, fn); err != nil {
		t.Fatal(err)
	}
	c.wait(t)
	if len(values) != k || slices.ContainsFunc(values, func(v int32) bool { return v != k }) {
		t.Errorf("got %d responses %v, want %d of %d", len(values), values[:min(len(values), 5)], k, k)
	}
	if got := srv.host.Live().LentResponses; got != 0 {
		t.Errorf("lent responses: %d, want 0", got)
	}
}

func TestUnrequestedOutputsAreNotLent(t *testing.T) {
	t.Parallel()
	srv := lentServer(t)
	req := pair(4096, true, 1, 2, 3)
	req.Outputs = []string{"OUTPUT1"}
	resp := infer(t, srv, req)[0].resp
	defer resp.Free()
	if len(resp.Outputs) != 1 || resp.Outputs[0].Name != "OUTPUT1" || !bytes.Equal(resp.Outputs[0].Data, int32s(1, 2, 3)) {
		t.Errorf("outputs %+v, want OUTPUT1 alone", resp.Outputs)
	}
}

func TestResponsesWithoutFreesResponsesAreGoMemory(t *testing.T) {
	t.Parallel()
	srv := lentServer(t)
	resp := infer(t, srv, pair(8192, false, 1))[0].resp
	if resp == nil || resp.Err != nil || resp.Lent != nil {
		t.Fatalf("response %+v: want Go memory", resp)
	}
	// The C response goes as soon as the send returns.
	if !testenv.Eventually(func() bool { return srv.host.Live().LentResponses == 0 }) {
		t.Errorf("gave up waiting for the sent response to be freed: %s", srv.host.Live().String())
	}
	if !bytes.Equal(output(t, resp, "OUTPUT0").Data, sample(core.TypeUint8, 8192)) {
		t.Error("OUTPUT0 differs from INPUT0")
	}
}

func TestOutputBuffersAreKeptForTheNextResponsesWithinTheBound(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	var host *abi.Host
	t.Cleanup(func() { // after the server's cleanup, which closes the host
		if n, b := host.OutputCache(); n != 0 || b != 0 {
			t.Errorf("after Close the host keeps %d buffers of %d bytes", n, b)
		}
	})
	srv := startServerWith(t, testenv.Repository(t, testenv.Model{Name: "pair", Config: pairConfig}),
		serverSetup{host: abi.HostOptions{OutputCacheBytes: 3 * mib}})
	host = srv.host
	send := func(n int) *core.Response {
		t.Helper()
		resp := infer(t, srv, pair(n, true, 1))[0].resp
		if resp == nil || resp.Err != nil || len(output(t, resp, "OUTPUT0").Data) != n {
			t.Fatalf("response %+v", resp)
		}
		// The final response reaches the test while the backend's
		// ResponseSend is still returning; a Free before it returns is
		// carried out on its return. Wait for it, so that the cache
		// checks after each Free see the buffer back.
		if !testenv.Eventually(func() bool {
			l := srv.host.Live()
			return l.RequestContexts == 0 && l.Responses == 0
		}) {
			t.Errorf("gave up waiting for the backend to let go of the request: %s", srv.host.Live().String())
		}
		return resp
	}
	address := func(r *core.Response) *byte { return &output(t, r, "OUTPUT0").Data[0] }

	// A freed output's buffer serves the next output of about its size.
	first := send(mib)
	at := address(first)
	first.Free()
	if n, b := host.OutputCache(); n != 1 || b != mib {
		t.Fatalf("after one 1 MiB response the host keeps %d buffers of %d bytes", n, b)
	}
	second := send(mib - 100)
	if address(second) != at {
		t.Error("the next output of about the same size did not reuse the kept buffer")
	}
	second.Free()
	// Not for one much smaller: it would hold a large buffer.
	small := send(100 << 10)
	if address(small) == at {
		t.Error("a 100 KiB output took the kept 1 MiB buffer")
	}
	small.Free()

	// Five outputs freed together: the host keeps no more than its bound.
	var held []*core.Response
	for range 5 {
		held = append(held, send(mib))
	}
	for _, r := range held {
		r.Free()
	}
	if _, b := host.OutputCache(); b > 3*mib {
		t.Errorf("the host keeps %d bytes, past its bound of %d", b, 3*mib)
	}
	// One larger than the bound is never kept.
	before, _ := host.OutputCache()
	send(4 * mib).Free()
	if n, b := host.OutputCache(); n > before || b > 3*mib {
		t.Errorf("after a 4 MiB output the host keeps %d buffers of %d bytes", n, b)
	}
}

func TestOutputCacheCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	srv := startServerWith(t, testenv.Repository(t, testenv.Model{Name: "pair", Config: pairConfig}),
		serverSetup{host: abi.HostOptions{OutputCacheBytes: -1}})
	infer(t, srv, pair(1<<20, true, 1))[0].resp.Free()
	infer(t, srv, pair(1<<20, false, 1))
	if n, b := srv.host.OutputCache(); n != 0 || b != 0 {
		t.Errorf("with the cache off the host keeps %d buffers of %d bytes", n, b)
	}
}
