// These tests open CUDA regions through package gpu on the fake CUDA
// driver, which package gpu loads with purego: with or without cgo.

package grpcserver_test

import (
	"encoding/binary"
	"io"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	"github.com/tritonhost/tritonhost/internal/gpu"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// cudaHarness is a harness whose registry opens CUDA regions on the two
// GPUs of a fake CUDA driver, with a CUDA client on the same driver.
type cudaHarness struct {
	*harness
	reg    *sharedmem.Registry
	cuda   *testenv.CUDAClient // the client's side of the GPUs
	driver string              // the fake driver's path, for testenv.ReadFakeCUDA
}

// newCUDAHarness starts it. At cleanup, after the server stopped, the
// registry is closed as the server closes it at shutdown, and the fake
// driver must then hold no IPC handle open.
func newCUDAHarness(t *testing.T, models ...coretest.ModelDir) *cudaHarness {
	t.Helper()
	path := testenv.FakeCUDADriver(t)
	drv, err := gpu.OpenDriver(path)
	if err != nil {
		t.Fatal(err)
	}
	devs, err := gpu.NewDevices(drv, []int{0, 1}, gpu.MemoryOptions{CUDAPoolBytes: map[int]uint64{0: 0, 1: 0}}, serverlog.New(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { devs.Close() })
	reg := sharedmem.New(sharedmem.Options{CUDA: sharedmem.CUDAOptions{Driver: devs}})
	t.Cleanup(func() {
		if left, err := reg.Close(); left != 0 || err != nil {
			t.Errorf("closing the registry: %d regions left, %v", left, err)
		}
		if s := testenv.ReadFakeCUDA(t, path); s.LiveIPC != 0 || s.DeviceMismatches != 0 {
			t.Errorf("after shutdown the fake driver holds %+v: want no IPC handle open, every copy on its GPU", s)
		}
	})
	h := newHarness(t, setup{service: grpcserver.Options{SharedMemory: reg}}, models...)
	return &cudaHarness{harness: h, reg: reg, cuda: testenv.NewCUDAClient(t, path), driver: path}
}

// region allocates size bytes on GPU dev, as a client does, registers them
// as name, and returns their address in the client.
func (h *cudaHarness) region(t *testing.T, name string, dev, size int) uintptr {
	t.Helper()
	mem := h.cuda.Alloc(dev, size)
	req := &pb.CudaSharedMemoryRegisterRequest{Name: name, RawHandle: h.cuda.IPCHandle(dev, mem), DeviceId: int64(dev), ByteSize: uint64(size)}
	if _, err := h.client.CudaSharedMemoryRegister(t.Context(), req); err != nil {
		t.Fatalf("register %q: %v", name, err)
	}
	return mem
}

func (h *cudaHarness) liveIPC(t *testing.T) int64 { return testenv.ReadFakeCUDA(t, h.driver).LiveIPC }

func int32s(values ...int32) []byte {
	var b []byte
	for _, v := range values {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// TestCudaSharedMemoryAsTritonsCudashmClient does what Triton's
// simple_grpc_cudashm_client does: clear every region, register output and
// input regions, infer with the tensors there, read the output from device
// memory, check Status, unregister everything. The output region is on
// the other GPU. The stream places outputs the same way.
func TestCudaSharedMemoryAsTritonsCudashmClient(t *testing.T) {
	t.Parallel()
	h := newCUDAHarness(t, coretest.ModelDir{Name: "echo", Config: vector("")})
	if _, err := h.client.SystemSharedMemoryUnregister(t.Context(), &pb.SystemSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.CudaSharedMemoryUnregister(t.Context(), &pb.CudaSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatal(err)
	}
	out := h.region(t, "output0_data", 1, 64)
	in := h.region(t, "input0_data", 0, 64)
	data := int32s(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, -15)
	h.cuda.Write(0, in, data)
	req := &pb.ModelInferRequest{ModelName: "echo", Id: "cudashm",
		Inputs:  []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{16}, Parameters: shmTensor("input0_data", 0, 64)}},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: shmTensor("output0_data", 0, 64)}}}
	resp, err := h.client.ModelInfer(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if outs, raw := resp.GetOutputs(), resp.GetRawOutputContents(); len(outs) != 1 || outs[0].GetDatatype() != "INT32" ||
		!slices.Equal(outs[0].GetShape(), []int64{16}) || len(raw) != 1 || len(raw[0]) != 0 {
		t.Errorf("response %v, want OUTPUT0 INT32 [16] and no data", resp)
	}
	if got := h.cuda.Read(1, out, 64); string(got) != string(data) {
		t.Errorf("output0_data holds %x, want %x", got, data)
	}

	h.cuda.Write(1, out, make([]byte, 64))
	st := h.open(t, true)
	st.send(req)
	if m := st.recv(); m.GetErrorMessage() != "" {
		t.Errorf("stream: %s", describe(m))
	}
	if got := h.cuda.Read(1, out, 64); string(got) != string(data) {
		t.Errorf("after the stream output0_data holds %x, want %x", got, data)
	}

	status, err := h.client.CudaSharedMemoryStatus(t.Context(), &pb.CudaSharedMemoryStatusRequest{})
	if r := status.GetRegions()["output0_data"]; err != nil || len(status.GetRegions()) != 2 || r.GetName() != "output0_data" ||
		r.GetDeviceId() != 1 || r.GetByteSize() != 64 {
		t.Errorf("CudaSharedMemoryStatus: %v %v", status, err)
	}
	md, err := h.client.ServerMetadata(t.Context(), &pb.ServerMetadataRequest{})
	if exts := md.GetExtensions(); err != nil || !slices.Contains(exts, "cuda_shared_memory") ||
		slices.Index(exts, "cuda_shared_memory") != slices.Index(exts, "system_shared_memory")+1 {
		t.Errorf("ServerMetadata extensions %v (%v): want cuda_shared_memory after system_shared_memory", exts, err)
	}
	if n := h.liveIPC(t); n != 2 {
		t.Errorf("%d IPC handles open, want the 2 regions'", n)
	}
	if _, err := h.client.CudaSharedMemoryUnregister(t.Context(), &pb.CudaSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(func() bool { return h.liveIPC(t) == 0 })
	if n := h.liveIPC(t); n != 0 {
		t.Errorf("%d IPC handles open after CudaSharedMemoryUnregister", n)
	}
	h.region(t, "left_registered", 0, 64) // closed at shutdown (see newCUDAHarness)
}

// TestCudaSharedMemoryRefusalsInTritonsWords: Triton's code and text for
// each refusal, over gRPC; the regions stay usable after them.
func TestCudaSharedMemoryRefusalsInTritonsWords(t *testing.T) {
	t.Parallel()
	h := newCUDAHarness(t, coretest.ModelDir{Name: "echo", Config: vector("")})
	key, _ := shmObject(t, 4096)
	if _, err := h.client.SystemSharedMemoryRegister(t.Context(), &pb.SystemSharedMemoryRegisterRequest{Name: "sys", Key: key, ByteSize: 64}); err != nil {
		t.Fatal(err)
	}
	mem := h.region(t, "gpu", 0, 64)
	handle := h.cuda.IPCHandle(0, mem)
	register := func(name string, raw []byte, dev int64, size uint64) error {
		_, err := h.client.CudaSharedMemoryRegister(t.Context(), &pb.CudaSharedMemoryRegisterRequest{Name: name, RawHandle: raw, DeviceId: dev, ByteSize: size})
		return err
	}
	infer := func(region string, offset, size int64) error {
		_, err := h.client.ModelInfer(t.Context(), &pb.ModelInferRequest{ModelName: "echo", Id: "x",
			Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{2}, Parameters: shmTensor(region, offset, size)}}})
		return err
	}
	_, statusOfSys := h.client.CudaSharedMemoryStatus(t.Context(), &pb.CudaSharedMemoryStatusRequest{Name: "sys"})
	_, statusOfGPU := h.client.SystemSharedMemoryStatus(t.Context(), &pb.SystemSharedMemoryStatusRequest{Name: "gpu"})
	_, statusOfNone := h.client.CudaSharedMemoryStatus(t.Context(), &pb.CudaSharedMemoryStatusRequest{Name: "nope"})
	for _, tc := range []struct {
		what   string
		err    error
		code   codes.Code
		want   string
		prefix bool // the server's detail follows Triton's text
	}{
		{"a name a system region has", register("sys", handle, 0, 8), codes.AlreadyExists, "shared memory region 'sys' already in manager", false},
		{"a name a CUDA region has", register("gpu", handle, 0, 8), codes.AlreadyExists, "shared memory region 'gpu' already in manager", false},
		{"more bytes than the allocation", register("big", handle, 0, 65), codes.InvalidArgument, "failed to register shared memory region 'big': invalid args", true},
		{"a handle of GPU 0 on GPU 1", register("wrong", handle, 1, 8), codes.InvalidArgument, "failed to register shared memory region: invalid args", true},
		{"a GPU the server does not have", register("far", handle, 4, 8), codes.InvalidArgument, "failed to register shared memory region: invalid args", true},
		{"bytes that are no handle", register("junk", make([]byte, 64), 0, 8), codes.InvalidArgument, "failed to register shared memory region: invalid args", true},
		{"status of a system region", statusOfSys, codes.NotFound, "The region named 'sys' is registered as system shared memory, not CUDA shared memory", false},
		{"system status of a CUDA region", statusOfGPU, codes.NotFound, "The region named 'gpu' is registered as CUDA shared memory, not system shared memory", false},
		{"status of an unknown region", statusOfNone, codes.NotFound, "Unable to find cuda shared memory region: 'nope'", false},
		{"an input in an unknown region", infer("nope", 0, 8), codes.NotFound, "Unable to find shared memory region: 'nope'", false},
		{"an input at the region's end", infer("gpu", 64, 8), codes.InvalidArgument, "Invalid offset for shared memory region: 'gpu'", false},
		{"an input past the region's end", infer("gpu", 60, 8), codes.InvalidArgument, "Invalid offset + byte size for shared memory region: 'gpu'", false},
	} {
		if tc.prefix {
			wantStatusPrefix(t, tc.what, tc.err, tc.code, tc.want)
		} else {
			wantStatus(t, tc.what, tc.err, tc.code, tc.want)
		}
	}
	small := &pb.ModelInferRequest{ModelName: "echo", Id: "x",
		Inputs:  []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{2}, Parameters: shmTensor("gpu", 0, 8)}},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: shmTensor("gpu", 32, 4)}}}
	_, err := h.client.ModelInfer(t.Context(), small)
	wantStatus(t, "an output larger than its place", err, codes.Internal,
		"shared memory size specified with the request for output 'OUTPUT0' (4 bytes) should be at least 8 bytes to hold the results")
	if err := infer("gpu", 8, 8); err != nil {
		t.Errorf("a good request after the refusals: %v", err)
	}
	if n := h.liveIPC(t); n != 1 {
		t.Errorf("%d IPC handles open after the refusals, want the one registered", n)
	}
	// An unregistered system region's name is no CUDA region's: nothing
	// happens, as in Triton.
	if _, err := h.client.CudaSharedMemoryUnregister(t.Context(), &pb.CudaSharedMemoryUnregisterRequest{Name: "sys"}); err != nil {
		t.Fatal(err)
	}
	if st, err := h.client.SystemSharedMemoryStatus(t.Context(), &pb.SystemSharedMemoryStatusRequest{Name: "sys"}); err != nil || len(st.GetRegions()) != 1 {
		t.Errorf("the system region after a CUDA unregister of its name: %v %v", st, err)
	}
}

