package testenv

import (
	"debug/elf"
	"sort"
	"testing"
)

// DynamicSymbols is what an ELF executable or shared library offers to and
// asks of the dynamic linker.
type DynamicSymbols struct {
	// Defined maps each global or weak symbol the file defines to whether
	// it is a function.
	Defined map[string]bool
	// Undefined lists the symbols the file leaves to others, sorted.
	Undefined []string
	// Needed lists the file's DT_NEEDED libraries.
	Needed []string
	// Soname is the file's DT_SONAME ("" when it has none).
	Soname string
}

// ReadDynamicSymbols reads the dynamic symbol table of the ELF file at path.
func ReadDynamicSymbols(t testing.TB, path string) DynamicSymbols {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	out := DynamicSymbols{Defined: map[string]bool{}}
	for _, s := range syms {
		bind := elf.ST_BIND(s.Info)
		switch {
		case s.Section == elf.SHN_UNDEF:
			out.Undefined = append(out.Undefined, s.Name)
		case bind == elf.STB_GLOBAL || bind == elf.STB_WEAK:
			out.Defined[s.Name] = elf.ST_TYPE(s.Info) == elf.STT_FUNC
		}
	}
	sort.Strings(out.Undefined)
	if out.Needed, err = f.ImportedLibraries(); err != nil {
		t.Fatal(err)
	}
	if sonames, err := f.DynString(elf.DT_SONAME); err == nil && len(sonames) > 0 {
		out.Soname = sonames[0]
	}
	return out
}

// DefinedNames returns the names of Defined, sorted.
func (d DynamicSymbols) DefinedNames() []string {
	names := make([]string, 0, len(d.Defined))
	for n := range d.Defined {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
