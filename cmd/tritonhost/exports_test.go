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
