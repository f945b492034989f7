package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// The example models bls_simple and bls_square answer by calling simple
// and square_int32 through the in-process API (backends_c/bls), served
// by the real binary over gRPC. The server's clean exit at cleanup also
// checks that no object of the backend API is left (startServer). Each
// test runs with the backends in the server's process, and isolated in
// worker processes (--backend-isolation=process), where bls's requests
// cross from its worker to the server, which runs them in the worker of
// simple or square_int32.

// isolationModes are the ways the tests that take them run the backends.
var isolationModes = []struct {
	name string
	args []string
}{
	{"in process", nil},
	{"isolated", []string{"--backend-isolation", "process"}},
}

func TestBLSSimpleAnswersUnaryClients(t *testing.T) {
	for _, mode := range isolationModes {
		t.Run(mode.name, func(t *testing.T) { testBLSSimpleAnswersUnaryClients(t, mode.args) })
	}
}

func testBLSSimpleAnswersUnaryClients(t *testing.T, args []string) {
	srv := startServer(t, "", args...)
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			var in0, in1, sum, diff []uint32
			for i := range 16 {
				a, b := int32(i*c-7), int32(c-i)
				in0, in1 = append(in0, uint32(a)), append(in1, uint32(b))
				sum, diff = append(sum, uint32(a+b)), append(diff, uint32(a-b))
			}
			resp, err := srv.Client.ModelInfer(ctxFor(t), simpleRequest("bls_simple", "INT32", words(in0), words(in1)))
			if err != nil {
				t.Errorf("client %d: ModelInfer(bls_simple): %v", c, err)
				return
			}
			if resp.GetModelName() != "bls_simple" {
				t.Errorf("client %d: response names model %q", c, resp.GetModelName())
			}
			checkSimpleResponse(t, resp, "INT32", words(sum), words(diff))
		})
	}
	wg.Wait()
	// Each bls_simple request was one request of simple too.
	for _, model := range []string{"bls_simple", "simple"} {
		st, err := srv.Client.ModelStatistics(ctxFor(t), &pb.ModelStatisticsRequest{Name: model})
		if err != nil || st.GetModelStats()[0].GetInferenceStats().GetSuccess().GetCount() != 8 {
			t.Errorf("%s statistics: %v %v, want 8 successes", model, st, err)
		}
	}
}

func TestBLSSquareStreamsEveryResponseOfSquare(t *testing.T) {
	for _, mode := range isolationModes {
		t.Run(mode.name, func(t *testing.T) { testBLSSquareStreamsEveryResponseOfSquare(t, mode.args) })
	}
}

func testBLSSquareStreamsEveryResponseOfSquare(t *testing.T, args []string) {
	srv := startServer(t, "", args...)
	s, err := client.OpenStream(ctxFor(t), srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	ks := []int32{4, 2, 0, 1, 500}
	for i, k := range ks {
		r := client.Request{Model: "bls_square", ID: fmt.Sprint(i), Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, k)},
			Params: map[string]any{client.EmptyFinalParam: true}}
		if err := s.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	s.CloseSend()
	counts, finals := map[string]int{}, map[string]int{}
	for _, r := range collect(t, s) {
		if r.err != "" {
			t.Fatalf("unexpected error: %+v", r)
		}
		if finals[r.id] > 0 {
			t.Errorf("a message for %s after its final: %+v", r.id, r)
		}
		if r.final {
			finals[r.id]++ // square ends with a flags-only final, passed on as one
			if len(r.names) != 0 {
				t.Errorf("final for %s carries outputs: %+v", r.id, r)
			}
			continue
		}
		counts[r.id]++
		var k int32
		fmt.Sscan(r.id, &k)
		if want := int64(ks[k]); len(r.outs["OUT"]) != 1 || r.outs["OUT"][0] != want {
			t.Errorf("response for %s: OUT = %v, want [%d]", r.id, r.outs["OUT"], want)
		}
	}
	for i, k := range ks {
		id := fmt.Sprint(i)
		if counts[id] != int(k) || finals[id] != 1 {
			t.Errorf("request %s (IN=%d): %d responses and %d finals, want %d and 1", id, k, counts[id], finals[id], k)
		}
	}
	// Unary inference refuses the decoupled bls_square, as it refuses square.
	_, err = srv.Client.ModelInfer(ctxFor(t), &pb.ModelInferRequest{ModelName: "bls_square"})
	if status.Code(err) != codes.InvalidArgument && status.Code(err) != codes.Unimplemented {
		t.Errorf("ModelInfer(bls_square): %v, want it refused", err)
	}
}

