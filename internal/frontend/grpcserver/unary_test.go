package grpcserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestModelInferReturnsTheOneResponse: the unary RPC answers with the
// model's response, labelled with the model, version and request id, and
// without the streaming-only triton_final_response.
func TestModelInferReturnsTheOneResponse(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")})
	resp, err := h.client.ModelInfer(t.Context(), request("echo", "r1", 3, -4))
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetModelName() != "echo" || resp.GetModelVersion() != "1" || resp.GetId() != "r1" || len(resp.GetParameters()) != 0 {
		t.Errorf("response header %q %q %q, parameters %v", resp.GetModelName(), resp.GetModelVersion(), resp.GetId(), resp.GetParameters())
	}
	outs := resp.GetOutputs()
	if len(outs) != 1 || outs[0].GetName() != "OUTPUT0" || outs[0].GetDatatype() != "INT32" || len(outs[0].GetShape()) != 1 || outs[0].GetShape()[0] != 2 {
		t.Fatalf("outputs %v, want OUTPUT0 INT32 [2]", outs)
	}
	if got := coretest.Int32s(resp.GetRawOutputContents()[0]); len(got) != 2 || got[0] != 3 || got[1] != -4 {
		t.Errorf("OUTPUT0 = %v, want [3 -4]", got)
	}
}

// TestModelInferMapsErrorsToStatusCodes: every failure reaches the client
// as a gRPC status with the code status.go maps the core code to.
func TestModelInferMapsErrorsToStatusCodes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")}, coretest.ModelDir{Name: "dec", Config: vector(decoupled)},
		coretest.ModelDir{Name: "fail", Config: vector("")},
		coretest.ModelDir{Name: "plain", Config: vector("")})
	// "fail" answers with an error of the code the request's "code" parameter names.
	h.p.Set("fail", coretest.Answering(coretest.Reply(func(r *core.Request) *core.Response {
		code := core.Code(r.Parameters()[0].Int)
		return &core.Response{Err: core.Errorf(code, "failing with %v", code)}
	})))
	h.p.Set("plain", coretest.Fail(errors.New("an error without a code")))
	failing := func(code core.Code) *pb.ModelInferRequest {
		return withParam(request("fail", "f", 1), "code", intParam(int64(code)))
	}
	badVersion, unknownVersion, shm, short := request("echo", "v", 1), request("echo", "v", 1), request("echo", "s", 1), request("echo", "e", 1)
	badVersion.ModelVersion, unknownVersion.ModelVersion = "x", "7"
	short.Inputs[0].Shape = []int64{2}
	shm.Inputs[0].Parameters = map[string]*pb.InferParameter{"shared_memory_region": {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "r"}}}
	for _, tc := range []struct {
		name string
		req  *pb.ModelInferRequest
		code codes.Code
		text string
	}{
		{"a decoupled model", request("dec", "d", 1), codes.Unimplemented, "ModelInfer RPC doesn't support models with decoupled transaction policy"},
		{"an unknown model", request("nope", "n", 1), codes.NotFound, "Request for unknown model: 'nope' is not found"},
		{"an unknown version", unknownVersion, codes.NotFound, "Request for unknown model: 'echo' version 7 is not found"},
		{"a malformed version", badVersion, codes.InvalidArgument,
			"failed to get model version from specified version string 'x' (details: stol), version should be an integral value > 0"},
		{"an input shorter than its shape", short, codes.InvalidArgument,
			"[request id: e] input byte size mismatch for input 'INPUT0' for model 'echo'. Expected 8, got 4"},
		{"shared memory without a size", shm, codes.InvalidArgument,
			"'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor 'INPUT0'"},
		{"an error without a code", request("plain", "p", 1), codes.Unknown, "an error without a code"},
		{"INTERNAL", failing(core.CodeInternal), codes.Internal, "failing with Internal"},
		{"NOT_FOUND", failing(core.CodeNotFound), codes.NotFound, "failing"},
		{"INVALID_ARG", failing(core.CodeInvalidArg), codes.InvalidArgument, "failing"},
		{"UNAVAILABLE", failing(core.CodeUnavailable), codes.Unavailable, "failing"},
		{"UNSUPPORTED", failing(core.CodeUnsupported), codes.Unimplemented, "failing"},
		{"ALREADY_EXISTS", failing(core.CodeAlreadyExists), codes.AlreadyExists, "failing"},
		{"CANCELLED", failing(core.CodeCancelled), codes.Canceled, "failing"},
		{"UNKNOWN", failing(core.CodeUnknown), codes.Unknown, "failing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := h.client.ModelInfer(t.Context(), tc.req)
			if status.Code(err) != tc.code || !strings.Contains(status.Convert(err).Message(), tc.text) {
				t.Errorf("ModelInfer: %v, want %v mentioning %q", err, tc.code, tc.text)
			}
		})
	}
}

// TestModelInferCancelledByTheClient: a client that gives up cancels the
// request, which its backend sees, and gets CANCELED; the server logs the
// notification at verbose level 1 with the request id, in the words
// Triton's cancellation tests look for.
func TestModelInferCancelledByTheClient(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{verbose: 1}, coretest.ModelDir{Name: "wait", Config: vector("")})
	h.p.Set("wait", coretest.Async(coretest.AwaitCancel()))
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	go func() {
		_, err := h.client.ModelInfer(ctx, request("wait", "w", 1))
		errs <- err
	}()
	h.p.Reached(t, "w")
	cancel()
	if err := <-errs; status.Code(err) != codes.Canceled {
		t.Errorf("ModelInfer: %v, want CANCELED", err)
	}
	h.p.WaitCalls(t, "w", "Cancelled", 1)
	testenv.WaitUntil(t, "the cancellation in the log", func() bool {
		return strings.Contains(h.log.String(), "Cancellation notification received for ModelInferHandler, request id: w\n")
	})
}
