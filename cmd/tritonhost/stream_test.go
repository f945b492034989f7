package main

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

func repeatRequest(id string, emptyFinal bool) client.Request {
	r := client.Request{Model: "repeat_int32", ID: id, Inputs: []client.Tensor{
		client.Int32s("IN", []int64{4}, 4, 2, 0, 1),
		client.Uint32s("DELAY", []int64{4}, 1, 2, 3, 4),
		client.Uint32s("WAIT", []int64{1}, 5),
	}, Outputs: []string{"OUT", "IDX"}}
	if emptyFinal {
		r.Params = map[string]any{client.EmptyFinalParam: true}
	}
	return r
}

func TestStreamRepeatGivesEachElementInOrder(t *testing.T) {
	for _, emptyFinal := range []bool{false, true} {
		t.Run(fmt.Sprintf("empty_final=%t", emptyFinal), func(t *testing.T) {
			srv := startServer(t, "")
			s, err := client.OpenStream(ctxFor(t), srv.Client)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Send(repeatRequest("0", emptyFinal)); err != nil {
				t.Fatal(err)
			}
			s.CloseSend()
			got := collect(t, s)
			want := [][2]int64{{4, 0}, {2, 1}, {0, 2}, {1, 3}}
			n := len(want)
			if emptyFinal {
				n++
			}
			if len(got) != n {
				t.Fatalf("got %d messages, want %d: %+v", len(got), n, got)
			}
			for i, w := range want {
				r := got[i]
				if r.id != "0" || r.final || r.err != "" || r.outs["OUT"][0] != w[0] || r.outs["IDX"][0] != w[1] {
					t.Errorf("message %d = %+v, want id 0, not final, (OUT, IDX) = %v", i, r, w)
				}
			}
			if emptyFinal {
				last := got[n-1]
				if last.id != "0" || !last.final || len(last.names) != 0 {
					t.Errorf("last message = %+v, want an empty final for id 0", last)
				}
			}
		})
	}
}

func TestStreamSquareInterleavesFourRequests(t *testing.T) {
	srv := startServer(t, "")
	for _, emptyFinal := range []bool{false, true} {
		t.Run(fmt.Sprintf("empty_final=%t", emptyFinal), func(t *testing.T) {
			s, err := client.OpenStream(ctxFor(t), srv.Client)
			if err != nil {
				t.Fatal(err)
			}
			for i, k := range []int32{4, 2, 0, 1} {
				r := client.Request{Model: "square_int32", ID: fmt.Sprint(i), Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, k)}}
				if emptyFinal {
					r.Params = map[string]any{client.EmptyFinalParam: true}
				}
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
				if r.final {
					finals[r.id]++
					if len(r.names) != 0 {
						t.Errorf("final for %s carries outputs: %+v", r.id, r)
					}
					continue
				}
				counts[r.id]++
				want := map[string]int64{"0": 4, "1": 2, "2": 0, "3": 1}[r.id]
				if got := r.outs["OUT"]; len(got) != 1 || got[0] != want {
					t.Errorf("response for %s: OUT = %v, want [%d]", r.id, got, want)
				}
			}
			if want := map[string]int{"0": 4, "1": 2, "3": 1}; fmt.Sprint(counts) != fmt.Sprint(want) {
				t.Errorf("responses per id = %v, want %v", counts, want)
			}
			wantFinals := map[string]int{}
			if emptyFinal {
				wantFinals = map[string]int{"0": 1, "1": 1, "2": 1, "3": 1}
			}
			if fmt.Sprint(finals) != fmt.Sprint(wantFinals) {
				t.Errorf("empty finals per id = %v, want %v", finals, wantFinals)
			}
		})
	}
}

func TestStreamKeepsServingAfterABadRequest(t *testing.T) {
	srv := startServer(t, "")
	s, err := client.OpenStream(ctxFor(t), srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	bad := client.Request{Model: "square_int32", ID: "bad", Inputs: []client.Tensor{client.Int32s("NOPE", []int64{1}, 1)}}
	unknown := client.Request{Model: "no_such_model", ID: "lost", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 1)}}
	good := client.Request{Model: "square_int32", ID: "good", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 2)},
		Params: map[string]any{client.EmptyFinalParam: true}}
	for _, r := range []client.Request{bad, unknown, good} {
		if err := s.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	s.CloseSend()
	got := collect(t, s)
	errs := map[string]string{}
	var goodResponses int
	for _, r := range got {
		if r.err != "" {
			errs[r.id] = r.err
			if !r.final {
				t.Errorf("error for %s is not marked final", r.id)
			}
		} else if r.id == "good" && !r.final {
			goodResponses++
		}
	}
	if m, want := errs["bad"], "unexpected inference input 'NOPE' for model 'square_int32'"; m != want {
		t.Errorf("error for the bad request = %q, want %q", m, want)
	}
	if m, want := errs["lost"], "Request for unknown model: 'no_such_model' is not found"; m != want {
		t.Errorf("error for the unknown model = %q, want %q", m, want)
	}
	if goodResponses != 2 {
		t.Errorf("the good request got %d responses, want 2; all: %+v", goodResponses, got)
	}
}

func TestUnaryRefusesDecoupledAndServesOthers(t *testing.T) {
	srv := startServer(t, "")
	ctx := ctxFor(t)
	msg, _ := repeatRequest("u", false).Message()
	_, err := srv.Client.ModelInfer(ctx, msg)
	wantStatus(t, "ModelInfer on repeat", err, codes.Unimplemented, "ModelInfer RPC doesn't support models with decoupled transaction policy")

	// identity answers on both RPCs: typed contents on the unary one.
	resp, err := srv.Client.ModelInfer(ctx, &pb.ModelInferRequest{ModelName: "identity_int32", Id: "typed", Inputs: []*pb.ModelInferRequest_InferInputTensor{{
		Name: "INPUT0", Datatype: "INT32", Shape: []int64{3}, Contents: &pb.InferTensorContents{IntContents: []int32{-7, 0, 9}}}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := client.Output(resp, "OUTPUT0")
	if err != nil {
		t.Fatal(err)
	}
	if vals, _ := out.AsInt32s(); !slices.Equal(vals, []int32{-7, 0, 9}) || resp.GetId() != "typed" || resp.GetModelVersion() != "1" {
		t.Errorf("identity unary: %v, id %q, version %q", vals, resp.GetId(), resp.GetModelVersion())
	}

	s, err := client.OpenStream(ctx, srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	s.Send(client.Request{Model: "identity_int32", ID: "s", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{2}, 5, 6)}})
	s.CloseSend()
	got := collect(t, s)
	if len(got) != 1 || !got[0].final || !slices.Equal(got[0].outs["OUTPUT0"], []int64{5, 6}) {
		t.Errorf("identity over a stream: %+v, want one final response", got)
	}
}

func TestRequestedOutputsAreHonoured(t *testing.T) {
	srv := startServer(t, "")
	s, err := client.OpenStream(ctxFor(t), srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	r := repeatRequest("only-idx", false)
	r.Outputs = []string{"IDX"}
	s.Send(r)
	s.CloseSend()
	for _, res := range collect(t, s) {
		if !slices.Equal(res.names, []string{"IDX"}) {
			t.Errorf("response outputs %v, want only IDX", res.names)
		}
	}
}
