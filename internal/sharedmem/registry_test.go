package sharedmem_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
)

var objectSeq atomic.Int64

// object creates a POSIX shared-memory object of size bytes, as a client's
// shm_open and ftruncate do, and returns its key ("/name") and path. It is
// unlinked at cleanup.
func object(t *testing.T, size int64) (key, path string) {
	t.Helper()
	name := fmt.Sprintf("tritonhost-test-%d-%d", os.Getpid(), objectSeq.Add(1))
	path = filepath.Join("/dev/shm", name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Skipf("POSIX shared memory is not available here: %v", err)
	}
	t.Cleanup(func() { os.Remove(path) })
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return "/" + name, path
}

// mappings counts the mappings of path in this process.
func mappings(t *testing.T, path string) int {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("cannot read /proc/self/maps: %v", err)
	}
	n := 0
	for _, line := range strings.Split(string(maps), "\n") {
		if strings.HasSuffix(line, " "+path) {
			n++
		}
	}
	return n
}

func wantError(t *testing.T, what string, err error, code core.Code, want string) {
	t.Helper()
	if err == nil || core.CodeOf(err) != code || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("%s: %v (code %v), want code %v and a message starting %q", what, err, core.CodeOf(err), code, want)
	}
}

// TestRegionsShareMemoryWithTheClient: what a lease writes, the object
// holds; what the client writes, a lease reads; a region at an offset that
// is not page-aligned covers exactly its span.
func TestRegionsShareMemoryWithTheClient(t *testing.T) {
	t.Parallel()
	key, path := object(t, 10000)
	reg := sharedmem.New(sharedmem.Options{})
	defer reg.Close()
	if err := reg.Register("in", key, 0, 64); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register("out", key, 5000, 100); err != nil {
		t.Fatal(err)
	}
	st, err := reg.Status("")
	want := []sharedmem.RegionStatus{{Name: "in", Key: key, Offset: 0, ByteSize: 64}, {Name: "out", Key: key, Offset: 5000, ByteSize: 100}}
	if err != nil || !slices.Equal(st, want) {
		t.Errorf("Status: %v %v, want %v", st, err, want)
	}
	if st, err := reg.Status("out"); err != nil || !slices.Equal(st, want[1:]) {
		t.Errorf("Status(out): %v %v", st, err)
	}

	out, err := reg.Acquire("out", 10, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Write([]byte("abcd")); err != nil {
		t.Fatal(err)
	}
	out.Release()
	data, err := os.ReadFile(path)
	if err != nil || string(data[5010:5014]) != "abcd" || bytes.Count(data, []byte{0}) != len(data)-4 {
		t.Errorf("the object does not hold what the lease wrote where it wrote it (%v)", err)
	}

	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("client"), 60); err != nil {
		t.Fatal(err)
	}
	in, err := reg.Acquire("in", 60, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := in.Read(); err != nil || string(got) != "clie" {
		t.Errorf("the lease reads %q (%v) where the client wrote \"clie\"", got, err)
	}
	in.Release()
	in.Release() // a second release does nothing
	if n := reg.Mapped(); n != 2 {
		t.Errorf("Mapped = %d, want 2", n)
	}
}

// TestRegisterRefusesWhatItCannotMap: Triton's errors for a key that names
// no object (or not one object), a span outside the object, a taken name;
// nothing stays mapped.
func TestRegisterRefusesWhatItCannotMap(t *testing.T) {
	t.Parallel()
	key, path := object(t, 4096)
	link := path + "-link"
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(link) })
	reg := sharedmem.New(sharedmem.Options{})
	defer reg.Close()
	if err := reg.Register("r", key, 0, 4096); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, region, key string
		offset, size      uint64
		code              core.Code
		want              string
	}{
		{"no such object", "a", "/tritonhost-test-none", 0, 8, core.CodeInternal, "Unable to open shared memory region: '/tritonhost-test-none'"},
		{"a path, not a key", "a", "/../etc/passwd", 0, 8, core.CodeInternal, "Unable to open shared memory region: '/../etc/passwd'"},
		{"an empty key", "a", "", 0, 8, core.CodeInternal, "Unable to open shared memory region: ''"},
		{"a symbolic link", "a", "/" + filepath.Base(link), 0, 8, core.CodeInternal, "Unable to open shared memory region: '/" + filepath.Base(link) + "'"},
		{"past the end", "a", key, 4000, 100, core.CodeInvalidArg, "failed to register shared memory region 'a': invalid args"},
		{"an offset past the end", "a", key, 1 << 62, 1, core.CodeInvalidArg, "failed to register shared memory region 'a': invalid args"},
		{"no bytes", "a", key, 0, 0, core.CodeInvalidArg, "failed to register shared memory region 'a': invalid args"},
		{"a taken name", "r", key, 0, 8, core.CodeAlreadyExists, "shared memory region 'r' already in manager"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, "Register", reg.Register(tc.region, tc.key, tc.offset, tc.size), tc.code, tc.want)
		})
	}
	if n, maps := reg.Mapped(), mappings(t, path); n != 1 || maps != 1 {
		t.Errorf("Mapped = %d and %d mapping(s) of the object, want 1 and 1", n, maps)
	}
	if err := reg.Unregister("nope"); err != nil {
		t.Errorf("Unregister of an unknown region: %v", err)
	}
	_, err := reg.Status("nope")
	wantError(t, "Status(nope)", err, core.CodeNotFound, "Unable to find system shared memory region: 'nope'")
}

