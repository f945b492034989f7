// Command pstall reads a Go execution trace as `go tool trace -d=parsed`
// prints it, on its standard input, and reports how long the Go processors
// (Ps) that threads of a backend took with them stayed unused.
//
// A thread that a backend started itself (not one of Go's) enters Go when
// it calls the C API back, and keeps the P it took when it returns to C:
// Go's runtime expects it back soon. When the thread exits instead, or
// blocks in C, the P stays with it until the runtime's monitor takes it
// back (after up to 10 ms once the monitor has backed off) or a new thread
// of the backend first enters Go. pstall finds each such exit (a goroutine
// of a thread from C going from Syscall to NotExist while it holds a P) and
// measures the time until another thread runs on that P.
//
//	go tool trace -d=parsed trace.out | pstall
package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// event is one line of the parsed trace that pstall uses.
type event struct {
	m, p       int64  // the thread and the P of the event (-1: none)
	at         int64  // nanoseconds, the trace's clock
	transition string // a goroutine's or a P's state change ("Syscall->NotExist"), else ""
	procs      int64  // the value of a /sched/gomaxprocs:threads metric, else 0
}

// parse reads one line; ok is false for lines pstall does not use.
func parse(line string) (e event, ok bool) {
	fields := strings.Fields(line)
	if len(fields) < 5 {
		return e, false
	}
	var err error
	for _, f := range fields {
		k, v, found := strings.Cut(f, "=")
		switch {
		case !found && strings.Contains(f, "->"):
			e.transition = f
		case k == "M":
			e.m, err = strconv.ParseInt(v, 10, 64)
		case k == "P":
			e.p, err = strconv.ParseInt(v, 10, 64)
		case k == "Time":
			e.at, err = strconv.ParseInt(v, 10, 64)
			ok = err == nil
		case k == "Value" && strings.Contains(line, `"/sched/gomaxprocs:threads"`):
			e.procs, err = strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(v, "Value{Uint64("), ")}"), 10, 64)
		}
		if err != nil {
			return e, false
		}
	}
	return e, ok
}

// stall is the time a P stayed unused after a thread exited with it.
type stall struct {
	p        int64
	exitedAt int64
	unused   time.Duration // -1: no other thread ran on it before the trace ended
}

// report is what pstall prints.
type report struct {
	span   time.Duration // from the first event to the last
	procs  int64         // GOMAXPROCS (0: the trace did not say)
	stalls []stall
}

// read reads a parsed trace and finds the stalls in it.
func read(r io.Reader) (report, error) {
	var rep report
	var events []event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if e, ok := parse(sc.Text()); ok {
			events = append(events, e)
		}
	}
	if err := sc.Err(); err != nil {
		return rep, fmt.Errorf("read the trace: %w", err)
	}
	if len(events) == 0 {
		return rep, fmt.Errorf("no events: is the input `go tool trace -d=parsed` output?")
	}
	slices.SortStableFunc(events, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	rep.span = time.Duration(events[len(events)-1].at - events[0].at)
	for i, e := range events {
		if e.procs > 0 {
			rep.procs = e.procs
		}
		if e.transition != "Syscall->NotExist" || e.p < 0 {
			continue
		}
		s := stall{p: e.p, exitedAt: e.at, unused: -1}
		for _, next := range events[i+1:] {
			if next.p == e.p && next.m != e.m {
				s.unused = time.Duration(next.at - e.at)
				break
			}
		}
		rep.stalls = append(rep.stalls, s)
	}
	return rep, nil
}

// print writes the report: how many threads exited with a P, and how long
// their P stayed unused (median, 90th percentile, most, and in all, against
// the processor time of the trace).
func (rep report) print(w io.Writer) {
	fmt.Fprintf(w, "trace of %v, GOMAXPROCS %d: %d threads from C exited holding a P\n", rep.span.Round(time.Millisecond), rep.procs, len(rep.stalls))
	var unused []time.Duration
	var total time.Duration
	for _, s := range rep.stalls {
		if s.unused >= 0 {
			unused = append(unused, s.unused)
			total += s.unused
		}
	}
	if len(unused) == 0 {
		return
	}
	slices.Sort(unused)
	q := func(f float64) time.Duration { return unused[int(f*float64(len(unused)-1))] }
	fmt.Fprintf(w, "P unused after the exit: median %v, 90th percentile %v, most %v\n",
		q(0.5).Round(time.Microsecond), q(0.9).Round(time.Microsecond), unused[len(unused)-1].Round(time.Microsecond))
	if rep.procs > 0 && rep.span > 0 {
		fmt.Fprintf(w, "in all %v of %v of processor time (%.1f%%)\n", total.Round(time.Millisecond),
			(time.Duration(rep.procs) * rep.span).Round(time.Millisecond), 100*float64(total)/float64(time.Duration(rep.procs)*rep.span))
	}
}

func main() {
	rep, err := read(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pstall:", err)
		os.Exit(1)
	}
	rep.print(os.Stdout)
}