// A client that goes away in the middle of an endless bls_square stream
// (IN = 2^30 responses): the server cancels the request, bls passes the
// cancellation on to square, which stops; so the server then exits at once,
// cleanly, with nothing of the backend API left (stop), instead of waiting
// out its exit timeout for square.
func TestBLSSquareStopsWhenTheClientGoesAway(t *testing.T) {
	for _, mode := range isolationModes {
		t.Run(mode.name, func(t *testing.T) { testBLSSquareStopsWhenTheClientGoesAway(t, mode.args) })
	}
}

func testBLSSquareStopsWhenTheClientGoesAway(t *testing.T, args []string) {
	srv := startServer(t, "", args...)
	ctx, cancel := context.WithCancel(ctxFor(t))
	s, err := client.OpenStream(ctx, srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(client.Request{Model: "bls_square", ID: "endless",
		Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 1<<30)}}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := s.Recv(); err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
	}
	cancel()
	srv.Stop(t)
	if strings.Contains(srv.Log(), "exit timeout reached") {
		t.Errorf("the server waited out its exit timeout: the cancellation did not reach square")
	}
}

// TestBLSAcrossIsolation: a request crosses between an isolated model and
// one in the server's process either way, each model choosing with its
// own parameter tritonhost_isolation: bls_simple in a worker calls simple
// in process, and bls_simple in process calls simple in a worker. The
// model queries bls makes of simple (readiness, transaction policy, its
// inputs) are answered by the server either way.
func TestBLSAcrossIsolation(t *testing.T) {
	for _, tc := range []struct {
		name     string
		isolated string // the model with the parameter
	}{
		{"isolated bls calls simple in process", "bls_simple"},
		{"bls in process calls isolated simple", "simple"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var models []testenv.Model
			for _, name := range []string{"bls_simple", "simple"} {
				cfg := testenv.ExampleConfig(t, name)
				if name == tc.isolated {
					cfg += "\nparameters { key: \"tritonhost_isolation\" value: { string_value: \"process\" } }\n"
				}
				models = append(models, testenv.Model{Name: name, Config: cfg})
			}
			srv := startServer(t, testenv.Repository(t, models...))
			in0, in1 := make([]uint32, 16), make([]uint32, 16)
			sum, diff := make([]uint32, 16), make([]uint32, 16)
			for i := range 16 {
				a, b := int32(3*i), int32(i-5)
				in0[i], in1[i], sum[i], diff[i] = uint32(a), uint32(b), uint32(a+b), uint32(a-b)
			}
			resp, err := srv.Client.ModelInfer(ctxFor(t), simpleRequest("bls_simple", "INT32", words(in0), words(in1)))
			if err != nil {
				t.Fatalf("ModelInfer(bls_simple): %v", err)
			}
			checkSimpleResponse(t, resp, "INT32", words(sum), words(diff))
			want := fmt.Sprintf("model %q version 1: its backend runs in worker process", tc.isolated)
			if !strings.Contains(srv.Log(), want) {
				t.Errorf("the log does not say %q", want)
			}
			for _, other := range []string{"bls_simple", "simple"} {
				if other != tc.isolated && strings.Contains(srv.Log(), fmt.Sprintf("model %q version 1: its backend runs in worker", other)) {
					t.Errorf("%s runs in a worker too", other)
				}
			}
		})
	}
}

// TestIsolatedBLSIsBoundedPerWorker: an isolated backend's requests to the
// server in flight are bounded (--backend-worker-max-requests): past the
// bound its next one fails with UNAVAILABLE naming the flag, the one in
// flight goes on, and once it ended the slot serves again.
func TestIsolatedBLSIsBoundedPerWorker(t *testing.T) {
	srv := startServer(t, "", "--backend-isolation", "process", "--backend-worker-max-requests", "1")
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	endless, err := client.OpenStream(ctx, srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	if err := endless.Send(client.Request{Model: "bls_square", ID: "endless",
		Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 1<<30)}}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := endless.Recv(); err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
	}
	two := func() []result {
		s, err := client.OpenStream(ctxFor(t), srv.Client)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(client.Request{Model: "bls_square", ID: "two", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 2)}}); err != nil {
			t.Fatal(err)
		}
		s.CloseSend()
		return collect(t, s)
	}
	got := two()
	if len(got) != 1 || !strings.Contains(got[0].err, "--backend-worker-max-requests") || !strings.Contains(got[0].err, "bls_square") {
		t.Fatalf("past the bound: got %+v, want one error naming bls_square and --backend-worker-max-requests", got)
	}
	if _, err := endless.Recv(); err != nil {
		t.Fatalf("the request in flight stopped: %v", err)
	}
	cancel()
	testenv.WaitUntil(t, "the slot to serve again", func() bool {
		got := two()
		n := 0
		for _, r := range got {
			if r.err != "" {
				return false
			}
			if len(r.outs["OUT"]) == 1 {
				n++
			}
		}
		return n == 2
	})
}
