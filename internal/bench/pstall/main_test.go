package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func TestReadFindsThreadsThatExitWithAP(t *testing.T) {
	f, err := os.Open("testdata/parsed.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := read(f)
	if err != nil {
		t.Fatal(err)
	}
	if rep.procs != 2 || rep.span != 12*time.Millisecond {
		t.Errorf("GOMAXPROCS %d over %v, want 2 over 12ms", rep.procs, rep.span)
	}
	// The exit on P 0 waits 300 µs for thread 11; the one on P 1 waits 10
	// ms (thread 21's own later event does not count); the one without a P
	// is not a stall; the last one's P is never used again.
	want := []stall{{p: 0, exitedAt: 2000101, unused: 300 * time.Microsecond}, {p: 1, exitedAt: 2400001, unused: 10 * time.Millisecond}, {p: 0, exitedAt: 13000000, unused: -1}}
	if len(rep.stalls) != len(want) {
		t.Fatalf("stalls %+v, want %+v", rep.stalls, want)
	}
	for i := range want {
		if rep.stalls[i] != want[i] {
			t.Errorf("stall %d: %+v, want %+v", i, rep.stalls[i], want[i])
		}
	}
	var out bytes.Buffer
	rep.print(&out)
	for _, s := range []string{"3 threads from C exited holding a P", "median 300µs", "most 10ms", "in all 10ms of 24ms of processor time"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("report %q lacks %q", out.String(), s)
		}
	}
}

func TestReadRefusesWhatIsNotATrace(t *testing.T) {
	if _, err := read(strings.NewReader("goroutine 1 [running]:\nmain.main()\n")); err == nil {
		t.Error("read took a goroutine dump for a trace")
	}
}
