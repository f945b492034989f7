package grpcserver_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

var shmSeq atomic.Int64

// shmObject creates a POSIX shared-memory object of size bytes as a client
// does (shm_open, ftruncate) and returns its key and an open file on it.
func shmObject(t *testing.T, size int64) (string, *os.File) {
	t.Helper()
	name := fmt.Sprintf("tritonhost-grpc-test-%d-%d", os.Getpid(), shmSeq.Add(1))
	path := filepath.Join("/dev/shm", name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Skipf("POSIX shared memory is not available here: %v", err)
	}
	t.Cleanup(func() { f.Close(); os.Remove(path) })
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return "/" + name, f
}

func shmTensor(region string, offset, size int64) map[string]*pb.InferParameter {
	p := map[string]*pb.InferParameter{
		"shared_memory_region":    {ParameterChoice: &pb.InferParameter_StringParam{StringParam: region}},
		"shared_memory_byte_size": intParam(size),
	}
	if offset != 0 {
		p["shared_memory_offset"] = intParam(offset)
	}
	return p
}

// TestSharedMemoryInputsAndOutputs: a client registers a region, puts the
// input in it and asks for the output there; the response names the
// output but carries no data, which is in the region. Status lists the
// region; after Unregister nothing stays mapped.
func TestSharedMemoryInputsAndOutputs(t *testing.T) {
	t.Parallel()
	reg := sharedmem.New(sharedmem.Options{})
	h := newHarness(t, setup{service: grpcserver.Options{SharedMemory: reg}}, coretest.ModelDir{Name: "echo", Config: vector("")})
	key, f := shmObject(t, 4096)
	if _, err := h.client.SystemSharedMemoryRegister(t.Context(), &pb.SystemSharedMemoryRegisterRequest{Name: "data", Key: key, Offset: 0, ByteSize: 4096}); err != nil {
		t.Fatal(err)
	}
	in := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 7), 0xfffffff9)
	if _, err := f.WriteAt(in, 100); err != nil {
		t.Fatal(err)
	}
	req := &pb.ModelInferRequest{ModelName: "echo", Id: "shm",
		Inputs:  []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{2}, Parameters: shmTensor("data", 100, 8)}},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: shmTensor("data", 2048, 64)}}}
	resp, err := h.client.ModelInfer(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if outs, raw := resp.GetOutputs(), resp.GetRawOutputContents(); len(outs) != 1 || outs[0].GetName() != "OUTPUT0" || outs[0].GetDatatype() != "INT32" ||
		len(outs[0].GetShape()) != 1 || outs[0].GetShape()[0] != 2 || len(raw) != 1 || len(raw[0]) != 0 {
		t.Errorf("response %v, want OUTPUT0 INT32 [2] with empty raw contents", resp)
	}
	got := make([]byte, 8)
	if _, err := f.ReadAt(got, 2048); err != nil || string(got) != string(in) {
		t.Errorf("the region holds %x at the output's place, want %x (%v)", got, in, err)
	}

	// The stream places outputs the same way.
	clear(got)
	f.WriteAt(make([]byte, 8), 2048)
	st := h.open(t, true)
	st.send(req)
	if m := st.recv(); m.GetErrorMessage() != "" || len(m.GetInferResponse().GetRawOutputContents()[0]) != 0 {
		t.Errorf("stream: %s", describe(m))
	}
	if _, err := f.ReadAt(got, 2048); err != nil || string(got) != string(in) {
		t.Errorf("after the stream the region holds %x, want %x", got, in)
	}

	status, err := h.client.SystemSharedMemoryStatus(t.Context(), &pb.SystemSharedMemoryStatusRequest{})
	if r := status.GetRegions()["data"]; err != nil || len(status.GetRegions()) != 1 || r.GetKey() != key || r.GetByteSize() != 4096 || r.GetOffset() != 0 {
		t.Errorf("SystemSharedMemoryStatus: %v %v", status, err)
	}
	_, err = h.client.SystemSharedMemoryStatus(t.Context(), &pb.SystemSharedMemoryStatusRequest{Name: "nope"})
	wantStatus(t, "status of an unknown region", err, codes.NotFound, "Unable to find system shared memory region: 'nope'")
	_, err = h.client.SystemSharedMemoryRegister(t.Context(), &pb.SystemSharedMemoryRegisterRequest{Name: "data", Key: key, ByteSize: 8})
	wantStatus(t, "a second region of the name", err, codes.AlreadyExists, "shared memory region 'data' already in manager")
	if _, err := h.client.SystemSharedMemoryUnregister(t.Context(), &pb.SystemSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatal(err)
	}
	// The stream's request is finished, and its leases released, just
	// after its response is sent.
	testenv.Eventually(func() bool { return reg.Mapped() == 0 })
	if n := reg.Mapped(); n != 0 {
		t.Errorf("%d region(s) still mapped after the requests finished and the regions were unregistered", n)
	}
}

