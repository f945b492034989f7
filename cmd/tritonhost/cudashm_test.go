package main

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

func int32Bytes(vals []int32) []byte {
	b := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// waitForLiveIPC waits until the server's fake driver reports want IPC
// handles open, and returns what it last reported: a request releases its
// regions once it is finished, just after its response was sent.
func waitForLiveIPC(t *testing.T, report string, want int64) testenv.FakeCUDAStats {
	t.Helper()
	var s testenv.FakeCUDAStats
	testenv.Eventually(func() bool {
		s = testenv.ReadFakeCUDAReport(t, report)
		return s.LiveIPC == want
	})
	return s
}

// TestSimpleGRPCCudashmClientPasses does what Triton's
// simple_grpc_cudashm_client (client repository, src/python/examples)
// does against the "simple" model, on the server running on the two fake GPUs
// and the fake CUDA driver: clear every region; allocate device memory for
// OUTPUT0, OUTPUT1, INPUT0 and INPUT1 on GPU 0 and register each by its
// CUDA IPC handle; infer with the tensors there; read the sums and
// differences from device memory; list the regions; unregister them all.
// The test process is the CUDA client, with its own copy of the fake
// driver: the server opens the handles across processes. Every handle the
// server opened is closed after the unregister, and at shutdown.
func TestSimpleGRPCCudashmClientPasses(t *testing.T) {
	srv, report := startFakeGPUServer(t)
	cuda := testenv.NewCUDAClient(t, testenv.FakeCUDADriver(t))
	ctx := ctxFor(t)
	if _, err := srv.Client.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatalf("unregister_system_shared_memory: %v", err)
	}
	if _, err := srv.Client.CudaSharedMemoryUnregister(ctx, &pb.CudaSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatalf("unregister_cuda_shared_memory: %v", err)
	}
	const byteSize = 16 * 4
	mem := map[string]uintptr{}
	register := func(name string) {
		t.Helper()
		mem[name] = cuda.Alloc(0, byteSize)
		if _, err := srv.Client.CudaSharedMemoryRegister(ctx, &pb.CudaSharedMemoryRegisterRequest{
			Name: name, RawHandle: cuda.IPCHandle(0, mem[name]), DeviceId: 0, ByteSize: byteSize}); err != nil {
			t.Fatalf("register_cuda_shared_memory %s: %v", name, err)
		}
	}
	register("output0_data")
	register("output1_data")
	in0, in1 := make([]int32, 16), make([]int32, 16)
	for i := range 16 {
		in0[i], in1[i] = int32(i), 1
	}
	mem["input0_data"] = cuda.Alloc(0, byteSize)
	mem["input1_data"] = cuda.Alloc(0, byteSize)
	cuda.Write(0, mem["input0_data"], int32Bytes(in0))
	cuda.Write(0, mem["input1_data"], int32Bytes(in1))
	for _, name := range []string{"input0_data", "input1_data"} {
		if _, err := srv.Client.CudaSharedMemoryRegister(ctx, &pb.CudaSharedMemoryRegisterRequest{
			Name: name, RawHandle: cuda.IPCHandle(0, mem[name]), DeviceId: 0, ByteSize: byteSize}); err != nil {
			t.Fatalf("register_cuda_shared_memory %s: %v", name, err)
		}
	}

	resp, err := srv.Client.ModelInfer(ctx, &pb.ModelInferRequest{
		ModelName: "simple",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}, Parameters: shmParams("input0_data", byteSize, 0)},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}, Parameters: shmParams("input1_data", byteSize, 0)},
		},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{
			{Name: "OUTPUT0", Parameters: shmParams("output0_data", byteSize, 0)},
			{Name: "OUTPUT1", Parameters: shmParams("output1_data", byteSize, 0)},
		},
	})
	if err != nil {
		t.Fatalf("infer: %v", err)
	}
	regionOf := map[string]string{"OUTPUT0": "output0_data", "OUTPUT1": "output1_data"}
	got := map[string][]byte{}
	for _, o := range resp.GetOutputs() {
		if o.GetDatatype() != "INT32" || !slices.Equal(o.GetShape(), []int64{1, 16}) {
			t.Errorf("%s is %s %v, want INT32 [1 16]", o.GetName(), o.GetDatatype(), o.GetShape())
		}
		got[o.GetName()] = cuda.Read(0, mem[regionOf[o.GetName()]], byteSize)
	}
	if len(got) != 2 {
		t.Fatalf("OUTPUT0 or OUTPUT1 is missing in the response: %v", resp)
	}
	for i := range 16 {
		sum := int32(binary.LittleEndian.Uint32(got["OUTPUT0"][4*i:]))
		diff := int32(binary.LittleEndian.Uint32(got["OUTPUT1"][4*i:]))
		if sum != in0[i]+in1[i] || diff != in0[i]-in1[i] {
			t.Fatalf("cudashm infer error: %d: sum %d, difference %d", i, sum, diff)
		}
	}

	st, err := srv.Client.CudaSharedMemoryStatus(ctx, &pb.CudaSharedMemoryStatusRequest{})
	if err != nil || len(st.GetRegions()) != 4 || st.GetRegions()["input1_data"].GetByteSize() != byteSize ||
		st.GetRegions()["input1_data"].GetDeviceId() != 0 {
		t.Errorf("get_cuda_shared_memory_status: %v %v", st, err)
	}
	if s := testenv.ReadFakeCUDAReport(t, report); s.LiveIPC != 4 || s.DeviceMismatches != 0 {
		t.Errorf("the server's driver reports %+v: want 4 handles open, every copy on GPU 0", s)
	}
	if _, err := srv.Client.CudaSharedMemoryUnregister(ctx, &pb.CudaSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatalf("unregister_cuda_shared_memory: %v", err)
	}
	if s := waitForLiveIPC(t, report, 0); s.LiveIPC != 0 || s.IPCOpened != 4 {
		t.Errorf("after unregister_cuda_shared_memory the server's driver reports %+v: want the 4 handles closed", s)
	}

	// A region left registered is closed at shutdown.
	register("left_registered")
	srv.Stop(t)
	if s := testenv.ReadFakeCUDAReport(t, report); s.LiveIPC != 0 || s.IPCOpened != 5 || s.Contexts != 0 {
		t.Errorf("after the server exited its driver reports %+v: want every handle closed", s)
	}
	if strings.Contains(srv.Log(), "still held by requests") {
		t.Errorf("the server left regions behind:\n%s", srv.Log())
	}
}

