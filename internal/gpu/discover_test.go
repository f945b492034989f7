//go:build cgo

// go-nvml's mock, which these tests run on, is part of go-nvml's cgo
// package: a CGO_ENABLED=0 build leaves them out (package gpu itself needs
// no cgo; nvml_library_test.go runs without it).

package gpu

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/tritonhost/tritonhost/core/serverlog"
)

// oldGPU is below Triton's default minimum compute capability (6.0).
var oldGPU = gpus.Config{Name: "Mock Tesla M40", MemoryMB: 12288, CudaMajor: 5, CudaMinor: 2}

func uuids(s *server.Server) []string {
	var out []string
	for _, d := range s.Devices {
		u, _ := d.GetUUID()
		out = append(out, u)
	}
	return out
}

func ids(gs []GPU) []int {
	var out []int
	for _, g := range gs {
		out = append(out, g.ID)
	}
	return out
}

func nvmlIndices(gs []GPU) []int {
	var out []int
	for _, g := range gs {
		out = append(out, g.NVMLIndex)
	}
	return out
}

func TestDiscoverListsEveryGPUOfTheDGXA100(t *testing.T) {
	s := dgxa100.New()
	d := Discover(fromGoNVML(s), DiscoverOptions{})
	if d.Unavailable != "" || len(d.Warnings) != 0 {
		t.Fatalf("unavailable %q, warnings %v", d.Unavailable, d.Warnings)
	}
	if d.Driver != "550.54.15" {
		t.Errorf("driver %q", d.Driver)
	}
	if got := d.Usable(); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("usable %v", got)
	}
	want := uuids(s)
	for i, g := range d.GPUs {
		if g.UUID != want[i] || g.Name != "Mock NVIDIA A100-SXM4-40GB" || g.MemoryBytes != 40<<30 || g.Capability() != "8.0" {
			t.Errorf("GPU %d: %+v", i, g)
		}
	}
}

func TestDiscoverHonoursCUDAVisibleDevices(t *testing.T) {
	s := dgxa100.New()
	u := uuids(s)
	cases := []struct {
		name, list string
		nvml       []int // NVML indices of the visible GPUs, in CUDA order
		warns      int
	}{
		{"indices reorder", "3,1", []int{3, 1}, 0},
		{"uuid", u[5], []int{5}, 0},
		{"uuid prefix and index", u[6][:12] + ", 2", []int{6, 2}, 0},
		{"empty hides all", "", nil, 0},
		{"out of range ends the list", "0,9,1", []int{0}, 1},
		{"duplicate ends the list", "4,4,5", []int{4}, 1},
		{"garbage ends the list", "1,foo,2", []int{1}, 1},
		{"MIG ends the list", "MIG-abc,1", nil, 1},
		{"unknown uuid ends the list", "GPU-ffffffff-0000,1", nil, 1},
		{"ambiguous prefix", "GPU-", nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Discover(fromGoNVML(s), DiscoverOptions{VisibleDevices: tc.list, VisibleSet: true})
			if got := nvmlIndices(d.GPUs); !slices.Equal(got, tc.nvml) {
				t.Errorf("NVML indices %v, want %v", got, tc.nvml)
			}
			for i, g := range d.GPUs {
				if g.ID != i {
					t.Errorf("GPU %d has id %d: CUDA numbers visible GPUs from 0", i, g.ID)
				}
			}
			if len(d.Warnings) != tc.warns {
				t.Errorf("warnings %q, want %d", d.Warnings, tc.warns)
			}
		})
	}
}

func TestDiscoverHidesGPUsBelowTheMinimumComputeCapability(t *testing.T) {
	s := dgxa100.NewWithGPUs(oldGPU, gpus.A100_SXM4_40GB, oldGPU)
	d := Discover(fromGoNVML(s), DiscoverOptions{})
	if got := d.Usable(); !slices.Equal(got, []int{1}) {
		t.Fatalf("usable %v, want [1]: hiding a GPU does not renumber the others", got)
	}
	if !strings.Contains(d.GPUs[0].Hidden, "5.2 is below --min-supported-compute-capability=6") {
		t.Errorf("hidden reason %q", d.GPUs[0].Hidden)
	}
	if got := Discover(fromGoNVML(s), DiscoverOptions{MinComputeCapability: 5.2}).Usable(); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("with 5.2: usable %v", got)
	}
	if got := Discover(fromGoNVML(s), DiscoverOptions{MinComputeCapability: 8.6}).Usable(); len(got) != 0 {
		t.Errorf("with 8.6: usable %v", got)
	}
}

// failingInit is an NVML whose Init fails: nothing else may be called (a
// call after a failed Init may end the process with the real library).
type failingInit struct {
	mock.Interface
	calls []string
}

func TestDiscoverWithoutDriverCallsNothingAfterInit(t *testing.T) {
	f := &failingInit{}
	f.InitFunc = func() nvml.Return { f.calls = append(f.calls, "Init"); return nvml.ERROR_LIBRARY_NOT_FOUND }
	d := Discover(fromGoNVML(f), DiscoverOptions{})
	if len(d.GPUs) != 0 || !strings.Contains(d.Unavailable, "ERROR_LIBRARY_NOT_FOUND") {
		t.Fatalf("%+v", d)
	}
	if !slices.Equal(f.calls, []string{"Init"}) {
		t.Errorf("calls %v", f.calls)
	}
	var log bytes.Buffer
	d.Log(serverlog.New(&log))
	if got := strings.Count(log.String(), "0 GPUs"); got != 1 {
		t.Errorf("log says \"0 GPUs\" %d times:\n%s", got, log.String())
	}
}

func TestDiscoveryTableNamesEveryGPU(t *testing.T) {
	s := dgxa100.NewWithGPUs(gpus.A100_SXM4_40GB, oldGPU)
	d := Discover(fromGoNVML(s), DiscoverOptions{})
	var log bytes.Buffer
	d.Log(serverlog.New(&log))
	out := log.String()
	for _, want := range []string{"1 GPU (2 visible, NVIDIA driver 550.54.15)", uuids(s)[0], "40.0 GiB", "8.0", "used",
		"Mock Tesla M40", "12.0 GiB", "hidden: compute capability 5.2"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if ids(d.GPUs)[1] != 1 {
		t.Errorf("ids %v", ids(d.GPUs))
	}
}