// TestSharedMemoryRefusals: Triton's errors for spans outside a region and
// an output larger than its place; the region stays usable.
func TestSharedMemoryRefusals(t *testing.T) {
	t.Parallel()
	reg := sharedmem.New(sharedmem.Options{})
	h := newHarness(t, setup{service: grpcserver.Options{SharedMemory: reg}}, coretest.ModelDir{Name: "echo", Config: vector("")})
	key, _ := shmObject(t, 4096)
	_, err := h.client.SystemSharedMemoryRegister(t.Context(), &pb.SystemSharedMemoryRegisterRequest{Name: "r", Key: key, Offset: 4000, ByteSize: 200})
	wantStatusPrefix(t, "a region past the object", err, codes.InvalidArgument, "failed to register shared memory region 'r': invalid args")
	_, err = h.client.SystemSharedMemoryRegister(t.Context(), &pb.SystemSharedMemoryRegisterRequest{Name: "r", Key: "/no-such-object", ByteSize: 8})
	wantStatusPrefix(t, "no such object", err, codes.Internal, "Unable to open shared memory region: '/no-such-object'")
	if _, err := h.client.SystemSharedMemoryRegister(t.Context(), &pb.SystemSharedMemoryRegisterRequest{Name: "r", Key: key, ByteSize: 64}); err != nil {
		t.Fatal(err)
	}
	in := func(offset, size int64) *pb.ModelInferRequest {
		return &pb.ModelInferRequest{ModelName: "echo", Id: "x",
			Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{2}, Parameters: shmTensor("r", offset, size)}}}
	}
	_, err = h.client.ModelInfer(t.Context(), in(64, 8))
	wantStatus(t, "an offset at the end", err, codes.InvalidArgument, "Invalid offset for shared memory region: 'r'")
	_, err = h.client.ModelInfer(t.Context(), in(60, 8))
	wantStatus(t, "a span past the end", err, codes.InvalidArgument, "Invalid offset + byte size for shared memory region: 'r'")
	_, err = h.client.ModelInfer(t.Context(), in(-8, 8))
	wantStatus(t, "a negative offset", err, codes.InvalidArgument, "Invalid offset for shared memory region: 'r'")
	_, err = h.client.ModelInfer(t.Context(), in(0, 12))
	wantStatus(t, "a size that is not the tensor's", err, codes.InvalidArgument,
		"[request id: x] input byte size mismatch for input 'INPUT0' for model 'echo'. Expected 8, got 12")
	small := in(0, 8)
	small.Outputs = []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: shmTensor("r", 32, 4)}}
	_, err = h.client.ModelInfer(t.Context(), small)
	wantStatus(t, "an output larger than its place", err, codes.Internal,
		"shared memory size specified with the request for output 'OUTPUT0' (4 bytes) should be at least 8 bytes to hold the results")
	if _, err := h.client.ModelInfer(t.Context(), in(0, 8)); err != nil {
		t.Errorf("a good request after the refusals: %v", err)
	}
	if _, err := h.client.SystemSharedMemoryUnregister(t.Context(), &pb.SystemSharedMemoryUnregisterRequest{Name: "r"}); err != nil {
		t.Fatal(err)
	}
	// The good request's lease goes just after its response is sent; a
	// refused request's lease would stay.
	testenv.Eventually(func() bool { return reg.Mapped() == 0 })
	if n := reg.Mapped(); n != 0 {
		t.Errorf("%d region(s) still mapped: a refused request kept its lease", n)
	}
}

