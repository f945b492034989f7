package sharedmem_test

import (
	"math"
	"slices"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
)

func cudaRegistry(gpus *fakeGPUs, opts sharedmem.CUDAOptions) *sharedmem.Registry {
	if gpus != nil {
		opts.Driver = gpus
	}
	return sharedmem.New(sharedmem.Options{CUDA: opts})
}

// wantExact checks an error's code and its whole message.
func wantExact(t *testing.T, what string, err error, code core.Code, want string) {
	t.Helper()
	if err == nil || core.CodeOf(err) != code || err.Error() != want {
		t.Errorf("%s: %v (code %v), want code %v and the message %q", what, err, core.CodeOf(err), code, want)
	}
}

// TestCUDARegionsCarryTensorsBothWays: an input is copied from the
// client's device memory, an output to it, each at its offset; Status
// reports the region as Triton does; Unregister closes the handle.
func TestCUDARegionsCarryTensorsBothWays(t *testing.T) {
	t.Parallel()
	gpus := newFakeGPUs(2)
	reg := cudaRegistry(gpus, sharedmem.CUDAOptions{})
	mem, handle := gpus.export(1, 256)
	copy(mem[16:], "input")
	if err := reg.RegisterCUDA("g", handle, 1, 200); err != nil {
		t.Fatal(err)
	}
	st, err := reg.CUDAStatus("")
	if want := []sharedmem.CUDARegionStatus{{Name: "g", DeviceID: 1, ByteSize: 200}}; err != nil || !slices.Equal(st, want) {
		t.Errorf("CUDAStatus: %+v %v, want %+v", st, err, want)
	}
	in, err := reg.Acquire("g", 16, 5)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := in.Read(); err != nil || string(got) != "input" {
		t.Errorf("Read: %q %v: want a host copy of the input", got, err)
	}
	out, err := reg.Acquire("g", 100, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Write([]byte("output")); err != nil {
		t.Fatal(err)
	}
	if string(mem[100:106]) != "output" {
		t.Errorf("the client's memory holds %q at the output's place", mem[100:106])
	}
	err = out.Write(make([]byte, 101))
	wantError(t, "an output past its span", err, core.CodeInternal, "101 bytes do not fit the 100 bytes leased of shared memory region 'g'")
	in.Release()
	out.Release()
	if err := reg.UnregisterCUDA("g"); err != nil {
		t.Fatal(err)
	}
	if gpus.live() != 0 || reg.Mapped() != 0 {
		t.Errorf("after Unregister %d handle(s) open, %d region(s) mapped", gpus.live(), reg.Mapped())
	}
}

// TestCUDARegistrationsRefusedInTritonsWords: each refusal, with
// Triton's code and text (server src/shared_memory_manager.cc and
// src/grpc/grpc_server.cc); what tritonhost adds comes after it.
func TestCUDARegistrationsRefusedInTritonsWords(t *testing.T) {
	t.Parallel()
	gpus := newFakeGPUs(2)
	reg := cudaRegistry(gpus, sharedmem.CUDAOptions{})
	key, _ := object(t, 4096)
	if err := reg.Register("sys", key, 0, 64); err != nil {
		t.Fatal(err)
	}
	_, h0 := gpus.export(0, 64)
	if err := reg.RegisterCUDA("gpu", h0, 0, 64); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what   string
		err    error
		code   core.Code
		want   string
		prefix bool // tritonhost says more after Triton's text
	}{
		{"a CUDA region of a system region's name", reg.RegisterCUDA("sys", h0, 0, 8), core.CodeAlreadyExists,
			"shared memory region 'sys' already in manager", false},
		{"a CUDA region of a CUDA region's name", reg.RegisterCUDA("gpu", h0, 0, 8), core.CodeAlreadyExists,
			"shared memory region 'gpu' already in manager", false},
		{"a system region of a CUDA region's name", reg.Register("gpu", key, 0, 8), core.CodeAlreadyExists,
			"shared memory region 'gpu' already in manager", false},
		{"more bytes than the allocation", reg.RegisterCUDA("big", h0, 0, 65), core.CodeInvalidArg,
			"failed to register shared memory region 'big': invalid args", true},
		{"a handle of another GPU", reg.RegisterCUDA("wrong", h0, 1, 8), core.CodeInvalidArg,
			"failed to register shared memory region: invalid args", true},
		{"a GPU the server does not have", reg.RegisterCUDA("far", h0, 7, 8), core.CodeInvalidArg,
			"failed to register shared memory region: invalid args", true},
		{"bytes that are no handle", reg.RegisterCUDA("junk", make([]byte, 64), 0, 8), core.CodeInvalidArg,
			"failed to register shared memory region: invalid args", true},
		{"a handle of the wrong size", reg.RegisterCUDA("short", h0[:63], 0, 8), core.CodeInvalidArg,
			"failed to register shared memory region: invalid args", true},
		{"a CUDA region without GPUs", cudaRegistry(nil, sharedmem.CUDAOptions{}).RegisterCUDA("g", h0, 0, 8), core.CodeInvalidArg,
			"failed to register CUDA shared memory region: 'g', GPUs not supported", false},
	} {
		if tc.prefix {
			wantError(t, tc.what, tc.err, tc.code, tc.want)
		} else {
			wantExact(t, tc.what, tc.err, tc.code, tc.want)
		}
	}
	if n := gpus.live(); n != 1 {
		t.Errorf("%d handles open after the refusals, want the one registered", n)
	}
	if _, err := reg.Status("gpu"); err != nil {
		wantExact(t, "Status of a CUDA region", err, core.CodeNotFound,
			"The region named 'gpu' is registered as CUDA shared memory, not system shared memory")
	} else {
		t.Error("Status of a CUDA region succeeded")
	}
	_, err := reg.CUDAStatus("sys")
	wantExact(t, "CUDAStatus of a system region", err, core.CodeNotFound,
		"The region named 'sys' is registered as system shared memory, not CUDA shared memory")
	_, err = reg.CUDAStatus("nope")
	wantExact(t, "CUDAStatus of an unknown region", err, core.CodeNotFound, "Unable to find cuda shared memory region: 'nope'")
	if sys, err := reg.Status(""); err != nil || len(sys) != 1 || sys[0].Name != "sys" {
		t.Errorf("Status lists %+v %v, want the system region only", sys, err)
	}
	if st, err := reg.CUDAStatus(""); err != nil || len(st) != 1 || st[0].Name != "gpu" {
		t.Errorf("CUDAStatus lists %+v %v, want the CUDA region only", st, err)
	}
}

