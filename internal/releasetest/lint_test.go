package releasetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// A small module that passes every check, with the repository's
// .clang-format; each case below spoils it in one way.
var cleanLintTree = map[string]string{
	"go.mod":      "module lintprobe\n\ngo 1.26\n",
	"main.go":     "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"ok\")\n}\n",
	"c/probe.c":   "int\nprobe(int x)\n{\n  return x + 1;\n}\n",
	"c/probe.hpp": "#pragma once\n\nnamespace probe {\n\nint Twice(int x);\n\n}  // namespace probe\n",
}

const (
	misformattedC = "int  probe( int x ){return x+1;}\n"
	// A function nothing calls: staticcheck's U1000, which go vet ignores.
	unusedGo = "package main\n\nfunc unused() {}\n"
	// A format verb that does not fit its argument: go vet's printf check.
	badPrintfGo = "package main\n\nimport \"fmt\"\n\nfunc init() {\n\tfmt.Printf(\"%d\\n\", \"text\")\n}\n"
)

func TestLintFailsOnEachKindOfFinding(t *testing.T) {
	requireTools(t, "git", "clang-format")
	root := testenv.RepoRoot(t)
	style, err := os.ReadFile(filepath.Join(root, ".clang-format"))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Make(t, "lint-tools") // once, under the lock: the cases run in parallel

	tests := []struct {
		name  string
		files map[string]string // added to cleanLintTree
		// untracked: leave the added files out of git's index.
		untracked bool
		failed    string   // the checks that fail, as lint.sh lists them; "" for none
		naming    []string // what the output must name
	}{
		{name: "clean"},
		{name: "misformatted .c", files: map[string]string{"c/probe.c": misformattedC},
			failed: "clang-format", naming: []string{"c/probe.c:1:"}},
		{name: "misformatted .h", files: map[string]string{"c/probe.h": "int  probe( int x );\n"},
			failed: "clang-format", naming: []string{"c/probe.h:1:"}},
		{name: "misformatted .hpp", files: map[string]string{"c/probe.hpp": "#pragma once\nnamespace probe { int Twice(int x); }\n"},
			failed: "clang-format", naming: []string{"c/probe.hpp:2:"}},
		{name: "misformatted .cc, not yet added", files: map[string]string{"c/new.cc": misformattedC},
			untracked: true, failed: "clang-format", naming: []string{"c/new.cc:1:"}},
		{name: "misformatted Go", files: map[string]string{"main.go": "package main\nfunc main() {  }\n"},
			failed: "gofmt", naming: []string{"  main.go"}},
		{name: "go vet finding", files: map[string]string{"vet.go": badPrintfGo},
			failed: "go vet staticcheck", naming: []string{"vet.go:6:14: fmt.Printf format %d has arg", "(SA5009)"}},
		{name: "staticcheck finding", files: map[string]string{"unused.go": unusedGo},
			failed: "staticcheck", naming: []string{"unused.go:3:6: func unused is unused (U1000)"}},
		{name: "vendored code keeps its style", files: map[string]string{"third_party/lib/lib.c": misformattedC}},
		{name: "ignored files are not checked", files: map[string]string{".gitignore": "/scratch/\n", "scratch/x.c": misformattedC}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := newRepo(t)
			writeFile(t, dir, ".clang-format", string(style))
			for name, text := range cleanLintTree {
				writeFile(t, dir, name, text)
			}
			if tc.untracked {
				git(t, dir, "add", "-A")
			}
			for name, text := range tc.files {
				writeFile(t, dir, name, text)
			}
			if !tc.untracked {
				git(t, dir, "add", "-A")
			}
			out, err := runErr(root, nil, "make", "--no-print-directory", "lint", "LINT_DIR="+dir)
			wantLast := "lint: ok"
			if tc.failed != "" {
				wantLast = "lint: FAILED: " + tc.failed
			}
			verdict := ""
			for _, line := range strings.Split(out, "\n") {
				if line == "lint: ok" || strings.HasPrefix(line, "lint: FAILED: ") {
					verdict = line
				}
			}
			if (err != nil) != (tc.failed != "") || verdict != wantLast {
				t.Fatalf("make lint: %v, verdict %q, want %q; output:\n%s", err, verdict, wantLast, out)
			}
			for _, want := range tc.naming {
				if !strings.Contains(out, want) {
					t.Errorf("make lint output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
