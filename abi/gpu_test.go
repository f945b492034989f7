package abi_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/scheduling"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/gpu"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/loader"
)

// These tests run the server on the fake CUDA driver (two GPUs), which the
// process loads once; they are not parallel, so its counters are theirs.

const probeConfig = `name: "probe"
backend: "gpu_probe"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_UINT8 dims: [ -1 ] },
        { name: "WANT" data_type: TYPE_INT32 dims: [ 2 ] optional: true },
        { name: "ALLOC" data_type: TYPE_INT64 dims: [ 3 ] optional: true } ]
output [ { name: "OUT" data_type: TYPE_UINT8 dims: [ -1 ] },
         { name: "DEVICE" data_type: TYPE_INT32 dims: [ 4 ] },
         { name: "IPC" data_type: TYPE_UINT8 dims: [ 64 ] } ]
instance_group [ { count: 2 kind: KIND_GPU } ]
`

// gpuServer serves the probe model with Devices on the fake driver, and
// checks at cleanup (after the server stopped) that every pool block came
// back and, once the devices are closed, that the driver holds nothing.
func gpuServer(t *testing.T, mem gpu.MemoryOptions) (*testServer, *gpu.Devices, string) {
	driverPath := testenv.SharedFakeCUDADriver(t)
	drv, err := gpu.OpenDriver(driverPath)
	if err != nil {
		t.Fatal(err)
	}
	devs, err := gpu.NewDevices(drv, []int{0, 1}, mem, serverlog.Discard())
	if err != nil {
		t.Fatal(err)
	}
	lib := testenv.SharedLibrary(t, "triton_gpu_probe", "testdata/gpu_probe.c")
	backends := t.TempDir()
	testenv.CopyFile(t, lib, backends+"/gpu_probe/libtriton_gpu_probe.so")
	repo := testenv.Repository(t, testenv.Model{Name: "probe", Config: probeConfig})
	srv := startServerWith(t, repo, serverSetup{host: abi.HostOptions{Devices: devs}}, func(c *core.Options, l *loader.Options) {
		c.GPUs = devs.IDs()
		l.BackendDirectory = backends
	})
	srv.afterStop = append(srv.afterStop, func() {
		for _, u := range devs.Usage() {
			if u.Blocks != 0 {
				t.Errorf("after the server stopped, %s pool %d still lends %d block(s)", u.Type, u.ID, u.Blocks)
			}
		}
		if err := devs.Close(); err != nil {
			t.Error(err)
		}
		if s := testenv.ReadFakeCUDA(t, driverPath); s.LiveDevice != 0 || s.LiveHost != 0 || s.Contexts != 0 {
			t.Errorf("the fake driver still holds %+v", s)
		}
	})
	return srv, devs, driverPath
}

