package client

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// Stream is a ModelStreamInfer call. Send may be called from one goroutine
// while Recv is called from another.
type Stream struct {
	s grpc.BidiStreamingClient[pb.ModelInferRequest, pb.ModelStreamInferResponse]
}

// Result is one message received on a stream.
type Result struct {
	ID       string
	Response *pb.ModelInferResponse // nil only when the server sent no infer_response
	Err      error                  // set when the server sent error_message
	Final    bool                   // the last message of its request
}

// OpenStream starts a ModelStreamInfer call.
func OpenStream(ctx context.Context, c pb.GRPCInferenceServiceClient) (*Stream, error) {
	s, err := c.ModelStreamInfer(ctx)
	if err != nil {
		return nil, fmt.Errorf("open stream: %w", err)
	}
	return &Stream{s: s}, nil
}

// Send sends one request.
func (st *Stream) Send(r Request) error {
	msg, err := r.Message()
	if err != nil {
		return err
	}
	return st.s.Send(msg)
}

// CloseSend tells the server no more requests follow.
func (st *Stream) CloseSend() error { return st.s.CloseSend() }

// Recv returns the next message. At the end of the stream it returns io.EOF
// (or the stream's error).
func (st *Stream) Recv() (Result, error) {
	msg, err := st.s.Recv()
	if err != nil {
		return Result{}, err
	}
	res := Result{Response: msg.GetInferResponse(), ID: msg.GetInferResponse().GetId()}
	if m := msg.GetErrorMessage(); m != "" {
		res.Err = errors.New(m)
	}
	if res.Response != nil {
		res.Final = IsFinal(res.Response)
	}
	return res, nil
}
