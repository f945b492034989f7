package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"tritonhost/client"
	pb "tritonhost/internal/inferencepb"
)

// The example models bls_simple and bls_square answer by calling simple
// and square_int32 through the in-process API (backends_cpp/bls), served
// by the real binary over gRPC. The server's clean exit at cleanup also
// checks that no object of the backend API is left (startServer).

func TestBLSSimpleAnswersUnaryClients(t *testing.T) {
	srv := startServer(t, "")
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
	srv := startServer(t, "")
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
	srv := startServer(t, "")
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
