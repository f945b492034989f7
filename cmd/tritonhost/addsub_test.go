package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"google.golang.org/grpc/metadata"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// simpleRequest is the request Triton's simple_grpc_infer_client sends:
// INPUT0 = 0..15 and INPUT1 = all ones, [1,16], as raw_input_contents, with
// OUTPUT0 and OUTPUT1 requested by name.
func simpleRequest(model, datatype string, in0, in1 []byte) *pb.ModelInferRequest {
	return &pb.ModelInferRequest{
		ModelName: model,
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: datatype, Shape: []int64{1, 16}},
			{Name: "INPUT1", Datatype: datatype, Shape: []int64{1, 16}},
		},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{
			{Name: "OUTPUT0"}, {Name: "OUTPUT1"},
		},
		RawInputContents: [][]byte{in0, in1},
	}
}

// words encodes 32-bit words little-endian, as the raw contents are.
func words(vs []uint32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

// checkSimpleResponse checks a ModelInfer response of the simple models:
// OUTPUT0 and OUTPUT1, [1,16] of datatype, holding want0 and want1.
func checkSimpleResponse(t *testing.T, resp *pb.ModelInferResponse, datatype string, want0, want1 []byte) {
	t.Helper()
	outs := resp.GetOutputs()
	raw := resp.GetRawOutputContents()
	if len(outs) != 2 || len(raw) != 2 {
		t.Errorf("response has %d outputs and %d raw contents, want 2 and 2: %v", len(outs), len(raw), resp)
		return
	}
	want := map[string][]byte{"OUTPUT0": want0, "OUTPUT1": want1}
	for i, o := range outs {
		w, ok := want[o.GetName()]
		delete(want, o.GetName())
		switch {
		case !ok:
			t.Errorf("unexpected output %q", o.GetName())
		case o.GetDatatype() != datatype || !slices.Equal(o.GetShape(), []int64{1, 16}):
			t.Errorf("%s: %s %v, want %s [1 16]", o.GetName(), o.GetDatatype(), o.GetShape(), datatype)
		case !slices.Equal(raw[i], w):
			t.Errorf("%s = %x, want %x", o.GetName(), raw[i], w)
		}
	}
}

// Does what Triton's simple_grpc_infer_client (client repository,
// src/python/examples) does against the "simple" example model, which the
// addsub backend serves: infer with both outputs named, read the model's
// statistics, infer again naming none.
func TestSimpleGRPCInferClientPasses(t *testing.T) {
	srv := startServer(t, "")
	ctx := metadata.AppendToOutgoingContext(ctxFor(t), "test", "1") // the client's headers

	var in0, in1, sum, diff []uint32
	for i := range 16 {
		in0, in1 = append(in0, uint32(i)), append(in1, 1)
		sum, diff = append(sum, uint32(int32(i)+1)), append(diff, uint32(int32(i)-1))
	}
	resp, err := srv.Client.ModelInfer(ctx, simpleRequest("simple", "INT32", words(in0), words(in1)))
	if err != nil {
		t.Fatalf("ModelInfer(simple): %v", err)
	}
	if resp.GetModelName() != "simple" || resp.GetModelVersion() != "1" {
		t.Errorf("response names model %q version %q, want simple 1", resp.GetModelName(), resp.GetModelVersion())
	}
	checkSimpleResponse(t, resp, "INT32", words(sum), words(diff))

	// The client then asks for the model's statistics and wants one entry.
	st, err := srv.Client.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: "simple"})
	if err != nil || len(st.GetModelStats()) != 1 {
		t.Fatalf("ModelStatistics(simple): %v %v", st, err)
	}
	if s := st.GetModelStats()[0]; s.GetInferenceCount() != 1 || s.GetExecutionCount() != 1 ||
		s.GetInferenceStats().GetSuccess().GetCount() != 1 {
		t.Errorf("statistics after one inference: %v", s)
	}

	// Then it infers again naming no outputs, and gets both.
	req := simpleRequest("simple", "INT32", words(in0), words(in1))
	req.Outputs = nil
	if resp, err = srv.Client.ModelInfer(ctx, req); err != nil {
		t.Fatalf("ModelInfer(simple) without outputs: %v", err)
	}
	checkSimpleResponse(t, resp, "INT32", words(sum), words(diff))
}

// simple_fp32 batches dynamically; concurrent clients still get their own
// sums and differences.
func TestSimpleFP32AnswersConcurrentClients(t *testing.T) {
	srv := startServer(t, "")
	ctx := ctxFor(t)
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			var in0, in1, sum, diff []uint32
			for i := range 16 {
				a, b := float32(c)*100+float32(i)*0.5, float32(i)-2.25
				in0, in1 = append(in0, math.Float32bits(a)), append(in1, math.Float32bits(b))
				sum, diff = append(sum, math.Float32bits(a+b)), append(diff, math.Float32bits(a-b))
			}
			req := simpleRequest("simple_fp32", "FP32", words(in0), words(in1))
			req.Id = fmt.Sprint(c)
			resp, err := srv.Client.ModelInfer(ctx, req)
			if err != nil {
				t.Errorf("client %d: ModelInfer(simple_fp32): %v", c, err)
				return
			}
			if resp.GetId() != req.Id {
				t.Errorf("client %d: response id %q", c, resp.GetId())
			}
			checkSimpleResponse(t, resp, "FP32", words(sum), words(diff))
		})
	}
	wg.Wait()
}
