package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// The GPU examples (examples/models_gpu) on machines without a GPU: NVML is
// the fake one the tests build (two GPUs, testenv.FakeNVML) and so is the
// CUDA driver, which writes its counters to a file after every change
// (FAKECUDA_REPORT); the server loads both through its hidden flags.

// gpuRepos serves the CPU and the GPU examples side by side.
func gpuRepos(t *testing.T) []string {
	root := testenv.RepoRoot(t)
	return []string{"--model-repository", filepath.Join(root, "examples", "models_gpu"),
		"--model-repository", filepath.Join(root, "examples", "models")}
}

// startFakeGPUServer runs the server on the two GPUs of the fake NVML and
// the fake CUDA driver, and returns it with the fake driver's report file.
func startFakeGPUServer(t *testing.T, extra ...string) (*serverProcess, string) {
	report := filepath.Join(t.TempDir(), "fakecuda.report")
	env := append(os.Environ(), "FAKECUDA_DEVICES=2", "FAKECUDA_REPORT="+report)
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "CUDA_VISIBLE_DEVICES=") })
	args := append([]string{"--nvml-library", testenv.FakeNVML(t), "--cuda-driver-library", testenv.FakeCUDADriver(t)}, extra...)
	return startServerEnv(t, testenv.ExampleModels(t), env, args...), report
}

// checkSquareGPUStreams sends square_int32_gpu a request for each k on
// one stream and checks that each gets its k responses.
func checkSquareGPUStreams(t *testing.T, srv *serverProcess, ks ...int32) {
	t.Helper()
	s, err := client.OpenStream(ctxFor(t), srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for i, k := range ks {
		if err := s.Send(client.Request{Model: "square_int32_gpu", ID: fmt.Sprint(i), Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, k)}}); err != nil {
			t.Fatal(err)
		}
		want[fmt.Sprint(i)] = int(k)
	}
	s.CloseSend()
	counts := map[string]int{}
	for _, r := range collect(t, s) {
		if r.err != "" {
			t.Fatalf("%+v", r)
		}
		if !r.final || len(r.names) > 0 {
			counts[r.id]++
		}
	}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("square_int32_gpu: responses per request %v, want %v", counts, want)
	}
}

// checkIdentityGPU sends identity_int32_gpu 18 INT32 values, which its
// backend copies to GPU 0 and back, and checks they come back unchanged.
func checkIdentityGPU(t *testing.T, srv *serverProcess) {
	t.Helper()
	in := words([]uint32{7, 0xdeadbeef, 42, 1 << 31, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18})
	resp, err := srv.Client.ModelInfer(ctxFor(t), &pb.ModelInferRequest{ModelName: "identity_int32_gpu",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{18}}},
		RawInputContents: [][]byte{in}})
	if err != nil {
		t.Fatal(err)
	}
	if raw := resp.GetRawOutputContents(); len(raw) != 1 || !slices.Equal(raw[0], in) {
		t.Fatalf("OUTPUT0 %x, want %x", raw, in)
	}
}

var instanceInitRE = regexp.MustCompile(`TRITONBACKEND_ModelInstanceInitialize: (square_int32_gpu_0_\d) \(GPU device (\d)\)`)

// checkSquareGPUPlacement checks from the server's log that
// square_int32_gpu's instances were placed two on each fake GPU.
func checkSquareGPUPlacement(t *testing.T, srv *serverProcess) {
	t.Helper()
	var placed []string
	for _, m := range instanceInitRE.FindAllStringSubmatch(srv.Log(), -1) {
		placed = append(placed, m[1]+" on GPU "+m[2])
	}
	slices.Sort(placed)
	want := []string{"square_int32_gpu_0_0 on GPU 0", "square_int32_gpu_0_0 on GPU 1",
		"square_int32_gpu_0_1 on GPU 0", "square_int32_gpu_0_1 on GPU 1"}
	if !slices.Equal(placed, want) {
		t.Errorf("square_int32_gpu instances %v, want two per GPU: %v\n%s", placed, want, srv.Log())
	}
}

func TestGPUExamplesServeOnTwoFakeGPUs(t *testing.T) {
	srv, report := startFakeGPUServer(t, gpuRepos(t)[:2]...)
	checkSquareGPUPlacement(t, srv)
	for _, line := range []string{"2 GPUs (2 visible", "CUDA memory pool is created on device 1 with size 67108864",
		"Pinned memory pool is created at"} {
		if !strings.Contains(srv.Log(), line) {
			t.Errorf("log lacks %q", line)
		}
	}

	t.Run("square_int32_gpu streams", func(t *testing.T) { checkSquareGPUStreams(t, srv, 3, 1, 2, 4) })

	t.Run("identity with a GPU output buffer", func(t *testing.T) {
		before := testenv.ReadFakeCUDAReport(t, report)
		checkIdentityGPU(t, srv)
		after := testenv.ReadFakeCUDAReport(t, report)
		if after.HtoD-before.HtoD != 1 || after.DtoH-before.DtoH != 1 || after.DeviceMismatches != 0 {
			t.Errorf("driver counters %+v then %+v: want the backend's copy to GPU 0 and the server's copy back, with GPU 0 current", before, after)
		}
	})

	srv.Stop(t)
	if s := testenv.ReadFakeCUDAReport(t, report); s.LiveDevice != 0 || s.LiveHost != 0 || s.Contexts != 0 {
		t.Errorf("after the server exited the fake driver still holds %+v", s)
	}
}