// TestCudaRegionOutlivesItsUnregisterWhileARequestUsesIt: the handle of
// a region unregistered while a request is in the backend stays open, the
// output reaches the device, and the handle is closed when the request is
// finished.
func TestCudaRegionOutlivesItsUnregisterWhileARequestUsesIt(t *testing.T) {
	t.Parallel()
	h := newCUDAHarness(t, coretest.ModelDir{Name: "slow", Config: vector("")})
	gate := coretest.NewGate(t)
	h.p.Set("slow", coretest.Gated(gate, coretest.Echo()))
	mem := h.region(t, "r", 1, 1024)
	h.cuda.Write(1, mem, int32s(42))
	req := &pb.ModelInferRequest{ModelName: "slow", Id: "s",
		Inputs:  []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1}, Parameters: shmTensor("r", 0, 4)}},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: shmTensor("r", 512, 4)}}}
	errs := make(chan error, 1)
	go func() {
		_, err := h.client.ModelInfer(t.Context(), req)
		errs <- err
	}()
	h.p.Reached(t, "s")
	if _, err := h.client.CudaSharedMemoryUnregister(t.Context(), &pb.CudaSharedMemoryUnregisterRequest{Name: "r"}); err != nil {
		t.Fatal(err)
	}
	if n := h.liveIPC(t); n != 1 {
		t.Errorf("%d IPC handles open while the request runs, want 1", n)
	}
	gate.Open()
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if got := h.cuda.Read(1, mem+512, 4); binary.LittleEndian.Uint32(got) != 42 {
		t.Errorf("the output in the unregistered region is %x, want 42", got)
	}
	testenv.Eventually(func() bool { return h.liveIPC(t) == 0 })
	if n := h.liveIPC(t); n != 0 {
		t.Errorf("%d IPC handles open after the request finished, want 0", n)
	}
}
