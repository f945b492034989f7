package isolation

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core/serverlog"
)

// TestAWorkersLogDropsTheSchedulerTraceOnlyWhereAsked: a worker's log
// lines reach the server's log, a runtime crash line is kept as the
// fault, and the runtime's scheduler-trace lines (which the server's own
// GODEBUG setting may print) are dropped when the relay is told to.
func TestAWorkersLogDropsTheSchedulerTraceOnlyWhereAsked(t *testing.T) {
	const trace = "SCHED 2147483647ms: gomaxprocs=2 idleprocs=2 threads=5"
	for _, dropTrace := range []bool{true, false} {
		var log bytes.Buffer
		pr := &process{model: &isolatedModel{p: &Provider{opts: Options{Logger: serverlog.New(&log)}}}, logDone: make(chan struct{})}
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go pr.relayLog(r, dropTrace)
		_, _ = w.WriteString("backend says hello\n" + trace + "\nSIGSEGV: segmentation violation\n")
		w.Close()
		<-pr.logDone
		got := log.String()
		if !strings.Contains(got, "backend says hello") || !strings.Contains(got, "SIGSEGV") {
			t.Errorf("dropTrace=%v: the worker's lines are missing from the log:\n%s", dropTrace, got)
		}
		if strings.Contains(got, trace) == dropTrace {
			t.Errorf("dropTrace=%v: the log has the trace line: %v\n%s", dropTrace, !dropTrace, got)
		}
		if pr.fault != "SIGSEGV: segmentation violation" {
			t.Errorf("dropTrace=%v: fault %q", dropTrace, pr.fault)
		}
	}
}