func int64s(vs ...int64) []byte {
	b := make([]byte, 8*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	return b
}

func probeRequest(id string, in []byte, want []int32, alloc []int64) *core.Submission {
	req := &core.Submission{Model: "probe", ID: id,
		Inputs: []core.Input{core.NewInput("IN", core.TypeUint8, []int64{int64(len(in))}, in)}}
	if want != nil {
		req.Inputs = append(req.Inputs, core.NewInput("WANT", core.TypeInt32, []int64{2}, int32s(want...)))
	}
	if alloc != nil {
		req.Inputs = append(req.Inputs, core.NewInput("ALLOC", core.TypeInt64, []int64{3}, int64s(alloc...)))
	}
	return req
}

func deviceReport(t *testing.T, r *core.Response) [4]int32 {
	o := output(t, r, "DEVICE")
	var d [4]int32
	for i := range d {
		d[i] = int32(binary.LittleEndian.Uint32(o.Data[4*i:]))
	}
	return d
}

func TestGPUInstancesRunWithTheirDeviceCurrent(t *testing.T) {
	srv, _, _ := gpuServer(t, gpu.MemoryOptions{})
	m, err := srv.Model("probe", 0)
	if err != nil {
		t.Fatal(err)
	}
	var placed []string
	for _, inst := range m.Instances() {
		placed = append(placed, fmt.Sprintf("%s %s %d", inst.Name(), inst.Kind(), inst.DeviceID()))
	}
	sort.Strings(placed)
	if want := "probe_0_0 GPU 0,probe_0_0 GPU 1,probe_0_1 GPU 0,probe_0_1 GPU 1"; strings.Join(placed, ",") != want {
		t.Errorf("instances %v, want two per GPU named as Triton names them: %s", placed, want)
	}
	inits := regexp.MustCompile(`probe instance (probe_0_\d): kind GPU device (\d), current (-?\d)`).FindAllStringSubmatch(srv.log.String(), -1)
	if len(inits) != 4 {
		t.Fatalf("%d instance initializations logged, want 4:\n%s", len(inits), srv.log)
	}
	for _, m := range inits {
		if m[2] != m[3] {
			t.Errorf("%s on GPU %s initialized with GPU %s current", m[1], m[2], m[3])
		}
	}
	for i := range 40 {
		ev := infer(t, srv, probeRequest(fmt.Sprint(i), []byte{byte(i)}, nil, nil))
		if r := ev[0].resp; r == nil || r.Err != nil {
			t.Fatalf("request %d: %+v", i, ev)
		} else if d := deviceReport(t, r); d[0] != d[2] {
			t.Errorf("request %d: an instance on GPU %d executed with GPU %d current", i, d[0], d[2])
		}
	}
}

func TestGPUOutputBuffersAreCopiedToTheHostWhenSent(t *testing.T) {
	srv, devs, driverPath := gpuServer(t, gpu.MemoryOptions{PinnedPoolBytes: 1 << 20})
	before := testenv.ReadFakeCUDA(t, driverPath)
	payload := bytes.Repeat([]byte("tritonhost on a GPU "), 10) // 200 bytes: not inline
	for _, tc := range []struct {
		name     string
		want     []int32
		gotType  int32
		copies   int64
		ipcValid bool
	}{
		{"the instance's GPU", []int32{int32(core.MemoryGPU), -1}, int32(core.MemoryGPU), 1, true},
		{"the instance's GPU again", []int32{int32(core.MemoryGPU), -1}, int32(core.MemoryGPU), 1, true},
		{"pinned", []int32{int32(core.MemoryCPUPinned), 0}, int32(core.MemoryCPUPinned), 0, false},
		{"CPU", []int32{int32(core.MemoryCPU), 0}, int32(core.MemoryCPU), 0, false},
		{"unknown GPU falls back to CPU", []int32{int32(core.MemoryGPU), 5}, int32(core.MemoryCPU), 0, false},
	} {
		ev := infer(t, srv, probeRequest(tc.name, payload, tc.want, nil))
		r := ev[0].resp
		if r == nil || r.Err != nil {
			t.Fatalf("%s: %+v", tc.name, ev)
		}
		if got := output(t, r, "OUT").Data; !bytes.Equal(got, payload) {
			t.Errorf("%s: OUT %q", tc.name, got)
		}
		d := deviceReport(t, r)
		if d[3] != tc.gotType {
			t.Errorf("%s: OUT in memory type %d, want %d", tc.name, d[3], tc.gotType)
		}
		ipc := output(t, r, "IPC").Data
		if got := string(ipc[:8]) == "fakecuda"; got != tc.ipcValid {
			t.Errorf("%s: IPC handle %x", tc.name, ipc)
		} else if got && int32(ipc[8]) != d[0] {
			t.Errorf("%s: IPC handle of GPU %d for a buffer of GPU %d", tc.name, ipc[8], d[0])
		}
		after := testenv.ReadFakeCUDA(t, driverPath)
		if n := after.DtoH - before.DtoH; n != tc.copies {
			t.Errorf("%s: %d device-to-host copies, want %d", tc.name, n, tc.copies)
		}
		if after.DeviceMismatches != 0 {
			t.Errorf("%s: a copy ran with another GPU current", tc.name)
		}
		before = after
	}
	// The backend frees a response once ResponseSend has returned, which
	// may be after the response was delivered.
	lent := func() string {
		var out []string
		for _, u := range devs.Usage() {
			if u.Blocks != 0 {
				out = append(out, fmt.Sprintf("%s pool %d lends %d block(s)", u.Type, u.ID, u.Blocks))
			}
		}
		return strings.Join(out, "; ")
	}
	if !testenv.Eventually(func() bool { return lent() == "" }) {
		t.Errorf("gave up waiting for every pool block back after the responses were sent: %s", lent())
	}
}

func TestMemoryManagerPoolsAreRefusedPastTheirSize(t *testing.T) {
	srv, _, _ := gpuServer(t, gpu.MemoryOptions{CUDAPoolBytes: map[int]uint64{0: 4096, 1: 8192}, PinnedPoolBytes: 1024})
	gpuT, pinT := int64(core.MemoryGPU), int64(core.MemoryCPUPinned)
	for _, tc := range []struct {
		alloc []int64
		err   string
	}{
		{[]int64{gpuT, 0, 4096}, ""},
		{[]int64{gpuT, 0, 4097}, "Failed to allocate CUDA memory with byte size 4097 on GPU 0: CNMEM_STATUS_OUT_OF_MEMORY"},
		{[]int64{gpuT, 1, 8192}, ""},
		{[]int64{gpuT, 1, 8193}, "Failed to allocate CUDA memory with byte size 8193 on GPU 1: CNMEM_STATUS_OUT_OF_MEMORY"},
		{[]int64{pinT, 0, 1024}, ""},
		{[]int64{pinT, 0, 1025}, "failed to allocate pinned system memory"},
	} {
		ev := infer(t, srv, probeRequest("alloc", []byte{1}, nil, tc.alloc))
		r := ev[0].resp
		switch {
		case r == nil:
			t.Fatalf("%v: no response", tc.alloc)
		case tc.err == "" && r.Err != nil:
			t.Errorf("%v: %v", tc.alloc, r.Err)
		case tc.err != "" && (r.Err == nil || r.Err.Error() != tc.err || core.CodeOf(r.Err) != core.CodeInternal):
			t.Errorf("%v: got %v, want INTERNAL %q", tc.alloc, r.Err, tc.err)
		}
	}
}

// BenchmarkProbeExecute measures one request through the probe backend on
// a CPU instance and on a GPU instance, whose every Execute first makes
// its device current from C (the context hook, one indirect call into the
// driver's cuCtxSetCurrent). The difference is the hook's cost.
func BenchmarkProbeExecute(b *testing.B) {
	driverPath := testenv.SharedFakeCUDADriver(b)
	drv, err := gpu.OpenDriver(driverPath)
	if err != nil {
		b.Fatal(err)
	}
	lib := testenv.SharedLibrary(b, "triton_gpu_probe", "testdata/gpu_probe.c")
	backends := b.TempDir()
	testenv.CopyFile(b, lib, backends+"/gpu_probe/libtriton_gpu_probe.so")
	for _, kind := range []string{"KIND_CPU", "KIND_GPU"} {
		b.Run(kind, func(b *testing.B) {
			devs, err := gpu.NewDevices(drv, []int{0}, gpu.MemoryOptions{}, serverlog.Discard())
			if err != nil {
				b.Fatal(err)
			}
			defer devs.Close()
			host := abi.NewHost(abi.HostOptions{Devices: devs})
			defer host.Close()
			config := strings.Replace(probeConfig, "count: 2 kind: KIND_GPU", "count: 1 kind: "+kind, 1)
			srv, err := core.NewServer(core.Options{GPUs: devs.IDs(), Schedulers: scheduling.New,
				ModelRepositories: []string{testenv.Repository(b, testenv.Model{Name: "probe", Config: config})},
				Backends:          loader.New(loader.Options{Opener: host, BackendDirectory: backends, Logger: serverlog.Discard()})})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Stop(context.Background())
			req := probeRequest("b", []byte{1, 2, 3, 4}, nil, nil)
			for b.Loop() {
				c := newCollector()
				if err := srv.Infer(context.Background(), req, c.fn); err != nil {
					b.Fatal(err)
				}
				<-c.done
			}
		})
	}
}
