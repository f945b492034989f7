package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clockTicks is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on
// Linux).
const clockTicks = 100

// cpuTime is the CPU time (user and system, every thread) a server process
// has used so far, from /proc/<pid>/stat. On a machine shared with other
// load, what a server spends per request moves far less than how many
// requests it serves per second: the benchmarks report both.
func (p *process) cpuTime(b *testing.B) time.Duration {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.proc.PID()))
	if err != nil {
		b.Fatalf("the server's CPU time: %v", err)
	}
	// The command name (field 2) may hold spaces; the fields after it do not.
	rest := string(data[strings.LastIndexByte(string(data), ')')+2:])
	fields := strings.Fields(rest) // fields[0] is the state (field 3)
	if len(fields) < 13 {
		b.Fatalf("the server's CPU time: %d fields in /proc/<pid>/stat", len(fields)+2)
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime (fields 14 and 15)
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("the server's CPU time: %v", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// switches is how many times the server's threads gave up the CPU to
// wait (voluntary context switches, summed over /proc/<pid>/task): a
// thread parks for each hand-off it waits for, so the count per request
// shows the hand-offs, whatever other load the machine has (which shows
// in the involuntary switches instead).
func (p *process) switches(b *testing.B) int64 {
	b.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", p.proc.PID()))
	if err != nil || len(tasks) == 0 {
		b.Fatalf("the server's threads: %v", err)
	}
	var n int64
	for _, t := range tasks {
		f, err := os.Open(t)
		if err != nil {
			continue // the thread has exited
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "voluntary_ctxt_switches:"); ok {
				c, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += c
			}
		}
		f.Close()
	}
	return n
}

// machineIdle is the time every CPU of the machine has spent idle (or
// waiting for I/O) so far, from the first line of /proc/stat.
func machineIdle(b *testing.B) time.Duration {
	b.Helper()
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatalf("the machine's idle time: %v", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line) // "cpu", user, nice, system, idle, iowait, ...
	if len(fields) < 6 || fields[0] != "cpu" {
		b.Fatalf("the machine's idle time: /proc/stat begins %q", line)
	}
	var ticks int64
	for _, f := range fields[4:6] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("the machine's idle time: %v", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// cpuMeter adds up a server's CPU time and voluntary context switches over
// the spans a benchmark measures, and the machine's idle time and wall
// time over them: a server that leaves cores idle while its clients wait
// loses rate that its CPU time does not show.
type cpuMeter struct {
	p                       *process
	start, total            time.Duration
	startSwitches, switches int64
	startIdle, idle         time.Duration
	startWall               time.Time
	wall                    time.Duration
}

func (m *cpuMeter) begin(b *testing.B) {
	m.start, m.startSwitches = m.p.cpuTime(b), m.p.switches(b)
	m.startIdle, m.startWall = machineIdle(b), time.Now()
}

func (m *cpuMeter) end(b *testing.B) {
	m.total += m.p.cpuTime(b) - m.start
	m.switches += m.p.switches(b) - m.startSwitches
	m.idle += machineIdle(b) - m.startIdle
	m.wall += time.Since(m.startWall)
}

// idleShare is the part of the machine's CPU time that was idle over the
// spans measured.
func (m *cpuMeter) idleShare() float64 {
	if m.wall <= 0 {
		return 0
	}
	return float64(m.idle) / (float64(m.wall) * float64(runtime.NumCPU()))
}

// reportCPU reports both servers' CPU time and voluntary context switches
// per item (request or response), and the CPU times' ratio:
// server-us/<unit> and server-cs/<unit> for tritonhost, ceiling-us/<unit>
// and ceiling-cs/<unit> for the plain server, and cpu-ratio, tritonhost's
// CPU time over the plain server's.
func reportCPU(b *testing.B, unit string, ours *cpuMeter, oursItems float64, ceiling *cpuMeter, ceilingItems float64) {
	o := float64(ours.total.Microseconds()) / oursItems
	c := float64(ceiling.total.Microseconds()) / ceilingItems
	ocs, ccs := float64(ours.switches)/oursItems, float64(ceiling.switches)/ceilingItems
	b.ReportMetric(o, "server-us/"+unit)
	b.ReportMetric(c, "ceiling-us/"+unit)
	b.ReportMetric(o/c, "cpu-ratio")
	b.ReportMetric(ocs, "server-cs/"+unit)
	b.ReportMetric(ccs, "ceiling-cs/"+unit)
	fmt.Printf("server CPU per %s: tritonhost %.2f us and %.2f context switches, plain grpc-go %.2f us and %.2f, CPU ratio %.2f\n",
		unit, o, ocs, c, ccs, o/c)
	reportIdle(b, ours, ceiling, "plain grpc-go")
}

// reportIdle reports the share of the machine that was idle while each
// server served, as server-idle-% and ceiling-idle-%; ceilingName names
// the plain server in what it prints.
func reportIdle(b *testing.B, ours, ceiling *cpuMeter, ceilingName string) {
	oi, ci := 100*ours.idleShare(), 100*ceiling.idleShare()
	b.ReportMetric(oi, "server-idle-%")
	b.ReportMetric(ci, "ceiling-idle-%")
	fmt.Printf("machine idle while each served: tritonhost %.0f%%, %s %.0f%%\n", oi, ceilingName, ci)
}