// TestCudaSharedMemoryRegionsAreBounded: --cuda-shm-max-regions refuses
// the region past it; the others stay usable.
func TestCudaSharedMemoryRegionsAreBounded(t *testing.T) {
	srv, _ := startFakeGPUServer(t, "--cuda-shm-max-regions", "1")
	cuda := testenv.NewCUDAClient(t, testenv.FakeCUDADriver(t))
	ctx := ctxFor(t)
	p := cuda.Alloc(1, 64)
	for i, name := range []string{"a", "b"} {
		_, err := srv.Client.CudaSharedMemoryRegister(ctx, &pb.CudaSharedMemoryRegisterRequest{Name: name, RawHandle: cuda.IPCHandle(1, p), DeviceId: 1, ByteSize: 64})
		want := "failed to register shared memory region 'b': the server holds at most 1 CUDA regions (--cuda-shm-max-regions); unregister one first"
		if i == 0 && err != nil || i == 1 && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("region %s: %v", name, err)
		}
	}
	if st, err := srv.Client.CudaSharedMemoryStatus(ctx, &pb.CudaSharedMemoryStatusRequest{Name: "a"}); err != nil || st.GetRegions()["a"].GetDeviceId() != 1 {
		t.Errorf("status of a: %v %v", st, err)
	}
}