// TestAcquireChecksBoundsEveryTime: Triton's errors for a span outside the
// region, and an error when the client shrank the object since.
func TestAcquireChecksBoundsEveryTime(t *testing.T) {
	t.Parallel()
	key, path := object(t, 8192)
	reg := sharedmem.New(sharedmem.Options{})
	defer reg.Close()
	if err := reg.Register("r", key, 4096, 4096); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		region       string
		offset, size uint64
		code         core.Code
		want         string
	}{
		{"an unknown region", "nope", 0, 4, core.CodeNotFound, "Unable to find shared memory region: 'nope'"},
		{"an offset at the end", "r", 4096, 0, core.CodeInvalidArg, "Invalid offset for shared memory region: 'r'"},
		{"a size past the end", "r", 4000, 97, core.CodeInvalidArg, "Invalid offset + byte size for shared memory region: 'r'"},
		{"a size that overflows", "r", 8, 1<<64 - 4, core.CodeInvalidArg,
			"Integer overflow detected: byte_size (18446744073709551612) + offset (8) exceeds maximum value (18446744073709551615) for region 'r'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := reg.Acquire(tc.region, tc.offset, tc.size)
			wantError(t, "Acquire", err, tc.code, tc.want)
		})
	}
	l, err := reg.Acquire("r", 4000, 96)
	if err != nil {
		t.Fatalf("the last 96 bytes: %v", err)
	}
	l.Release()
	if err := os.Truncate(path, 6000); err != nil {
		t.Fatal(err)
	}
	_, err = reg.Acquire("r", 0, 4)
	wantError(t, "Acquire after the object shrank", err, core.CodeInternal, "Invalid shared memory region: '"+key+"'")
}

// TestUnregisterKeepsALeasedRegionMapped: unregistering frees the name at
// once, but the memory a request holds stays mapped, and shared, until the
// request releases it; then it is unmapped.
func TestUnregisterKeepsALeasedRegionMapped(t *testing.T) {
	t.Parallel()
	key, path := object(t, 4096)
	reg := sharedmem.New(sharedmem.Options{})
	defer reg.Close()
	if err := reg.Register("r", key, 0, 4096); err != nil {
		t.Fatal(err)
	}
	l, err := reg.Acquire("r", 0, 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Unregister("r"); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Acquire("r", 0, 16); core.CodeOf(err) != core.CodeNotFound {
		t.Errorf("Acquire after Unregister: %v, want NOT_FOUND", err)
	}
	if err := reg.Register("r", key, 0, 4096); err != nil {
		t.Errorf("the name is not free after Unregister: %v", err)
	}
	if err := l.Write([]byte("still here")); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); !bytes.HasPrefix(data, []byte("still here")) {
		t.Error("a write through the lease did not reach the object")
	}
	if n, maps := reg.Mapped(), mappings(t, path); n != 2 || maps != 2 {
		t.Errorf("before the release: Mapped = %d, %d mapping(s); want 2 and 2", n, maps)
	}
	l.Release()
	if n, maps := reg.Mapped(), mappings(t, path); n != 1 || maps != 1 {
		t.Errorf("after the release: Mapped = %d, %d mapping(s); want 1 and 1", n, maps)
	}
	if err := reg.Unregister(""); err != nil {
		t.Fatal(err)
	}
	if n, maps := reg.Mapped(), mappings(t, path); n != 0 || maps != 0 {
		t.Errorf("after Unregister(\"\"): Mapped = %d, %d mapping(s); want 0 and 0", n, maps)
	}
}

