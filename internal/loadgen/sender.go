package loadgen

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// errBroken marks a failure after which a worker cannot go on (its stream
// ended).
var errBroken = errors.New("stream broken")

// streamRequest returns a copy of req that asks for a marked final.
func streamRequest(req *pb.ModelInferRequest) *pb.ModelInferRequest {
	r := proto.Clone(req).(*pb.ModelInferRequest)
	if r.Parameters == nil {
		r.Parameters = map[string]*pb.InferParameter{}
	}
	r.Parameters[client.EmptyFinalParam] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}
	return r
}

// sender sends one request at a time and waits for its end.
type sender interface {
	call(id string) outcome
	close()
}

func newSender(ctx context.Context, cfg Config, worker int) (sender, error) {
	if cfg.Mode == HTTP {
		return &httpSender{ctx: ctx, client: cfg.HTTP, req: cfg.httpReq}, nil
	}
	if cfg.Mode == Unary {
		return &unarySender{ctx: ctx, c: cfg.Client, req: proto.Clone(cfg.Request).(*pb.ModelInferRequest)}, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	st, err := cfg.Client.ModelStreamInfer(ctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("worker %d: open a stream: %w", worker, err)
	}
	return &streamSender{st: st, cancel: cancel, req: streamRequest(cfg.Request)}, nil
}

type unarySender struct {
	ctx context.Context
	c   pb.GRPCInferenceServiceClient
	req *pb.ModelInferRequest
}

func (u *unarySender) call(id string) outcome {
	u.req.Id = id
	o := outcome{sent: time.Now()}
	_, o.err = u.c.ModelInfer(u.ctx, u.req)
	o.done = time.Now()
	if o.err == nil {
		o.responses, o.first = 1, o.done
	}
	return o
}

func (u *unarySender) close() {}

type streamSender struct {
	st     grpc.BidiStreamingClient[pb.ModelInferRequest, pb.ModelStreamInferResponse]
	cancel context.CancelFunc
	req    *pb.ModelInferRequest
}

// call sends one request and reads its responses up to the final. Only
// this request is in flight on the stream, so every message is its own.
func (s *streamSender) call(id string) outcome {
	s.req.Id = id
	o := outcome{sent: time.Now()}
	if err := s.st.Send(s.req); err != nil {
		o.done, o.err = time.Now(), fmt.Errorf("%w: send: %v", errBroken, err)
		return o
	}
	for {
		msg, err := s.st.Recv()
		now := time.Now()
		if err != nil {
			o.done, o.err = now, fmt.Errorf("%w: %v", errBroken, err)
			return o
		}
		if o.first.IsZero() {
			o.first = now
		}
		if e := msg.GetErrorMessage(); e != "" {
			o.done, o.err = now, errors.New(e)
			return o
		}
		resp := msg.GetInferResponse()
		if len(resp.GetOutputs()) > 0 {
			o.responses++
		}
		if client.IsFinal(resp) {
			o.done = now
			return o
		}
	}
}

func (s *streamSender) close() {
	_ = s.st.CloseSend()
	s.cancel()
}
