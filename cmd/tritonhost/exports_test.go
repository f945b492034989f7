package main

import (
	"debug/buildinfo"
	"sort"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/include"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestBinaryExportsExactlyTheHeaderAPI reads the dynamic symbol table of the
// server binary (built with -race too when the tests are): a backend binds
// to these symbols, so they must be every host function the headers
// declare, no backend entry point, and nothing else (abi.go explains how
// the rest of the Go and C runtime is kept out).
func TestBinaryExportsExactlyTheHeaderAPI(t *testing.T) {
	exported := testenv.ReadDynamicSymbols(t, serverBinary).Defined
	fns, err := include.Functions()
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	var missing []string
	for _, fn := range fns {
		declared[fn.Name] = true
		isFunc, ok := exported[fn.Name]
		switch {
		case fn.EntryPoint && ok:
			t.Errorf("%s is a backend entry point but the server exports it", fn.Name)
		case !fn.EntryPoint && !ok:
			missing = append(missing, fn.Name)
		case !fn.EntryPoint && !isFunc:
			t.Errorf("%s is exported but not as a function", fn.Name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d declared host function(s) are not exported: %s", len(missing), strings.Join(missing, ", "))
	}
	var stray []string
	for name := range exported {
		if !declared[name] {
			stray = append(stray, name)
		}
	}
	sort.Strings(stray)
	if len(stray) > 0 {
		t.Errorf("the binary exports symbols the headers do not declare (a backend could bind to them): %s", strings.Join(stray, ", "))
	}
	host, _ := include.HostFunctions()
	t.Logf("%d host functions declared; %d symbols exported", len(host), len(exported))
}

// TestBinaryNeedsNoNVIDIALibrary: the binary starts without the NVIDIA
// driver however it is linked (-z now included): it names no NVIDIA
// library and leaves no nvml or cu* symbol for the dynamic linker, as
// package gpu opens NVML and CUDA with purego (gpu/doc.go). go-nvml is
// not linked at all: its cgo package, which package gpu's tests use for
// its mock, would bring flags that export every symbol and leave its
// nvml* functions undefined.
func TestBinaryNeedsNoNVIDIALibrary(t *testing.T) {
	syms := testenv.ReadDynamicSymbols(t, serverBinary)
	for _, lib := range syms.Needed {
		if strings.Contains(lib, "nvidia") || strings.Contains(lib, "cuda") {
			t.Errorf("the binary needs %s", lib)
		}
	}
	for _, s := range syms.Undefined {
		if strings.HasPrefix(s, "nvml") || strings.HasPrefix(s, "cu") && !strings.HasPrefix(s, "cur") {
			t.Errorf("the binary leaves %s for the dynamic linker to find", s)
		}
	}
	info, err := buildinfo.ReadFile(serverBinary)
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range info.Deps {
		if strings.HasPrefix(dep.Path, "github.com/NVIDIA/go-nvml") {
			t.Errorf("the binary links %s %s: go-nvml is for the tests' mock only", dep.Path, dep.Version)
		}
	}
}