func TestGPUModelAskingForAMissingGPUIsNotLoaded(t *testing.T) {
	config := strings.NewReplacer(`name: "square_int32"`, `name: "far"`,
		"instance_group [ { count: 1 kind: KIND_CPU } ]", `instance_group [ { name: "remote" count: 1 kind: KIND_GPU gpus: [ 0, 3 ] } ]`,
	).Replace(testenv.ExampleConfig(t, "square_int32"))
	repo := testenv.Repository(t, testenv.Model{Name: "far", Config: config})
	report := filepath.Join(t.TempDir(), "fakecuda.report")
	env := append(os.Environ(), "FAKECUDA_REPORT="+report)
	srv := startServerEnv(t, testenv.ExampleModels(t), env, "--nvml-library", testenv.FakeNVML(t), "--cuda-driver-library", testenv.FakeCUDADriver(t),
		"--model-repository", repo, "--exit-on-error=false", "--strict-readiness=false")
	idx, err := srv.Client.RepositoryIndex(ctxFor(t), &pb.RepositoryIndexRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range idx.GetModels() {
		switch m.GetName() {
		case "far":
			for _, want := range []string{`"far"`, `instance_group "remote"`, "GPU 3", "available GPUs: 0, 1"} {
				if !strings.Contains(m.GetReason(), want) {
					t.Errorf("reason %q lacks %q", m.GetReason(), want)
				}
			}
		case "square_int32":
			if m.GetState() != "READY" {
				t.Errorf("square_int32: %s %s", m.GetState(), m.GetReason())
			}
		}
	}
}

func TestServeWithoutNVIDIALibrariesSaysZeroGPUsOnce(t *testing.T) {
	srv := startServer(t, "", "--nvml-library", "/nonexistent/libnvidia-ml.so.1")
	if n := strings.Count(srv.Log(), "0 GPUs"); n != 1 {
		t.Errorf(`the log says "0 GPUs" %d times:\n%s`, n, srv.Log())
	}
	s, err := client.OpenStream(ctxFor(t), srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	s.Send(client.Request{Model: "square_int32", ID: "cpu", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 2)}})
	s.CloseSend()
	if rs := collect(t, s); len(rs) != 2 || rs[0].err != "" || rs[0].outs["OUT"][0] != 2 {
		t.Errorf("square_int32 on the CPU: %+v", rs)
	}
}

// TestIsolatedGPUModelsServeOnFakeGPUs: GPU models whose backends run in
// worker processes (--backend-isolation process) place their instances on
// the GPUs as in process, and the device memory is the workers': the
// identity backend's copy of its input to GPU 0 and the copy of its GPU
// output back to host memory are made by its worker's driver, not the
// server's, and the output reaches the client through the worker's shared
// memory (tensors cross between the processes in host memory, as they
// cross the server's core in process). Every worker frees what it held
// on the devices.
func TestIsolatedGPUModelsServeOnFakeGPUs(t *testing.T) {
	dir := t.TempDir()
	env := append(os.Environ(), "FAKECUDA_DEVICES=2", "FAKECUDA_REPORT="+filepath.Join(dir, "report.{pid}"))
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "CUDA_VISIBLE_DEVICES=") })
	srv := startServerEnv(t, filepath.Join(testenv.RepoRoot(t), "examples", "models_gpu"), env,
		"--nvml-library", testenv.FakeNVML(t), "--cuda-driver-library", testenv.FakeCUDADriver(t), "--backend-isolation", "process")
	checkSquareGPUPlacement(t, srv)
	reports := func() map[string]testenv.FakeCUDAStats {
		files, err := filepath.Glob(filepath.Join(dir, "report.*"))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]testenv.FakeCUDAStats{}
		for _, f := range files {
			out[strings.TrimPrefix(filepath.Base(f), "report.")] = testenv.ReadFakeCUDAReport(t, f)
		}
		return out
	}
	serverPid := fmt.Sprint(srv.PID())
	before := reports()

	checkSquareGPUStreams(t, srv, 3, 1, 2)

	checkIdentityGPU(t, srv)
	after := reports()
	var copiers []string
	for pid, a := range after {
		b := before[pid]
		if a.DeviceMismatches != 0 {
			t.Errorf("process %s: %d copies with another device current", pid, a.DeviceMismatches)
		}
		if a.HtoD-b.HtoD == 1 && a.DtoH-b.DtoH == 1 {
			copiers = append(copiers, pid)
		}
	}
	if len(copiers) != 1 || copiers[0] == serverPid {
		t.Errorf("processes that made identity's copy to the device and back: %v (the server is %s), want one worker\nbefore %+v\nafter %+v", copiers, serverPid, before, after)
	}

	srv.Stop(t)
	for pid, s := range reports() {
		if s.LiveDevice != 0 || s.LiveHost != 0 || s.Contexts != 0 {
			t.Errorf("process %s: after the server exited its fake driver still holds %+v", pid, s)
		}
	}
}
