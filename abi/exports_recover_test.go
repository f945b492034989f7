package abi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryExportRecovers checks the source: a Go function that C calls
// (//export) must recover from panics before it does anything, so that a
// bug in the server answers a backend with an error instead of killing the
// process on the backend's thread.
func TestEveryExportRecovers(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	exports := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !exported(fn) {
				continue
			}
			exports++
			if !recoversFirst(fn.Body.List) {
				t.Errorf("%s: %s does not begin with defer recoverError or recoverLog", fset.Position(fn.Pos()), fn.Name.Name)
			}
		}
	}
	if exports == 0 {
		t.Fatal("found no //export function")
	}
}

// exported reports whether fn carries a //export directive.
func exported(fn *ast.FuncDecl) bool {
	if fn.Doc == nil {
		return false
	}
	for _, c := range fn.Doc.List {
		if c.Text == "//export "+fn.Name.Name {
			return true
		}
	}
	return false
}

// recoversFirst reports whether one of the first two statements (after an
// optional constant) defers recoverError or recoverLog.
func recoversFirst(stmts []ast.Stmt) bool {
	for i, s := range stmts {
		if i > 1 {
			break
		}
		d, ok := s.(*ast.DeferStmt)
		if !ok {
			continue
		}
		if id, ok := d.Call.Fun.(*ast.Ident); ok && (id.Name == "recoverError" || id.Name == "recoverLog") {
			return true
		}
	}
	return false
}
