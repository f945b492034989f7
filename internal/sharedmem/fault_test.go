package sharedmem

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
)

// TestACopyThatFaultsFailsAlone: a copy from or to a mapping whose
// object shrank after the size check (here: with the check skipped, as a
// shrink between the check and the copy would leave it) faults, and the
// fault is this copy's error, not the end of the process; a fault outside
// the mapping is not taken for one.
func TestACopyThatFaultsFailsAlone(t *testing.T) {
	name := fmt.Sprintf("tritonhost-fault-%d", os.Getpid())
	path := filepath.Join(shmDir, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Skipf("POSIX shared memory is not available here: %v", err)
	}
	t.Cleanup(func() { os.Remove(path) })
	size := 4 * os.Getpagesize()
	if err := f.Truncate(int64(size)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rg, err := mapRegion("r", "/"+name, 0, uint64(size))
	if err != nil {
		t.Fatal(err)
	}
	defer rg.unmap()
	buf := make([]byte, size)
	if err := rg.copyGuarded(buf, rg.data, "reading"); err != nil {
		t.Fatalf("a copy from the whole object: %v", err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		doing    string
		dst, src []byte
	}{
		{"reading", buf, rg.data},
		{"writing", rg.data, buf},
	} {
		err := rg.copyGuarded(tc.dst, tc.src, tc.doing)
		if core.CodeOf(err) != core.CodeInternal || !strings.Contains(err.Error(), "the object shrank under region 'r' while "+tc.doing+" it") {
			t.Errorf("%s a truncated object: %v, want the fault as an INTERNAL error", tc.doing, err)
		}
	}
	if err := rg.readInto(buf, rg.data); core.CodeOf(err) != core.CodeInternal || !strings.Contains(err.Error(), "the object is now 0 bytes") {
		t.Errorf("readInto a truncated object: %v, want the size check's error", err)
	}
	if rg.holds(uintptr(0x1000)) {
		t.Error("the region claims an address outside its mapping")
	}
}
