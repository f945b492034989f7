package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// isolatedParam is the model configuration line that isolates a model.
const isolatedParam = `parameters [ { key: "tritonhost_isolation" value: { string_value: "process" } } ]` + "\n"

// serverResources is what a server process holds that a leak across
// worker restarts would grow.
type serverResources struct {
	fds        []string // where each open descriptor leads (its kind, for sockets and pipes)
	threads    int64
	memfds     int // mappings of shared memory (the workers' tensor regions)
	goroutines int
	workers    []int // live child processes
	zombies    []int // child processes not reaped
	strays     []int // worker processes of this server that are not its children
}

func (r serverResources) String() string {
	return fmt.Sprintf("%d descriptors, %d threads, %d shared-memory mappings, %d goroutines, workers %v, zombies %v, strays %v",
		len(r.fds), r.threads, r.memfds, r.goroutines, r.workers, r.zombies, r.strays)
}

// inodeRE is the inode number in a descriptor's link ("socket:[1234]"),
// which differs between two sockets of the same use.
var inodeRE = regexp.MustCompile(`:\[\d+\]$`)

// readResources reads srv's resources from /proc and its goroutine
// profile (it must run with diagnostics).
func readResources(t *testing.T, srv *testenv.Server) serverResources {
	t.Helper()
	pid := srv.PID()
	r := serverResources{goroutines: srv.Goroutines(t), threads: srv.ProcStatus(t, "Threads")}
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		r.fds = append(r.fds, inodeRE.ReplaceAllString(target, ""))
	}
	slices.Sort(r.fds)
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	r.memfds = bytes.Count(maps, []byte("/memfd:"))
	for _, c := range children(t, pid) {
		if processState(c) == "Z" {
			r.zombies = append(r.zombies, c)
		} else {
			r.workers = append(r.workers, c)
		}
	}
	// A worker knows its server by the environment it was started with.
	mark := []byte("TRITONHOST_WORKER_PARENT=" + strconv.Itoa(pid) + "\x00")
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		id, err := strconv.Atoi(p.Name())
		if err != nil || slices.Contains(r.workers, id) || slices.Contains(r.zombies, id) {
			continue
		}
		if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", id)); err == nil && bytes.Contains(env, mark) && processState(id) != "" {
			r.strays = append(r.strays, id)
		}
	}
	return r
}

// children lists the child processes of pid (of every thread).
func children(t *testing.T, pid int) []int {
	t.Helper()
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(data)) {
			if c, err := strconv.Atoi(s); err == nil {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out
}

// processState is the state letter of process pid ("R", "S", "Z", ...),
// "" once it is gone.
func processState(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	rest := string(data[bytes.LastIndexByte(data, ')')+1:])
	if f := strings.Fields(rest); len(f) > 0 {
		return f[0]
	}
	return ""
}

// workerHosting returns the pid of srv's live worker that loaded the
// backend library lib, 0 if none has.
func workerHosting(t *testing.T, srv *testenv.Server, lib string) int {
	t.Helper()
	for _, c := range children(t, srv.PID()) {
		if maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", c)); err == nil && bytes.Contains(maps, []byte(lib)) && processState(c) != "Z" {
			return c
		}
	}
	return 0
}

// mib is the 1 MiB INT32 tensor the leak test sends: past the inline
// bound, so it crosses in shared memory both ways.
var mib = func() []byte {
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}()

// identityMiB sends mib to identity_int32 and reports whether it came
// back whole.
func identityMiB(srv *serverProcess) error {
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience)
	defer cancel()
	resp, err := srv.Client.ModelInfer(ctx, &pb.ModelInferRequest{ModelName: "identity_int32",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{int64(len(mib) / 4)}}},
		RawInputContents: [][]byte{mib}})
	switch {
	case err != nil:
		return err
	case len(resp.GetRawOutputContents()) != 1 || !bytes.Equal(resp.GetRawOutputContents()[0], mib):
		return fmt.Errorf("the output is not the input")
	}
	return nil
}

