package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/client"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// serverBinary is the tritonhost executable the integration tests run, built once
// by TestMain.
var serverBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tritonhost-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBinary, err = testenv.BuildServer(dir, raceEnabled)
	if err != nil {
		fmt.Fprintln(os.Stderr, "build tritonhost:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// serverProcess is a running tritonhost process, with the calls these tests
// make of it (httpCall, scrapeMetrics).
type serverProcess struct{ *testenv.Server }

// withoutGPUs are the arguments that keep the server from the machine's
// GPUs, for tests of what a server without GPUs answers (its extensions,
// its CUDA shared-memory texts), which a machine with a driver would
// otherwise change.
var withoutGPUs = []string{"--nvml-library", "/nonexistent/libnvidia-ml.so.1", "--cuda-driver-library", "/nonexistent/libcuda.so.1"}

// startServer runs `tritonhost serve` on free loopback ports over repo (the
// example models when empty) and waits until it is ready. At cleanup it
// sends SIGTERM and expects a clean exit.
func startServer(t *testing.T, repo string, extra ...string) *serverProcess {
	t.Helper()
	return startServerEnv(t, repo, nil, extra...)
}

// startServerEnv is startServer with the process environment env (nil:
// this process's).
func startServerEnv(t *testing.T, repo string, env []string, extra ...string) *serverProcess {
	t.Helper()
	return &serverProcess{testenv.StartServer(t, testenv.ServerConfig{Binary: serverBinary, Repo: repo, Args: extra, Env: env, Graceful: true})}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// result is one streamed message, decoded.
type result struct {
	id    string
	final bool
	err   string
	outs  map[string][]int64
	names []string
}

func decode(t *testing.T, r client.Result) result {
	t.Helper()
	res := result{id: r.ID, final: r.Final, outs: map[string][]int64{}}
	if r.Err != nil {
		res.err = r.Err.Error()
	}
	if r.Response == nil {
		return res
	}
	outs, err := client.Outputs(r.Response)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		vals, err := o.Values()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			switch v := v.(type) {
			case int64:
				res.outs[o.Name] = append(res.outs[o.Name], v)
			case uint64:
				res.outs[o.Name] = append(res.outs[o.Name], int64(v))
			}
		}
		res.names = append(res.names, o.Name)
	}
	return res
}

// collect reads a stream until EOF.
func collect(t *testing.T, s *client.Stream) []result {
	t.Helper()
	var out []result
	for {
		r, err := s.Recv()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("stream ended with %v after %d messages", err, len(out))
		}
		out = append(out, decode(t, r))
	}
}
