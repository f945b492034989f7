package reliability

import (
	"context"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// rawCodec sends pre-encoded bytes as a message (under gRPC's "proto"
// name, so the server decodes them as usual).
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

var _ encoding.CodecV2 = rawCodec{}

// inflatingRequest encodes a ModelInferRequest for model whose one input
// carries n packed uint64_contents of one wire byte each: n bytes on the
// wire, 8n once decoded.
func inflatingRequest(model string, n int) []byte {
	var contents []byte
	contents = protowire.AppendTag(contents, 5, protowire.BytesType) // uint64_contents, packed
	contents = protowire.AppendVarint(contents, uint64(n))
	contents = append(contents, make([]byte, n)...)
	var input []byte
	input = protowire.AppendTag(input, 1, protowire.BytesType)
	input = protowire.AppendString(input, "INPUT0")
	input = protowire.AppendTag(input, 2, protowire.BytesType)
	input = protowire.AppendString(input, "UINT64")
	input = protowire.AppendTag(input, 3, protowire.VarintType)
	input = protowire.AppendVarint(input, uint64(n))
	input = protowire.AppendTag(input, 5, protowire.BytesType)
	input = protowire.AppendBytes(input, contents)
	var msg []byte
	msg = protowire.AppendTag(msg, 1, protowire.BytesType)
	msg = protowire.AppendString(msg, model)
	msg = protowire.AppendTag(msg, 5, protowire.BytesType)
	msg = protowire.AppendBytes(msg, input)
	return msg
}

// TestTypedContentsDoNotInflateMemory: requests whose typed contents would
// decode to eight times their size, for a model that does not exist and
// for one that does not take their data type, two at once, are refused
// without decoding them: the server's memory grows by about twice their
// wire size (gRPC's receive buffers, and the one contiguous copy the
// request is decoded from), not by what they would decode to.
func TestTypedContentsDoNotInflateMemory(t *testing.T) {
	srv := start(t, "")
	size := scale(32<<20, 250<<20)
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(300<<20), grpc.MaxCallRecvMsgSize(300<<20), grpc.ForceCodecV2(rawCodec{})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	before := srv.ProcStatus(t, "VmHWM")
	var wg sync.WaitGroup
	for _, model := range []string{"identity_int32", "no_such_model"} {
		msg := inflatingRequest(model, size)
		wg.Go(func() {
			var resp []byte
			err := conn.Invoke(context.Background(), "/inference.GRPCInferenceService/ModelInfer", &msg, &resp)
			if err == nil {
				t.Errorf("%s: a request of %d MiB of typed contents was accepted", model, size>>20)
				return
			}
			t.Logf("%s: %v", model, err)
		})
	}
	wg.Wait()
	peak := srv.ProcStatus(t, "VmHWM")
	growth := peak - before
	if limit := int64(5 * size); growth > limit {
		t.Errorf("two requests of %d MiB raised the peak RSS by %d MiB (more than %d MiB)", size>>20, growth>>20, limit>>20)
	}
	t.Logf("two requests of %d MiB packed uint64_contents (%d MiB each once decoded): peak RSS %d MiB -> %d MiB",
		size>>20, 8*size>>20, before>>20, peak>>20)
	if err := unaryIdentity(dialClient(t, srv))(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func dialClient(t *testing.T, srv *testenv.Server) pb.GRPCInferenceServiceClient {
	_, c := srv.Dial(t)
	return c
}