// TestRegistryHoldsAtMostMaxRegions: the bound refuses one more region
// until one is unregistered.
func TestRegistryHoldsAtMostMaxRegions(t *testing.T) {
	t.Parallel()
	key, _ := object(t, 4096)
	reg := sharedmem.New(sharedmem.Options{MaxRegions: 2})
	defer reg.Close()
	for _, name := range []string{"a", "b"} {
		if err := reg.Register(name, key, 0, 8); err != nil {
			t.Fatal(err)
		}
	}
	wantError(t, "a third region", reg.Register("c", key, 0, 8), core.CodeUnavailable,
		"failed to register shared memory region 'c': the server holds at most 2 regions")
	if err := reg.Unregister("a"); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register("c", key, 0, 8); err != nil {
		t.Errorf("after an unregister: %v", err)
	}
}

// TestCloseUnmapsEverything: Close unmaps every region not leased, the
// leased one when its lease ends, and refuses new regions.
func TestCloseUnmapsEverything(t *testing.T) {
	t.Parallel()
	key, path := object(t, 4096)
	reg := sharedmem.New(sharedmem.Options{})
	for _, name := range []string{"a", "b", "c"} {
		if err := reg.Register(name, key, 0, 8); err != nil {
			t.Fatal(err)
		}
	}
	l, err := reg.Acquire("b", 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	left, err := reg.Close()
	if err != nil || left != 1 || mappings(t, path) != 1 {
		t.Errorf("Close: %d still leased, %v; %d mapping(s)", left, err, mappings(t, path))
	}
	wantError(t, "Register after Close", reg.Register("d", key, 0, 8), core.CodeUnavailable, "failed to register shared memory region 'd'")
	l.Release()
	if n, maps := reg.Mapped(), mappings(t, path); n != 0 || maps != 0 {
		t.Errorf("after the last release: Mapped = %d, %d mapping(s)", n, maps)
	}
}

// TestLeasesAndUnregistersRace: requests lease and release while the
// region is unregistered and registered again; run with -race.
func TestLeasesAndUnregistersRace(t *testing.T) {
	t.Parallel()
	key, path := object(t, 4096)
	reg := sharedmem.New(sharedmem.Options{})
	if err := reg.Register("r", key, 0, 4096); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				l, err := reg.Acquire("r", uint64(w*8), 8)
				if err != nil {
					continue // unregistered at that moment
				}
				if err := l.Write([]byte{byte(i)}); err != nil {
					t.Error(err)
				}
				l.Release()
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			reg.Unregister("r")
			reg.Register("r", key, 0, 4096)
		}
	})
	wg.Wait()
	if _, err := reg.Close(); err != nil {
		t.Fatal(err)
	}
	if n, maps := reg.Mapped(), mappings(t, path); n != 0 || maps != 0 {
		t.Errorf("after Close: Mapped = %d, %d mapping(s)", n, maps)
	}
}

// TestAShrunkObjectFailsItsLeases: once the client shrank the object under
// a region, reading an input from a lease taken before, or writing an
// output to it, fails with an error naming the object; a lease in what is
// left of the object still works.
func TestAShrunkObjectFailsItsLeases(t *testing.T) {
	t.Parallel()
	key, path := object(t, 8192)
	reg := sharedmem.New(sharedmem.Options{})
	defer reg.Close()
	if err := reg.Register("r", key, 0, 8192); err != nil {
		t.Fatal(err)
	}
	in, err := reg.Acquire("r", 4096, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()
	out, err := reg.Acquire("r", 6000, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	_, err = in.Read()
	wantError(t, "Read after the object shrank", err, core.CodeInternal, "Invalid shared memory region: '"+key+"' (the object is now 4096 bytes")
	wantError(t, "Write after the object shrank", out.Write([]byte("x")), core.CodeInternal, "Invalid shared memory region: '"+key+"'")
	if err := os.Truncate(path, 8192); err != nil {
		t.Fatal(err)
	}
	if data, err := in.Read(); err != nil || len(data) != 4096 {
		t.Errorf("Read once the object has its size again: %d bytes, %v", len(data), err)
	}
}

// TestReadIsBounded: a span larger than MaxReadBytes is refused before
// anything is copied.
func TestReadIsBounded(t *testing.T) {
	t.Parallel()
	key, _ := object(t, 8192)
	reg := sharedmem.New(sharedmem.Options{MaxReadBytes: 100})
	defer reg.Close()
	if err := reg.Register("r", key, 0, 8192); err != nil {
		t.Fatal(err)
	}
	l, err := reg.Acquire("r", 0, 101)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	_, err = l.Read()
	wantError(t, "Read of 101 bytes", err, core.CodeInvalidArg, "shared memory region 'r': 101 bytes of memory to copy to the host, more than the largest tensor the server holds, 100 bytes")
}