// TestIsolatedRestartsLeakNothing: 100 crash and restart cycles of
// isolated models — crash's backend dereferencing NULL in execute, and
// identity_int32's worker killed with SIGSEGV after a 1 MiB request whose
// tensors crossed in shared memory — leave the server as they found it:
// no more descriptors (nor other ones), threads, shared-memory mappings or
// goroutines than before (beyond a few the runtime and gRPC come and go
// with, far fewer than one per cycle), one live worker per isolated
// model, no zombie, no worker of the server's that is not its child; and
// every cycle was a restart (/metrics counts them).
func TestIsolatedRestartsLeakNothing(t *testing.T) {
	lib := testenv.SharedLibrary(t, "triton_crash", filepath.Join("testdata", "crash.c"))
	repo := testenv.Repository(t,
		testenv.Model{Name: "crash", Config: crashConfig, Files: []string{lib}},
		testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(t, "identity_int32") + isolatedParam})
	srv := &serverProcess{testenv.StartServer(t, testenv.ServerConfig{Binary: serverBinary, Repo: repo, Diagnostics: true, Graceful: true,
		Args: []string{"--backend-restart-backoff", "1"}})}

	type victim struct {
		name   string
		crash  func(t *testing.T) // ends its worker
		serves func() bool        // it serves again
	}
	victims := []victim{
		{name: "crash",
			crash: func(t *testing.T) {
				if got := crashOnce(t, srv, 1); len(got) != 1 || !strings.Contains(got[0].err, "the model restarts") {
					t.Fatalf("IN = 1 got %+v, want the worker's end", got)
				}
			},
			serves: func() bool {
				got := crashOnce(t, srv, 0)
				return len(got) == 1 && got[0].err == ""
			}},
		{name: "identity_int32",
			crash: func(t *testing.T) {
				if err := identityMiB(srv); err != nil {
					t.Fatalf("1 MiB through identity_int32 before its crash: %v", err)
				}
				pid := workerHosting(t, srv.Server, "libtriton_identity.so")
				if pid == 0 {
					t.Fatal("identity_int32 serves, but no worker of the server loaded libtriton_identity.so")
				}
				if err := syscall.Kill(pid, syscall.SIGSEGV); err != nil {
					t.Fatal(err)
				}
				testenv.WaitUntil(t, fmt.Sprintf("worker %d to be reaped", pid), func() bool {
					return !slices.Contains(children(t, srv.PID()), pid)
				})
			},
			serves: func() bool { return identityMiB(srv) == nil }},
	}
	cycle := func(t *testing.T, v victim) {
		v.crash(t)
		testenv.WaitUntil(t, v.name+" to serve again", v.serves)
	}
	const warmup, cycles = 4, 100
	for i := range warmup { // what the runtime, gRPC and the first restarts set up once
		cycle(t, victims[i%2])
	}
	before := readResources(t, srv.Server)
	for i := range cycles {
		cycle(t, victims[i%2])
	}
	var after serverResources
	settled := func() bool {
		after = readResources(t, srv.Server)
		return len(after.fds) <= len(before.fds) && after.memfds <= before.memfds && after.threads <= before.threads+4 &&
			after.goroutines <= before.goroutines+4 && len(after.workers) == 2 && len(after.zombies) == 0 && len(after.strays) == 0
	}
	if !testenv.Eventually(settled) {
		t.Errorf("after %d crash and restart cycles: %v\nbefore them: %v", cycles, after, before)
	}
	if len(after.fds) > len(before.fds) {
		t.Errorf("descriptors open after the cycles that were not before: %v", missing(after.fds, before.fds))
	}
	// A restart is counted just after the new worker takes requests, which
	// may have answered the cycle's last request first.
	for _, v := range victims {
		srv.waitMetric(t, fmt.Sprintf(`tritonhost_backend_restarts_total{model=%q,version="1"}`, v.name), float64(warmup+cycles)/2)
	}
	metrics := srv.scrapeMetrics(t)
	for _, v := range victims {
		series := fmt.Sprintf(`tritonhost_backend_restarts_total{model=%q,version="1"}`, v.name)
		if got, want := sample(t, metrics, series), float64(warmup+cycles)/2; got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}

// missing returns the elements of a (sorted) that b (sorted) lacks,
// counting repeats.
func missing(a, b []string) []string {
	var out []string
	j := 0
	for _, s := range a {
		for j < len(b) && b[j] < s {
			j++
		}
		if j < len(b) && b[j] == s {
			j++
			continue
		}
		out = append(out, s)
	}
	return out
}
