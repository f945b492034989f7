// Package client is a small Go client for Triton's protocols: over gRPC,
// typed tensors to requests, responses back to tensors, and a stream that
// tells when each request is complete; over HTTP/REST (HTTP), the model
// queries with the gRPC protocol's messages and inference requests in the
// binary tensor extension. It works against tritonhost and against Triton
// itself; `tritonhost perf` and its load generator use it for both.
//
// API for Go programs that talk to a server, and apart from the server: it
// imports no server package, only the generated protocol messages
// (tritonhost/internal/inferencepb) and model configuration
// (tritonhost/core/configpb). Dial's stub and Result.Response are of the
// generated types; outside this module a program builds requests with
// Request and reads responses with Outputs, without naming them.
package client

import (
	"fmt"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// Reserved parameters of decoupled streaming.
const (
	// FinalResponseParam marks, on every streamed response, whether it is
	// the last one of its request.
	FinalResponseParam = "triton_final_response"
	// EmptyFinalParam asks the server to send an empty response when a
	// request completes without one.
	EmptyFinalParam = "triton_enable_empty_final_response"
)

// Dial connects to a server without TLS, allowing messages of up to
// maxMessageBytes (0: 256 MiB).
func Dial(addr string, maxMessageBytes int) (*grpc.ClientConn, pb.GRPCInferenceServiceClient, error) {
	if maxMessageBytes <= 0 {
		maxMessageBytes = 256 << 20
	}
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageBytes), grpc.MaxCallSendMsgSize(maxMessageBytes)))
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	return conn, pb.NewGRPCInferenceServiceClient(conn), nil
}

// Request describes one inference request.
type Request struct {
	Model   string
	Version int64 // 0: the newest
	ID      string
	Inputs  []Tensor
	Outputs []string // empty: every output
	// Params are request parameters (bool, int64, uint64, float64 or string values).
	Params map[string]any
}

// Message encodes the request, with contents in raw_input_contents.
func (r Request) Message() (*pb.ModelInferRequest, error) {
	msg := &pb.ModelInferRequest{ModelName: r.Model, Id: r.ID}
	if r.Version > 0 {
		msg.ModelVersion = strconv.FormatInt(r.Version, 10)
	}
	for _, in := range r.Inputs {
		msg.Inputs = append(msg.Inputs, &pb.ModelInferRequest_InferInputTensor{Name: in.Name, Datatype: in.Datatype, Shape: in.Shape})
		msg.RawInputContents = append(msg.RawInputContents, in.Data)
	}
	for _, out := range r.Outputs {
		msg.Outputs = append(msg.Outputs, &pb.ModelInferRequest_InferRequestedOutputTensor{Name: out})
	}
	if len(r.Params) > 0 {
		msg.Parameters = make(map[string]*pb.InferParameter, len(r.Params))
		for k, v := range r.Params {
			p, err := Param(v)
			if err != nil {
				return nil, fmt.Errorf("parameter %q: %w", k, err)
			}
			msg.Parameters[k] = p
		}
	}
	return msg, nil
}

// Param encodes a parameter value.
func Param(v any) (*pb.InferParameter, error) {
	switch v := v.(type) {
	case bool:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: v}}, nil
	case int:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: int64(v)}}, nil
	case int64:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: v}}, nil
	case uint64:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: v}}, nil
	case float64:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_DoubleParam{DoubleParam: v}}, nil
	case string:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: v}}, nil
	}
	return nil, fmt.Errorf("unsupported parameter type %T", v)
}

// Outputs decodes the output tensors of a response.
func Outputs(resp *pb.ModelInferResponse) ([]Tensor, error) {
	outs := resp.GetOutputs()
	raw := resp.GetRawOutputContents()
	if len(raw) != 0 && len(raw) != len(outs) {
		return nil, fmt.Errorf("response has %d outputs but %d raw contents", len(outs), len(raw))
	}
	tensors := make([]Tensor, len(outs))
	for i, o := range outs {
		tensors[i] = Tensor{Name: o.GetName(), Datatype: o.GetDatatype(), Shape: o.GetShape()}
		if len(raw) > 0 {
			tensors[i].Data = raw[i]
		}
	}
	return tensors, nil
}

// Output returns the named output of a response.
func Output(resp *pb.ModelInferResponse, name string) (Tensor, error) {
	outs, err := Outputs(resp)
	if err != nil {
		return Tensor{}, err
	}
	for _, t := range outs {
		if t.Name == name {
			return t, nil
		}
	}
	return Tensor{}, fmt.Errorf("response has no output %q", name)
}

// IsFinal reports whether a streamed response carries
// triton_final_response = true.
func IsFinal(resp *pb.ModelInferResponse) bool {
	p, ok := resp.GetParameters()[FinalResponseParam]
	return ok && p.GetBoolParam()
}
