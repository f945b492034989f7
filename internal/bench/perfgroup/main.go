// Command perfgroup reads `perf script -F comm,pid,ip,sym,dso` (with call
// chains) on its standard input and prints, for each command named on its
// command line, where its CPU time went: every sample is counted once, by
// the function it was taken in, grouped into the parts of a server that
// bench/profile.sh compares (the kernel, the Go runtime and its garbage
// collector, grpc-go, cgo's crossings, the C API, the backend, libc, and
// tritonhost's own Go code).
//
//	perf script -i perf.data -F comm,pid,ip,sym,dso | perfgroup tritonhost echoserver
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// A part is a group of functions, recognised by the first rule that
// matches a sample's function and library.
type part struct {
	name  string
	match func(sym, dso string) bool
}

func prefix(ps ...string) func(sym, dso string) bool {
	return func(sym, _ string) bool {
		for _, p := range ps {
			if strings.HasPrefix(sym, p) {
				return true
			}
		}
		return false
	}
}

func contains(ss ...string) func(sym, dso string) bool {
	return func(sym, _ string) bool {
		for _, s := range ss {
			if strings.Contains(sym, s) {
				return true
			}
		}
		return false
	}
}

func library(ls ...string) func(sym, dso string) bool {
	return func(_, dso string) bool {
		for _, l := range ls {
			if strings.Contains(dso, l) {
				return true
			}
		}
		return false
	}
}

var parts = []part{
	{"kernel", library("kernel.kallsyms", "[kernel")},
	{"backend (libtriton_*.so, libstdc++)", library("libtriton_", "libstdc++")},
	{"libc (malloc, mutexes, clock)", library("libc.so", "[vdso]")},
	{"C API (abi's C)", prefix("TRITON", "thost", "response_", "_cgoexp_")},
	{"cgo crossings", contains("cgocall", "cgocallback", "crosscall2", "exitsyscall", "entersyscall", "reentersyscall", "setBlockOnExitSyscall")},
	{"grpc-go and protobuf", prefix("google.golang.org/", "golang.org/x/net/")},
	{"tritonhost Go", prefix("github.com/tritonhost/tritonhost/")},
	{"Go garbage collector", contains("runtime.gc", "runtime.scan", "runtime.greyobject", "runtime.markBits", "runtime.findObject", "runtime.sweep", "runtime.wbBuf", "runtime.bgsweep", "runtime.tryDeferToSpanScan")},
	{"Go runtime (scheduler, allocator, sync)", prefix("runtime.", "internal/runtime/", "sync.", "internal/sync.", "aeshash", "gcWriteBarrier")},
	{"Go net, syscall and other", func(string, string) bool { return true }},
}

// partOf names the part a function belongs to.
func partOf(sym, dso string) string {
	for _, p := range parts {
		if p.match(sym, dso) {
			return p.name
		}
	}
	return parts[len(parts)-1].name
}

// sample is the function a sample was taken in, and its library.
type sample struct{ comm, sym, dso string }

// read calls f with the innermost frame of each sample.
func read(r io.Reader, f func(sample)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var comm string
	leaf := false // the sample's innermost frame was seen
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			comm, leaf = "", false
		case line[0] != ' ' && line[0] != '\t': // "comm pid"
			comm, leaf = strings.Fields(line)[0], false
		case !leaf && comm != "":
			leaf = true
			// "\tADDR SYMBOL (DSO)"
			fields := strings.SplitN(strings.TrimSpace(line), " ", 2)
			rest := ""
			if len(fields) == 2 {
				rest = fields[1]
			}
			sym, dso := rest, ""
			if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
				sym, dso = rest[:i], rest[i+2:len(rest)-1]
			}
			f(sample{comm, sym, dso})
		}
	}
	return sc.Err()
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: perf script -F comm,pid,ip,sym,dso | perfgroup COMMAND...")
		os.Exit(2)
	}
	counts := map[string]map[string]int{}
	totals := map[string]int{}
	for _, c := range os.Args[1:] {
		counts[c] = map[string]int{}
	}
	err := read(bufio.NewReader(os.Stdin), func(s sample) {
		byPart, ok := counts[s.comm]
		if !ok {
			return
		}
		totals[s.comm]++
		byPart[partOf(s.sym, s.dso)]++
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "perfgroup:", err)
		os.Exit(1)
	}
	for _, c := range os.Args[1:] {
		fmt.Printf("%s: %d samples\n", c, totals[c])
		names := make([]string, 0, len(counts[c]))
		for n := range counts[c] {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool { return counts[c][names[i]] > counts[c][names[j]] })
		for _, n := range names {
			fmt.Printf("  %5.1f%%  %s\n", 100*float64(counts[c][n])/float64(totals[c]), n)
		}
	}
}
