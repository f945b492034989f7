package coretest

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// trackLabel is the pprof label key that marks tracked goroutines.
const trackLabel = "coretest.track"

var trackSeq atomic.Uint64

// Track runs f on the calling goroutine with a label that every goroutine f
// starts inherits, and so every goroutine those start, to any depth. At
// cleanup, after the cleanups registered later than this call (the ones that
// stop what f started), the test fails if any of those goroutines is still
// running testenv.Patience later.
//
// Goroutines started later by other goroutines (a test calling LoadModel,
// say) are not tracked; wrap such calls in Track too.
func Track(t testing.TB, f func()) {
	t.Helper()
	value := labelledRun(f)
	t.Cleanup(func() {
		if left := waitUntracked(value); len(left) > 0 {
			t.Errorf("%d tracked goroutine(s) (a server's, a backend's) outlived the test's cleanup:\n%s", len(left), strings.Join(left, "\n\n"))
		}
	})
}

// Settle runs f like Track, then waits until every goroutine f started,
// directly or not, has ended, failing the test after testenv.Patience. It lets
// what f sets off land before the test goes on: cancelling a context, say,
// whose context.AfterFunc callbacks run on goroutines of their own.
func Settle(t testing.TB, f func()) {
	t.Helper()
	if left := waitUntracked(labelledRun(f)); len(left) > 0 {
		t.Fatalf("%d goroutine(s) did not end:\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

// labelledRun runs f with a new label value, which the goroutines it
// starts inherit, and returns the value.
func labelledRun(f func()) string {
	value := fmt.Sprintf("g%d", trackSeq.Add(1))
	pprof.Do(context.Background(), pprof.Labels(trackLabel, value), func(context.Context) { f() })
	return value
}

// waitUntracked waits until no goroutine carries the label value, and
// returns the stacks of those still running after testenv.Patience.
func waitUntracked(value string) []string {
	var left []string
	testenv.Eventually(func() bool {
		left = labelled(value)
		return len(left) == 0
	})
	return left
}

// labelled returns the goroutine profile records (count, stack) of the
// goroutines carrying the label value.
func labelled(value string) []string {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return []string{"goroutine profile: " + err.Error()}
	}
	mark := fmt.Sprintf("%q:%q", trackLabel, value)
	var out []string
	for _, rec := range strings.Split(buf.String(), "\n\n") {
		if strings.Contains(rec, mark) {
			out = append(out, rec)
		}
	}
	return out
}