// TestARegionOutlivesItsUnregisterWhileARequestUsesIt: a region
// unregistered while a request is still in the backend stays mapped, and
// the request's output reaches it; the mapping goes when the request is
// finished.
func TestARegionOutlivesItsUnregisterWhileARequestUsesIt(t *testing.T) {
	t.Parallel()
	reg := sharedmem.New(sharedmem.Options{})
	h := newHarness(t, setup{service: grpcserver.Options{SharedMemory: reg}}, coretest.ModelDir{Name: "slow", Config: vector("")})
	gate := coretest.NewGate(t)
	h.p.Set("slow", coretest.Gated(gate, coretest.Echo()))
	key, f := shmObject(t, 4096)
	if _, err := h.client.SystemSharedMemoryRegister(t.Context(), &pb.SystemSharedMemoryRegisterRequest{Name: "r", Key: key, ByteSize: 4096}); err != nil {
		t.Fatal(err)
	}
	f.WriteAt(binary.LittleEndian.AppendUint32(nil, 42), 0)
	req := &pb.ModelInferRequest{ModelName: "slow", Id: "s",
		Inputs:  []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1}, Parameters: shmTensor("r", 0, 4)}},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: shmTensor("r", 1024, 4)}}}
	errs := make(chan error, 1)
	go func() {
		_, err := h.client.ModelInfer(t.Context(), req)
		errs <- err
	}()
	h.p.Reached(t, "s")
	if _, err := h.client.SystemSharedMemoryUnregister(t.Context(), &pb.SystemSharedMemoryUnregisterRequest{Name: "r"}); err != nil {
		t.Fatal(err)
	}
	if n := reg.Mapped(); n != 1 {
		t.Errorf("Mapped = %d while the request runs, want 1", n)
	}
	gate.Open()
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := f.ReadAt(got, 1024); err != nil || binary.LittleEndian.Uint32(got) != 42 {
		t.Errorf("the output in the unregistered region is %x, want 42", got)
	}
	testenv.Eventually(func() bool { return reg.Mapped() == 0 })
	if n := reg.Mapped(); n != 0 {
		t.Errorf("Mapped = %d after the request finished, want 0", n)
	}
}

// TestCudaSharedMemoryAnswersAsTritonWithoutGPUs: no CUDA region can be
// registered; listing and clearing them succeed, as Triton built without
// GPU support answers (Triton's examples clear them before they start).
func TestCudaSharedMemoryAnswersAsTritonWithoutGPUs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	if _, err := h.client.CudaSharedMemoryUnregister(t.Context(), &pb.CudaSharedMemoryUnregisterRequest{}); err != nil {
		t.Errorf("CudaSharedMemoryUnregister: %v", err)
	}
	if st, err := h.client.CudaSharedMemoryStatus(t.Context(), &pb.CudaSharedMemoryStatusRequest{}); err != nil || len(st.GetRegions()) != 0 {
		t.Errorf("CudaSharedMemoryStatus: %v %v", st, err)
	}
	_, err := h.client.CudaSharedMemoryStatus(t.Context(), &pb.CudaSharedMemoryStatusRequest{Name: "g"})
	wantStatus(t, "status of a CUDA region", err, codes.NotFound, "Unable to find cuda shared memory region: 'g'")
	_, err = h.client.CudaSharedMemoryRegister(t.Context(), &pb.CudaSharedMemoryRegisterRequest{Name: "g", RawHandle: []byte{1}, ByteSize: 8})
	wantStatus(t, "register a CUDA region", err, codes.InvalidArgument, "failed to register CUDA shared memory region: 'g', GPUs not supported")
}
