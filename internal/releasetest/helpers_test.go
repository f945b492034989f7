package releasetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// installHints says how to get each tool a test may need.
var installHints = map[string]string{
	"git":          "apt-get install git",
	"clang-format": "apt-get install clang-format",
	"cmake":        "apt-get install cmake",
	"dpkg":         "it comes with Debian",
	"dpkg-deb":     "it comes with Debian",
	"gcc":          "apt-get install gcc",
	"g++":          "apt-get install g++",
	"tar":          "apt-get install tar",
}

// requireTools skips the test if a tool is missing, or fails it under CI,
// whose .ci/run installs every one of them.
func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			msg := "needs " + tool + " (" + installHints[tool] + ")"
			if os.Getenv("CI") != "" {
				t.Fatal(msg + "; .ci/run should have installed it")
			}
			t.Skip(msg)
		}
	}
}

// run runs a command in dir with env added to the environment, fails the
// test if it fails, and returns its combined output.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// git runs git in dir as a fixed author, whatever the machine's settings.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gitWith(t, dir, nil, args...)
}

// gitWith is git with env added to the environment.
func gitWith(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	args = append([]string{"-c", "user.name=release test", "-c", "user.email=release@test.invalid",
		"-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)
	return strings.TrimSpace(run(t, dir, env, "git", args...))
}

// newRepo makes an empty git repository in a temporary directory.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	return dir
}

// writeFile writes a file under dir, creating its directories.
func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// versionInfo runs `<bin> version` and returns its lines as name -> value.
func versionInfo(t *testing.T, bin string) map[string]string {
	t.Helper()
	out := run(t, "", nil, bin, "version")
	info := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, value, _ := strings.Cut(line, " ")
		info[name] = value
	}
	for _, name := range []string{"tritonhost", "commit", "go", "TRITONBACKEND_API_VERSION", "TRITONSERVER_API_VERSION"} {
		if info[name] == "" {
			t.Errorf("%s version: no %q line:\n%s", bin, name, out)
		}
	}
	return info
}

// serve starts the server bin over the model repository repo, with the
// backends of backendDir ("": where the installation puts them, next to
// its bin/), and returns a client; at cleanup it sends SIGTERM and expects
// a clean exit.
func serve(t *testing.T, bin, repo, backendDir string) pb.GRPCInferenceServiceClient {
	t.Helper()
	return testenv.StartServer(t, testenv.ServerConfig{Binary: bin, Repo: repo, Backends: backendDir,
		BackendsBesideBinary: backendDir == "", Graceful: true}).Client
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
