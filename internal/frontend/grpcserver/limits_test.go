package grpcserver_test

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/core/coretest"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// withParams adds n request parameters that nothing reserves.
func withParams(req *pb.ModelInferRequest, n int) *pb.ModelInferRequest {
	for i := range n {
		withParam(req, fmt.Sprintf("p%05d", i), intParam(1))
	}
	return req
}

// tensorParams is n tensor parameters that nothing reserves.
func tensorParams(n int) map[string]*pb.InferParameter {
	p := map[string]*pb.InferParameter{}
	for i := range n {
		p[fmt.Sprintf("p%05d", i)] = intParam(1)
	}
	return p
}

// TestRequestsPastTheProtocolBoundsAreRefused pushes a ModelInfer request
// past each bound the protocols share (inputs, requested outputs,
// raw_input_contents entries, request parameters, an input's or an
// output's parameters, an input's dimensions), as the HTTP frontend's test
// of the same name does: each is refused INVALID_ARGUMENT with the words
// of protocol.TooMany, naming the model, and a request at the bound is
// served.
func TestRequestsPastTheProtocolBoundsAreRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "m", Config: vector("")})
	h.p.Set("m", coretest.Echo())
	const (
		tensors = protocol.MaxRequestTensors
		nparams = protocol.MaxRequestParameters
		dims    = protocol.MaxTensorDims
	)
	many := func(n int, add func(*pb.ModelInferRequest, int)) *pb.ModelInferRequest {
		req := request("m", "many", 1)
		for i := range n {
			add(req, i)
		}
		return req
	}
	addInput := func(req *pb.ModelInferRequest, i int) {
		req.Inputs = append(req.Inputs, &pb.ModelInferRequest_InferInputTensor{Name: fmt.Sprintf("IN%05d", i), Datatype: "INT32", Shape: []int64{1}})
	}
	addOutput := func(req *pb.ModelInferRequest, i int) {
		req.Outputs = append(req.Outputs, &pb.ModelInferRequest_InferRequestedOutputTensor{Name: fmt.Sprintf("OUT%05d", i)})
	}
	addRaw := func(req *pb.ModelInferRequest, _ int) { req.RawInputContents = append(req.RawInputContents, nil) }
	inputParams := func(n int) *pb.ModelInferRequest {
		req := request("m", "input-params", 1)
		req.Inputs[0].Parameters = tensorParams(n)
		return req
	}
	outputParams := func(n int) *pb.ModelInferRequest {
		req := request("m", "output-params", 1)
		req.Outputs = []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: tensorParams(n)}}
		return req
	}
	shaped := func(n int) *pb.ModelInferRequest {
		req := request("m", "dims", 1)
		req.Inputs[0].Shape = make([]int64, n)
		for i := range req.Inputs[0].Shape {
			req.Inputs[0].Shape[i] = 1
		}
		return req
	}
	refusal := func(whose string, n int, what string, limit int) string {
		return fmt.Sprintf(`model "m": %s has %d %s, more than the %d the server accepts`, whose, n, what, limit)
	}
	for _, tc := range []struct {
		name string
		req  *pb.ModelInferRequest
		want string // the error past the bound; "" at the bound, served
	}{
		{"request parameters", withParams(request("m", "params", 1), nparams+1), refusal("the request", nparams+1, "parameters", nparams)},
		{"request parameters at the bound", withParams(request("m", "params", 1), nparams), ""},
		{"inputs", many(tensors, addInput), refusal("the request", tensors+1, "inputs", tensors)},
		{"requested outputs", many(tensors+1, addOutput), refusal("the request", tensors+1, "requested outputs", tensors)},
		{"raw_input_contents entries", many(tensors, addRaw), refusal("the request", tensors+1, "raw_input_contents entries", tensors)},
		{"input parameters", inputParams(nparams + 1), refusal("a tensor", nparams+1, "parameters", nparams)},
		{"input parameters at the bound", inputParams(nparams), ""},
		{"output parameters", outputParams(nparams + 1), refusal("a tensor", nparams+1, "parameters", nparams)},
		{"output parameters at the bound", outputParams(nparams), ""},
		{"dimensions", shaped(dims + 1), refusal("an input", dims+1, "dimensions", dims)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.client.ModelInfer(t.Context(), tc.req)
			if tc.want == "" {
				if err != nil {
					t.Errorf("a request at the bound: %v", err)
				}
				return
			}
			if st := status.Convert(err); st.Code() != codes.InvalidArgument || st.Message() != tc.want {
				t.Errorf("got %v\nwant INVALID_ARGUMENT %q", err, tc.want)
			}
		})
	}
	if _, err := h.client.ModelInfer(t.Context(), request("m", "after", 7)); err != nil {
		t.Errorf("a request after the refused ones: %v", err)
	}
}
