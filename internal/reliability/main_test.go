package reliability

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

var soak = flag.Bool("soak", false, "run the suite at full scale (minutes, gigabytes)")

// serverBinary is built once, without the race detector whatever the
// tests run with: the suite measures threads and memory of a production
// build.
var serverBinary string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "tritonhost-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBinary, err = testenv.BuildServer(dir, false)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// scale returns short in `make test` and full under -soak.
func scale(short, full int) int {
	if *soak {
		return full
	}
	return short
}

// start runs a server over repo (the example models when empty).
func start(t *testing.T, repo string, args ...string) *testenv.Server {
	t.Helper()
	return testenv.StartServer(t, testenv.ServerConfig{Binary: serverBinary, Repo: repo, Args: args, Diagnostics: true})
}
