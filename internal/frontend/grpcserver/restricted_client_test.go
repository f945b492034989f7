package grpcserver_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// TestRestrictedRPCsNeedTheirHeader: with inference and model-config
// restricted, those RPCs (unary and streaming) answer Triton's UNAVAILABLE
// without the header or with a wrong value, and serve with it; other RPCs
// stay open.
func TestRestrictedRPCsNeedTheirHeader(t *testing.T) {
	t.Parallel()
	var rs protocol.Restrictions
	if err := rs.Add("grpc-restricted-protocol", "protocol", protocol.GRPCRestrictedHeaderPrefix, true, "inference,model-config:infer-key=open sesame"); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, setup{service: grpcserver.Options{Restricted: &rs}}, coretest.ModelDir{Name: "echo", Config: vector("")})
	const refused = "This protocol is restricted, expecting header 'triton-grpc-protocol-infer-key'"
	key := func(v ...string) context.Context {
		md := metadata.MD{}
		for _, v := range v {
			md.Append("triton-grpc-protocol-infer-key", v)
		}
		return metadata.NewOutgoingContext(t.Context(), md)
	}
	calls := map[string]func(context.Context) error{
		"ModelInfer": func(ctx context.Context) error {
			_, err := h.client.ModelInfer(ctx, request("echo", "r", 1))
			return err
		},
		"ModelConfig": func(ctx context.Context) error {
			_, err := h.client.ModelConfig(ctx, &pb.ModelConfigRequest{Name: "echo"})
			return err
		},
		"ModelStreamInfer": func(ctx context.Context) error {
			st, err := h.client.ModelStreamInfer(ctx)
			if err != nil {
				return err
			}
			if err := st.Send(request("echo", "s", 2)); err != nil {
				_, err = st.Recv()
				return err
			}
			resp, err := st.Recv()
			if err == nil && resp.GetErrorMessage() != "" {
				t.Errorf("stream error message %q", resp.GetErrorMessage())
			}
			return err
		},
	}
	for name, call := range calls {
		for _, ctx := range []context.Context{t.Context(), key("wrong"), key(""), key("open sesame2"), key("wrong", "open sesame")} {
			err := call(ctx)
			if st, _ := status.FromError(err); st.Code() != codes.Unavailable || st.Message() != refused {
				md, _ := metadata.FromOutgoingContext(ctx)
				t.Errorf("%s with %v: %v, want UNAVAILABLE %q", name, md, err, refused)
			}
		}
		if err := call(key("open sesame")); err != nil {
			t.Errorf("%s with the key: %v", name, err)
		}
	}
	if _, err := h.client.ServerLive(t.Context(), &pb.ServerLiveRequest{}); err != nil {
		t.Errorf("ServerLive is not restricted: %v", err)
	}
	if _, err := h.client.ModelMetadata(t.Context(), &pb.ModelMetadataRequest{Name: "echo"}); err != nil {
		t.Errorf("ModelMetadata is not restricted: %v", err)
	}
}

// TestRestrictedCallIsRefusedBeforeItsMessageIsRead: a restricted call
// without its key is refused when its headers arrive: a message far over
// the size limit gets the restriction's answer, not the size error reading
// it would give.
func TestRestrictedCallIsRefusedBeforeItsMessageIsRead(t *testing.T) {
	t.Parallel()
	var rs protocol.Restrictions
	if err := rs.Add("grpc-restricted-protocol", "protocol", protocol.GRPCRestrictedHeaderPrefix, true, "inference:k=v"); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, setup{service: grpcserver.Options{Restricted: &rs, MaxMessageBytes: 1 << 10},
		dial: []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(8 << 20))}},
		coretest.ModelDir{Name: "echo", Config: vector("")})
	big := request("echo", "big", 1)
	big.RawInputContents = [][]byte{make([]byte, 4<<20)}
	_, err := h.client.ModelInfer(t.Context(), big)
	if st, _ := status.FromError(err); st.Code() != codes.Unavailable || st.Message() != "This protocol is restricted, expecting header 'triton-grpc-protocol-k'" {
		t.Errorf("a 4 MiB request without the key: %v", err)
	}
}