// TestCUDALeasesCheckBoundsAsSystemOnes: a span of a CUDA region is
// checked with the same rules and words as a system region's.
func TestCUDALeasesCheckBoundsAsSystemOnes(t *testing.T) {
	t.Parallel()
	gpus := newFakeGPUs(1)
	reg := cudaRegistry(gpus, sharedmem.CUDAOptions{MaxReadBytes: 32})
	_, h := gpus.export(0, 128)
	if err := reg.RegisterCUDA("g", h, 0, 64); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what         string
		region       string
		offset, size uint64
		code         core.Code
		want         string
	}{
		{"an unknown region", "nope", 0, 8, core.CodeNotFound, "Unable to find shared memory region: 'nope'"},
		{"an offset at the end", "g", 64, 1, core.CodeInvalidArg, "Invalid offset for shared memory region: 'g'"},
		{"a span past the end", "g", 60, 8, core.CodeInvalidArg, "Invalid offset + byte size for shared memory region: 'g'"},
		{"a span past the registered size, inside the allocation", "g", 0, 65, core.CodeInvalidArg, "Invalid offset + byte size for shared memory region: 'g'"},
		{"a size that overflows", "g", 8, math.MaxUint64 - 4, core.CodeInvalidArg,
			"Integer overflow detected: byte_size (18446744073709551611) + offset (8) exceeds maximum value (18446744073709551615) for region 'g'"},
	} {
		_, err := reg.Acquire(tc.region, tc.offset, tc.size)
		wantExact(t, tc.what, err, tc.code, tc.want)
	}
	l, err := reg.Acquire("g", 0, 33)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	_, err = l.Read()
	wantError(t, "an input larger than MaxReadBytes", err, core.CodeInvalidArg, "shared memory region 'g': 33 bytes of CUDA memory to copy to the host, more than")
	if gpus.copiesFrom != 0 {
		t.Errorf("%d copies for a refused input", gpus.copiesFrom)
	}
}

