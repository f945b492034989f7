package main

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// tritonOption is an entry of testdata/triton_options.go (TritonOption
// there): one option of Triton's tritonserver, a command line that uses
// it, and what serve does with it.
type tritonOption struct {
	Name, Group string
	Args        []string
	Here        string // "implemented", "no effect" or "refused"
	Refusal     string
}

// readTritonOptions reads the table of testdata/triton_options.go, a Go
// file that is data for the tests (testdata is no package of the build).
func readTritonOptions(t *testing.T) []tritonOption {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("testdata", "triton_options.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	str := func(e ast.Expr) string {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			t.Fatalf("testdata/triton_options.go: %T where a string literal belongs", e)
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	var out []tritonOption
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Names) != 1 || spec.Names[0].Name != "TritonOptions" {
			return true
		}
		for _, elt := range spec.Values[0].(*ast.CompositeLit).Elts {
			var o tritonOption
			for _, field := range elt.(*ast.CompositeLit).Elts {
				kv := field.(*ast.KeyValueExpr)
				switch key := kv.Key.(*ast.Ident).Name; key {
				case "Name":
					o.Name = str(kv.Value)
				case "Group":
					o.Group = str(kv.Value)
				case "Here":
					o.Here = str(kv.Value)
				case "Refusal":
					o.Refusal = str(kv.Value)
				case "Args":
					for _, a := range kv.Value.(*ast.CompositeLit).Elts {
						o.Args = append(o.Args, str(a))
					}
				default:
					t.Fatalf("testdata/triton_options.go: unknown field %s", key)
				}
			}
			out = append(out, o)
		}
		return false
	})
	return out
}

// TestTritonOptionsTable: the table holds Triton's 91 options once each,
// each with a command line that names it and a known outcome.
func TestTritonOptionsTable(t *testing.T) {
	t.Parallel()
	opts := readTritonOptions(t)
	if len(opts) != 91 {
		t.Errorf("%d options in testdata/triton_options.go, want Triton's 91", len(opts))
	}
	seen := map[string]bool{}
	for _, o := range opts {
		if seen[o.Name] {
			t.Errorf("--%s is listed twice", o.Name)
		}
		seen[o.Name] = true
		if !slices.ContainsFunc(o.Args, func(a string) bool { return a == "--"+o.Name || strings.HasPrefix(a, "--"+o.Name+"=") }) {
			t.Errorf("--%s: its command line %q does not use it", o.Name, o.Args)
		}
		switch o.Here {
		case "implemented", "no effect":
			if o.Refusal != "" {
				t.Errorf("--%s is %s but has a refusal", o.Name, o.Here)
			}
		case "refused":
			if o.Refusal == "" {
				t.Errorf("--%s is refused without the words of its refusal", o.Name)
			}
		default:
			t.Errorf("--%s: unknown outcome %q", o.Name, o.Here)
		}
	}
}

