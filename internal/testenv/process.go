package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartPatience bounds how long a test waits for a process to say what the
// test waits for (Await): a server that loads the example models under
// the race detector, on a loaded machine, takes a good part of it to say
// that it serves.
const StartPatience = 2 * time.Minute

// Process is a child process that a test runs, its standard output and
// error kept together in a LogBuffer.
type Process struct {
	name     string // the binary's base name, for messages
	cmd      *exec.Cmd
	log      LogBuffer
	exited   chan struct{}
	waitErr  error
	exitedAt time.Time
}

// StartProcess runs bin with args, in the environment env (nil: this
// process's). At cleanup the process is killed if it still runs, and its
// output is logged when the test failed or TESTLOG is set.
func StartProcess(t testing.TB, bin string, env []string, args ...string) *Process {
	t.Helper()
	p := &Process{name: filepath.Base(bin), cmd: exec.Command(bin, args...), exited: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = &p.log, &p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		p.exitedAt = time.Now()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() || os.Getenv("TESTLOG") != "" {
			t.Logf("output of %s:\n%s", bin, p.Log())
		}
	})
	return p
}

// Log returns the process's output so far.
func (p *Process) Log() string { return p.log.String() }

// PID returns the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Await waits until the output matches re and returns the first match
// with its groups. It fails the test if the process exits first, or after
// StartPatience: for what a process announces (where it listens).
func (p *Process) Await(t testing.TB, what string, re *regexp.Regexp) []string {
	t.Helper()
	var m []string
	p.AwaitOutput(t, what, func(out string) bool {
		m = re.FindStringSubmatch(out)
		return m != nil
	})
	return m
}

// AwaitOutput waits until cond holds of the output so far. It fails the
// test if the process exits first, or after StartPatience.
func (p *Process) AwaitOutput(t testing.TB, what string, cond func(output string) bool) {
	t.Helper()
	exited := false
	poll(StartPatience, func() bool {
		exited = p.Exited() // before reading: the output of an exited process is all there
		return cond(p.Log()) || exited
	})
	switch {
	case cond(p.Log()):
	case exited:
		t.Fatalf("%s exited (%v) before %s:\n%s", p.name, p.waitErr, what, p.Log())
	default:
		t.Fatalf("%s: gave up waiting after %v for %s:\n%s", p.name, StartPatience, what, p.Log())
	}
}

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) {
	_ = p.cmd.Process.Signal(sig)
}

// Wait waits up to timeout for the process to exit and returns its exit
// status and when it exited; ok is false when it is still running.
func (p *Process) Wait(timeout time.Duration) (status int, at time.Time, ok bool) {
	select {
	case <-p.exited:
	case <-time.After(timeout):
		return 0, time.Time{}, false
	}
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
		return 0, p.exitedAt, true
	case errors.As(p.waitErr, &ee):
		return ee.ExitCode(), p.exitedAt, true
	default:
		return -1, p.exitedAt, true
	}
}

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// Kill ends the process at once, if it still runs, and waits for it.
func (p *Process) Kill() {
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Stop ends the process as an operator does, with SIGTERM, and expects a
// clean exit within a minute: status 0, and no data race or backend API
// object still live at exit reported in its output. A process that has
// already exited is left as it is.
func (p *Process) Stop(t testing.TB) {
	t.Helper()
	if p.Exited() {
		return
	}
	p.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		p.Kill()
		t.Errorf("%s did not exit after SIGTERM", p.name)
	}
	if p.waitErr != nil {
		t.Errorf("%s exited with %v", p.name, p.waitErr)
	}
	if strings.Contains(p.Log(), "DATA RACE") {
		t.Errorf("%s reported a data race", p.name)
	}
	if strings.Contains(p.Log(), "still live at exit") {
		t.Errorf("%s leaked backend API objects", p.name)
	}
}

// ProcStatus returns a field of /proc/<pid>/status as a number (kB values
// in bytes): "Threads", "VmRSS", "VmHWM".
func (p *Process) ProcStatus(t testing.TB, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID()))
	if err != nil {
		t.Fatalf("read the status of %s: %v", p.name, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || name != field {
			continue
		}
		f := strings.Fields(rest)
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			t.Fatalf("/proc status %s: %q", field, rest)
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		return n
	}
	t.Fatalf("/proc status has no %s", field)
	return 0
}