// TestCUDAHandleStaysOpenWhileALeaseHoldsIt: Unregister frees the name at
// once and closes the handle when the last lease is released; Close
// closes every handle no lease holds and reports the others.
func TestCUDAHandleStaysOpenWhileALeaseHoldsIt(t *testing.T) {
	t.Parallel()
	gpus := newFakeGPUs(1)
	reg := cudaRegistry(gpus, sharedmem.CUDAOptions{})
	mem, h := gpus.export(0, 64)
	for _, name := range []string{"a", "b", "c"} {
		if err := reg.RegisterCUDA(name, h, 0, 64); err != nil {
			t.Fatal(err)
		}
	}
	l, err := reg.Acquire("a", 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.UnregisterCUDA("a"); err != nil {
		t.Fatal(err)
	}
	if gpus.live() != 3 {
		t.Errorf("%d handles open; the leased one was closed under its lease", gpus.live())
	}
	if err := l.Write([]byte("late")); err != nil || string(mem[:4]) != "late" {
		t.Errorf("a write under the lease after Unregister: %v, memory %q", err, mem[:4])
	}
	if err := reg.RegisterCUDA("a", h, 0, 64); err != nil {
		t.Errorf("the name is not free after Unregister: %v", err)
	}
	held, err := reg.Acquire("b", 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Unregister(""); err != nil || gpus.live() != 4 {
		t.Errorf("Unregister of the system regions: %v, and %d CUDA handles open, want 4", err, gpus.live())
	}
	left, err := reg.Close()
	if err != nil || left != 2 || gpus.live() != 2 {
		t.Errorf("Close: %d left, %v, %d handles open; want the two leased ones", left, err, gpus.live())
	}
	l.Release()
	held.Release()
	if gpus.live() != 0 || reg.Mapped() != 0 {
		t.Errorf("after the leases ended %d handles open, %d regions mapped", gpus.live(), reg.Mapped())
	}
	wantError(t, "RegisterCUDA after Close", reg.RegisterCUDA("d", h, 0, 8), core.CodeUnavailable, "failed to register shared memory region 'd'")
}

// TestCUDAUnregisterReportsHandlesTheDriverFailsToClose: Triton's words
// for one region and for all of them; the regions are gone either way.
func TestCUDAUnregisterReportsHandlesTheDriverFailsToClose(t *testing.T) {
	t.Parallel()
	gpus := newFakeGPUs(1)
	reg := cudaRegistry(gpus, sharedmem.CUDAOptions{})
	_, h := gpus.export(0, 64)
	for _, name := range []string{"c", "a", "b"} {
		if err := reg.RegisterCUDA(name, h, 0, 64); err != nil {
			t.Fatal(err)
		}
	}
	gpus.failClose = true
	wantExact(t, "one region", reg.UnregisterCUDA("c"), core.CodeInternal, "failed to close CUDA IPC handle: invalid resource handle")
	wantExact(t, "every region", reg.UnregisterCUDA(""), core.CodeInternal, "Failed to unregister the following cuda shared memory regions: a ,b ,")
	if st, err := reg.CUDAStatus(""); err != nil || len(st) != 0 {
		t.Errorf("CUDAStatus after the failed closes: %+v %v", st, err)
	}
}

// TestRegistryHoldsAtMostMaxCUDARegions: past the bound, registering is
// refused and nothing stays open; system regions count apart.
func TestRegistryHoldsAtMostMaxCUDARegions(t *testing.T) {
	t.Parallel()
	gpus := newFakeGPUs(1)
	reg := sharedmem.New(sharedmem.Options{MaxRegions: 1, CUDA: sharedmem.CUDAOptions{Driver: gpus, MaxRegions: 2}})
	key, _ := object(t, 64)
	if err := reg.Register("s", key, 0, 8); err != nil {
		t.Fatal(err)
	}
	_, h := gpus.export(0, 64)
	for _, name := range []string{"a", "b"} {
		if err := reg.RegisterCUDA(name, h, 0, 8); err != nil {
			t.Fatal(err)
		}
	}
	wantExact(t, "a third CUDA region", reg.RegisterCUDA("c", h, 0, 8), core.CodeUnavailable,
		"failed to register shared memory region 'c': the server holds at most 2 CUDA regions (--cuda-shm-max-regions); unregister one first")
	if gpus.live() != 2 {
		t.Errorf("%d handles open, want 2", gpus.live())
	}
	if _, err := reg.Close(); err != nil || gpus.live() != 0 {
		t.Errorf("Close: %v, %d handles open", err, gpus.live())
	}
}