// TestServeHelpListsEveryTritonOption: `tritonhost serve --help` lists every
// option of Triton's, and serve has each as a flag.
func TestServeHelpListsEveryTritonOption(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(serverBinary, "serve", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("serve --help: %v\n%s", err, out)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-[a-z], )?--([a-z0-9-]+)`).FindAllStringSubmatch(string(out), -1) {
		listed[m[1]] = true
	}
	flags := newServeCommand().Flags()
	for _, o := range readTritonOptions(t) {
		if !listed[o.Name] {
			t.Errorf("serve --help does not list --%s", o.Name)
		}
		if o.Name != "help" && flags.Lookup(o.Name) == nil {
			t.Errorf("serve has no flag --%s", o.Name)
		}
	}
}

// allowedCPU returns a CPU this process may run on, for a host policy.
func allowedCPU(t *testing.T) string {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			return strconv.Itoa(c)
		}
	}
	t.Fatal("no CPU allowed")
	return ""
}

// TestServeTakesEveryTritonOption starts the binary with each option of
// Triton's as a Triton deployment passes it (testdata/triton_options.go):
// the server serves (gRPC, HTTP and metrics, each unless the option turns
// it off) and stops cleanly; an option without effect here is named in the
// log, which says why; an option for what this server does not have is
// refused at start with the documented words, never as an unknown flag.
func TestServeTakesEveryTritonOption(t *testing.T) {
	t.Parallel()
	caches := ""
	for _, o := range readTritonOptions(t) {
		if slices.ContainsFunc(o.Args, func(a string) bool { return strings.Contains(a, "{caches}") }) {
			caches, _ = testenv.PluginDirs(t)
		}
	}
	cpu := allowedCPU(t)
	for _, o := range readTritonOptions(t) {
		t.Run(o.Name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			args := make([]string, len(o.Args))
			for i, a := range o.Args {
				args[i] = strings.NewReplacer("{tmp}", tmp, "{cpu}", cpu, "{caches}", caches).Replace(a)
			}
			switch {
			case o.Name == "help":
				out, err := exec.Command(serverBinary, append([]string{"serve"}, args...)...).CombinedOutput()
				if err != nil || !strings.Contains(string(out), "--model-repository") {
					t.Errorf("serve --help: %v\n%s", err, out)
				}
			case o.Here == "refused":
				serveRefused(t, tmp, args, o.Refusal)
			default:
				log := serveWith(t, tmp, args)
				if o.Here == "no effect" && !strings.Contains(log, "--"+o.Name) {
					t.Errorf("--%s has no effect here, and the log does not say so:\n%s", o.Name, log)
				}
			}
		})
	}
}

// serveRefused runs serve over an empty repository with args and expects
// it to exit with an error that contains refusal.
func serveRefused(t *testing.T, repo string, args []string, refusal string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.StartPatience)
	defer cancel()
	base := append([]string{"serve", "--model-repository", repo, "--grpc-port", "0", "--http-port", "0", "--metrics-port", "0"}, withoutGPUs...)
	out, err := exec.CommandContext(ctx, serverBinary, append(base, args...)...).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("serve %q: %v, want it refused\n%s", args, err, out)
	}
	if !strings.Contains(string(out), refusal) || strings.Contains(string(out), "unknown flag") {
		t.Errorf("serve %q was refused with\n%s\nwant %q", args, out, refusal)
	}
}

// serveWith starts serve over repo (empty) with args, waits until it
// serves, stops it, and returns its log.
func serveWith(t *testing.T, repo string, args []string) string {
	t.Helper()
	args = append(slices.Clone(withoutGPUs), args...)
	logFile := ""
	if i := slices.Index(args, "--log-file"); i >= 0 {
		logFile = args[i+1]
	}
	grpcOff := slices.Contains(tritonArgs(newServeCommand().Flags(), args), "--allow-grpc=false")
	if logFile == "" && !grpcOff {
		s := testenv.StartServer(t, testenv.ServerConfig{Binary: serverBinary, Repo: repo, Args: args})
		s.Stop(t)
		return s.Log()
	}
	s := testenv.StartServer(t, testenv.ServerConfig{Binary: serverBinary, Repo: repo, Args: args, NoWait: true})
	started := regexp.MustCompile(`Started HTTPService at \S+`)
	if logFile == "" {
		s.Await(t, "serving HTTP", started)
	} else {
		// The log goes to the file, and nothing to the process's output.
		deadline := time.Now().Add(testenv.StartPatience)
		for {
			data, _ := os.ReadFile(logFile)
			if started.Match(data) && strings.Contains(string(data), "Started GRPCInferenceService") {
				break
			}
			if s.Exited() || time.Now().After(deadline) {
				t.Fatalf("the server did not log to --log-file %s that it serves; its output:\n%s\nthe file:\n%s", logFile, s.Log(), data)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if out := s.Log(); strings.Contains(out, "Started") {
			t.Errorf("with --log-file, the log went to the process's output too:\n%s", out)
		}
	}
	s.Stop(t)
	if logFile != "" {
		data, err := os.ReadFile(logFile)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	return s.Log()
}

// TestTritonFlagsDocCoversEveryOption: docs/triton-flags.md has a row for
// every option of Triton's, which says "no effect" or "refused" for the
// options the table marks so.
func TestTritonFlagsDocCoversEveryOption(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "docs", "triton-flags.md"))
	if err != nil {
		t.Fatal(err)
	}
	here := map[string]string{} // option -> the "here" cell of its row
	for _, line := range strings.Split(string(data), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		for _, m := range regexp.MustCompile("`--([a-z0-9-]+)`").FindAllStringSubmatch(cells[1], -1) {
			here[m[1]] = strings.TrimSpace(cells[2])
		}
	}
	for _, o := range readTritonOptions(t) {
		cell, ok := here[o.Name]
		switch {
		case !ok:
			t.Errorf("docs/triton-flags.md has no row for --%s", o.Name)
		case o.Here != "implemented" && !strings.Contains(cell, o.Here):
			t.Errorf("docs/triton-flags.md says --%s is %q; the table says %s", o.Name, cell, o.Here)
		}
	}
}
