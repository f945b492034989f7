package reliability

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// shmParam names a span of a shared-memory region in a tensor's
// parameters.
func shmParam(region string, offset, size int64) map[string]*pb.InferParameter {
	return map[string]*pb.InferParameter{
		"shared_memory_region":    {ParameterChoice: &pb.InferParameter_StringParam{StringParam: region}},
		"shared_memory_offset":    {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: offset}},
		"shared_memory_byte_size": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: size}},
	}
}

// TestShrunkSharedMemoryFailsItsRequestAlone: a client registers a
// region, queues a request whose inputs and outputs live in it behind a
// request that holds the model's only instance, and then truncates the
// object to nothing. When the request runs, its outputs cannot be placed:
// it fails with an error naming the object, and the server goes on
// serving, with its inputs read from what the region held when the
// request was decoded.
func TestShrunkSharedMemoryFailsItsRequestAlone(t *testing.T) {
	srv := start(t, "")
	_, c := srv.Dial(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	key := fmt.Sprintf("/tritonhost-shrink-%d", os.Getpid())
	path := filepath.Join("/dev/shm", key[1:])
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Skipf("POSIX shared memory is not available here: %v", err)
	}
	t.Cleanup(func() { f.Close(); os.Remove(path) })
	data := make([]byte, 4096)
	for i, v := range []uint32{5, 6, 0, 0, 0} { // IN [5,6] at 0, DELAY [0,0] at 8, WAIT [0] at 16
		binary.LittleEndian.PutUint32(data[4*i:], v)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SystemSharedMemoryRegister(ctx, &pb.SystemSharedMemoryRegisterRequest{Name: "r", Key: key, ByteSize: 4096}); err != nil {
		t.Fatal(err)
	}

	// The blocker holds repeat_int32's only instance for 1.5 s.
	blocker, err := client.OpenStream(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := blocker.Send(client.Request{Model: "repeat_int32", ID: "blocker", Inputs: []client.Tensor{
		client.Int32s("IN", []int64{1}, 1), client.Uint32s("DELAY", []int64{1}, 0), client.Uint32s("WAIT", []int64{1}, 1500)}}); err != nil {
		t.Fatal(err)
	}
	if res, err := blocker.Recv(); err != nil || res.Err != nil {
		t.Fatalf("the blocker's first response: %v %v", res.Err, err)
	}

	// The request in shared memory, then one the server refuses at once:
	// its answer says the first was read, decoded and queued.
	stCtx, stCancel := context.WithTimeout(ctx, 20*time.Second)
	defer stCancel()
	st, err := c.ModelStreamInfer(stCtx)
	if err != nil {
		t.Fatal(err)
	}
	inShm := &pb.ModelInferRequest{ModelName: "repeat_int32", Id: "in-shm",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "IN", Datatype: "INT32", Shape: []int64{2}, Parameters: shmParam("r", 0, 8)},
			{Name: "DELAY", Datatype: "UINT32", Shape: []int64{2}, Parameters: shmParam("r", 8, 8)},
			{Name: "WAIT", Datatype: "UINT32", Shape: []int64{1}, Parameters: shmParam("r", 16, 4)},
		},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{
			{Name: "OUT", Parameters: shmParam("r", 64, 4)}, {Name: "IDX", Parameters: shmParam("r", 128, 4)},
		},
		Parameters: map[string]*pb.InferParameter{client.EmptyFinalParam: {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}}
	for _, m := range []*pb.ModelInferRequest{inShm, {ModelName: "nope", Id: "marker"}} {
		if err := st.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	if m, err := st.Recv(); err != nil || m.GetInferResponse().GetId() != "marker" {
		t.Fatalf("first message on the stream: %v %v, want the refusal of \"marker\"", m, err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}

	var errs []string
	for {
		m, err := st.Recv()
		if err != nil {
			t.Fatalf("the stream ended (%v) before the request's final response; server exited: %v", err, srv.Exited())
		}
		if e := m.GetErrorMessage(); e != "" {
			errs = append(errs, e)
		}
		if client.IsFinal(m.GetInferResponse()) {
			break
		}
	}
	if len(errs) == 0 || !strings.Contains(errs[0], "Invalid shared memory region: '"+key+"'") {
		t.Errorf("the request's errors: %q, want them to name the shrunk object", errs)
	}
	if srv.Exited() {
		t.Fatal("the server exited")
	}
	if err := unaryIdentity(c)(ctx); err != nil {
		t.Fatalf("the server does not serve after the shrink: %v", err)
	}
	if _, err := c.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{Name: "r"}); err != nil {
		t.Errorf("unregister the region: %v", err)
	}
	t.Logf("a request whose region shrank while it was queued failed with %d error response(s): %s", len(errs), errs[0])
}
