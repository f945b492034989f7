package main

import (
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/ebitengine/purego"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// The tests of this file run on the machine's own NVIDIA driver and GPU,
// and are skipped where there is none (CI has none). To run them on a GPU
// machine that has no Go, build the test binary and the server elsewhere
// and give it the server through testenv.ServerBinaryEnv.

// requireNVIDIADriver skips the test unless NVML and the CUDA driver load.
func requireNVIDIADriver(t *testing.T) {
	t.Helper()
	for _, lib := range []string{"libnvidia-ml.so.1", "libcuda.so.1"} {
		h, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			t.Skipf("no NVIDIA driver here (%s: %v)", lib, err)
		}
		purego.Dlclose(h)
	}
}

// gpuTableRE matches the start-up line that lists the GPUs the server uses.
var gpuTableRE = regexp.MustCompile(`\] [1-9]\d* GPUs? \(\d+ visible, NVIDIA driver `)

// TestGPUExamplesServeOnTheRealGPU serves the GPU examples on the
// machine's GPU 0: identity's output made in GPU memory and sent from the
// host, square's responses from GPU instances, and CUDA shared memory
// that this process allocates and exports by CUDA IPC handle, as Triton's
// cudashm clients do, read and written by the server.
func TestGPUExamplesServeOnTheRealGPU(t *testing.T) {
	requireNVIDIADriver(t)
	srv := startServer(t, "", gpuRepos(t)[:2]...)
	if !gpuTableRE.MatchString(srv.Log()) {
		t.Fatalf("the driver is here but the server uses no GPU:\n%s", srv.Log())
	}
	if md, err := srv.Client.ServerMetadata(ctxFor(t), &pb.ServerMetadataRequest{}); err != nil || !slices.Contains(md.GetExtensions(), "cuda_shared_memory") {
		t.Errorf("ServerMetadata of a server with a GPU: %v %v; want the cuda_shared_memory extension", md, err)
	}

	t.Run("identity_int32_gpu", func(t *testing.T) {
		for _, n := range []int{4, 1 << 18} { // 16 bytes, and 1 MiB
			in := words(pseudoRandomWords(n))
			resp, err := srv.Client.ModelInfer(ctxFor(t), &pb.ModelInferRequest{ModelName: "identity_int32_gpu",
				Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{int64(n)}}},
				RawInputContents: [][]byte{in}})
			if err != nil {
				t.Fatalf("%d elements: %v", n, err)
			}
			if raw := resp.GetRawOutputContents(); len(raw) != 1 || !slices.Equal(raw[0], in) {
				t.Errorf("%d elements: OUTPUT0 is not INPUT0 (%d outputs)", n, len(raw))
			}
		}
	})

	t.Run("square_int32_gpu", func(t *testing.T) {
		s, err := client.OpenStream(ctxFor(t), srv.Client)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range []int32{3, 1} {
			if err := s.Send(client.Request{Model: "square_int32_gpu", ID: fmt.Sprint(i), Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, k)},
				Params: map[string]any{client.EmptyFinalParam: true}}); err != nil {
				t.Fatal(err)
			}
		}
		s.CloseSend()
		got := map[string][]string{}
		for _, r := range collect(t, s) {
			if r.err != "" {
				t.Fatalf("%+v", r)
			}
			got[r.id] = append(got[r.id], fmt.Sprint(r.final, r.outs["OUT"]))
		}
		want := map[string][]string{"0": {"false [3]", "false [3]", "false [3]", "true []"}, "1": {"false [1]", "true []"}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("responses (final, OUT) by request: %v, want %v", got, want)
		}
	})

	t.Run("CUDA shared memory", func(t *testing.T) {
		cuda := testenv.NewCUDAClient(t, "libcuda.so.1")
		ctx := ctxFor(t)
		const n = 1 << 16
		const byteSize = 4 * n
		in := words(pseudoRandomWords(n))
		mem := map[string]uintptr{"in": cuda.Alloc(0, byteSize), "out": cuda.Alloc(0, byteSize)}
		cuda.Write(0, mem["in"], in)
		for _, name := range []string{"in", "out"} {
			if _, err := srv.Client.CudaSharedMemoryRegister(ctx, &pb.CudaSharedMemoryRegisterRequest{
				Name: name, RawHandle: cuda.IPCHandle(0, mem[name]), DeviceId: 0, ByteSize: byteSize}); err != nil {
				t.Fatalf("register %s: %v", name, err)
			}
		}
		// identity_int32_gpu writes its output in GPU memory, identity_int32
		// in host memory: the server copies each into the region.
		for _, model := range []string{"identity_int32_gpu", "identity_int32"} {
			cuda.Write(0, mem["out"], make([]byte, byteSize))
			resp, err := srv.Client.ModelInfer(ctx, &pb.ModelInferRequest{ModelName: model,
				Inputs:  []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{n}, Parameters: shmParams("in", byteSize, 0)}},
				Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: shmParams("out", byteSize, 0)}}})
			if err != nil {
				t.Fatalf("%s: %v", model, err)
			}
			for _, raw := range resp.GetRawOutputContents() {
				if len(raw) != 0 {
					t.Errorf("%s: an output in shared memory came back in the message too (%d bytes)", model, len(raw))
				}
			}
			if got := cuda.Read(0, mem["out"], byteSize); !slices.Equal(got, in) {
				t.Errorf("%s: the output region does not hold INPUT0", model)
			}
		}
		if _, err := srv.Client.CudaSharedMemoryUnregister(ctx, &pb.CudaSharedMemoryUnregisterRequest{}); err != nil {
			t.Fatalf("unregister: %v", err)
		}
		if st, err := srv.Client.CudaSharedMemoryStatus(ctx, &pb.CudaSharedMemoryStatusRequest{}); err != nil || len(st.GetRegions()) != 0 {
			t.Errorf("status after unregister: %v %v", st, err)
		}
	})
}

// pseudoRandomWords returns n words that differ from one another and from
// zero, so that a misplaced or missing element shows.
func pseudoRandomWords(n int) []uint32 {
	w := make([]uint32, n)
	x := uint32(2463534242)
	for i := range w {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		w[i] = x
	}
	return w
}
