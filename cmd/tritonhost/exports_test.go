package main

import (
	"sort"
	"strings"
	"testing"

	"tritonhost/include"
	"tritonhost/internal/testenv"
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

// TestBinaryNeedsNoNVIDIALibrary: the binary links go-nvml's cgo package
// (package gpu uses its types and mock), whose flags ask the linker to
// export everything and to leave the nvml* functions undefined, for
// go-nvml's loader to bind at run time. abi's version script keeps the
// exports to the API (above), so those functions are not dynamic symbols
// either: the binary names no NVIDIA library and no nvml or cu* symbol, and
// starts without the driver however it is linked (-z now included).
// package gpu loads NVML and CUDA with purego instead (gpu/doc.go).
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
}
