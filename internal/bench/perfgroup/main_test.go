package main

import (
	"os"
	"testing"
)

func TestReadGroupsEachSampleByItsInnermostFrame(t *testing.T) {
	f, err := os.Open("testdata/script.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]string{} // innermost function -> part, for command tritonhost
	var others int
	err = read(f, func(s sample) {
		if s.comm != "tritonhost" {
			others++
			return
		}
		got[s.sym] = partOf(s.sym, s.dso)
	})
	if err != nil {
		t.Fatal(err)
	}
	for sym, want := range map[string]string{
		"pvm_irq_enable":                    "kernel",
		"runtime.mallocgcSmallScanNoHeader": "Go runtime (scheduler, allocator, sync)",
		"github.com/tritonhost/tritonhost/internal/frontend/grpcserver.(*streamArena).segment": "tritonhost Go",
		"TRITONBACKEND_ResponseSend":                                      "C API (abi's C)",
		"tritonhost::backend::square::ModelInstanceState::ResponseThread": "backend (libtriton_*.so, libstdc++)",
		"__libc_calloc":                        "libc (malloc, mutexes, clock)",
		"google.golang.org/grpc/mem.NewBuffer": "grpc-go and protobuf",
		"runtime.cgocallbackg1":                "cgo crossings",
		"runtime.scanobject":                   "Go garbage collector",
	} {
		if got[sym] != want {
			t.Errorf("%s: part %q, want %q", sym, got[sym], want)
		}
	}
	if len(got) != 9 || others != 1 {
		t.Errorf("%d functions of tritonhost and %d other samples read, want 9 and 1: %v", len(got), others, got)
	}
	if _, ok := got["do_syscall_64"]; ok {
		t.Error("an outer frame was counted as a sample")
	}
}
