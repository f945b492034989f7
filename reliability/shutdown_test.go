package reliability

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"tritonhost/client"
	pb "tritonhost/frontend/inferencepb"
	"tritonhost/internal/testenv"
)

// hangModel is a model on testdata/hang.c (its library in the version
// directory, where Triton looks first).
func hangModel(t *testing.T, name string) testenv.Model {
	lib := testenv.SharedLibrary(t, "triton_hang", filepath.Join("testdata", "hang.c"))
	return testenv.Model{Name: name, Files: []string{lib}, Config: fmt.Sprintf(`name: %q
backend: "hang"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
`, name)}
}

// waitLog waits until the server's log contains s.
func waitLog(t *testing.T, srv *testenv.Server, s string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(srv.Log(), s) {
			return
		}
	}
	t.Fatalf("the server never logged %q:\n%s", s, srv.Log())
}

// TestShutdownEndsWithinTheExitTimeout: with requests that need 8 s still
// running (each has sent its first response and sends the second 8 s
// later), SIGTERM ends the process within --exit-timeout-secs, with exit
// status 1 because work was abandoned.
func TestShutdownEndsWithinTheExitTimeout(t *testing.T) {
	const exitTimeout = 2 * time.Second
	srv := start(t, "", "--exit-timeout-secs", fmt.Sprint(int(exitTimeout.Seconds())))
	_, c := srv.Dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // bounds the waits for first responses
	defer cancel()
	var streams []*client.Stream
	for i := range 10 {
		st, err := client.OpenStream(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		req := repeatRequest(fmt.Sprint(i), 0, 2)
		req.Inputs[1] = client.Uint32s("DELAY", []int64{2}, 0, 8000)
		if err := st.Send(req); err != nil {
			t.Fatal(err)
		}
		streams = append(streams, st)
	}
	for i, st := range streams { // each request has reached the backend
		if _, err := st.Recv(); err != nil {
			t.Fatalf("stream %d: first response: %v", i, err)
		}
	}
	signalled := time.Now()
	srv.Signal(syscall.SIGTERM)
	code, at, ok := srv.Wait(exitTimeout + 5*time.Second)
	if !ok {
		t.Fatalf("the server was still running %v after SIGTERM (exit timeout %v)", exitTimeout+5*time.Second, exitTimeout)
	}
	took := at.Sub(signalled)
	if code != 1 {
		t.Errorf("exit status %d, want 1: requests were abandoned", code)
	}
	if took > exitTimeout+2*time.Second {
		t.Errorf("the server took %v to exit after SIGTERM (exit timeout %v)", took, exitTimeout)
	}
	t.Logf("SIGTERM with 10 requests needing 8 s: exited after %v with status %d (--exit-timeout-secs %v)", took.Round(time.Millisecond), code, exitTimeout)
}

// TestSignalDuringStartUpEndsIt: a backend that never returns from
// initializing a model does not keep SIGTERM from ending the start-up.
func TestSignalDuringStartUpEndsIt(t *testing.T) {
	repo := testenv.Repository(t, hangModel(t, "hang_init"))
	srv := testenv.StartServer(t, testenv.ServerConfig{Binary: serverBinary, Repo: repo, NoWait: true})
	waitLog(t, srv, "hang_init hangs in TRITONBACKEND_ModelInitialize")
	signalled := time.Now()
	srv.Signal(syscall.SIGTERM)
	code, at, ok := srv.Wait(10 * time.Second)
	if !ok {
		t.Fatal("the server was still starting 10 s after SIGTERM")
	}
	if code == 0 {
		t.Errorf("exit status 0 after an interrupted start-up")
	}
	t.Logf("SIGTERM while a model hung in ModelInitialize: exited after %v with status %d", at.Sub(signalled).Round(time.Millisecond), code)
}

// TestHungBackendCallsHoldUpNoOtherModel: a load that hangs in the
// backend fails after --backend-call-timeout-secs, naming the call; while
// it hangs, other models load, unload and serve; an unload that hangs in
// ModelFinalize is given up the same way; and shutdown still ends within
// the exit timeout.
func TestHungBackendCallsHoldUpNoOtherModel(t *testing.T) {
	const callTimeout = 3 * time.Second
	repo := testenv.Repository(t, hangModel(t, "hang_init"), hangModel(t, "hang_fini"), identityModel(t, "good"))
	srv := start(t, repo, "--model-control-mode", "explicit", "--load-model", "hang_fini",
		"--backend-call-timeout-secs", fmt.Sprint(int(callTimeout.Seconds())), "--exit-timeout-secs", "3")
	_, c := srv.Dial(t)
	ctx := context.Background()

	hung := make(chan error, 1)
	begin := time.Now()
	go func() {
		_, err := c.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: "hang_init"})
		hung <- err
	}()
	waitLog(t, srv, "loading: hang_init")
	for range 3 {
		opBegin := time.Now()
		if _, err := c.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: "good"}); err != nil {
			t.Fatalf("load good while another load hangs: %v", err)
		}
		if err := unaryIdentityOn(c, "good")(ctx); err != nil {
			t.Fatalf("infer on good while another load hangs: %v", err)
		}
		if _, err := c.RepositoryModelUnload(ctx, &pb.RepositoryModelUnloadRequest{ModelName: "good"}); err != nil {
			t.Fatalf("unload good while another load hangs: %v", err)
		}
		if took := time.Since(opBegin); took > callTimeout/2 {
			t.Errorf("loading, serving and unloading another model took %v while a load hung", took)
		}
	}
	err := <-hung
	took := time.Since(begin)
	if err == nil || !strings.Contains(err.Error(), `"hang_init"`) || !strings.Contains(err.Error(), "--backend-call-timeout-secs") {
		t.Errorf("the hung load returned %v; want an error naming the model and --backend-call-timeout-secs", err)
	}
	if took > callTimeout+3*time.Second {
		t.Errorf("the hung load returned after %v (call timeout %v)", took, callTimeout)
	}
	t.Logf("load hung in ModelInitialize: failed after %v: %v", took.Round(time.Millisecond), err)

	begin = time.Now()
	_, err = c.RepositoryModelUnload(ctx, &pb.RepositoryModelUnloadRequest{ModelName: "hang_fini"})
	t.Logf("unload hung in ModelFinalize: returned after %v: %v", time.Since(begin).Round(time.Millisecond), err)
	if _, err := c.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: "good"}); err != nil {
		t.Fatalf("load good after the hung calls: %v", err)
	}
	if err := unaryIdentityOn(c, "good")(ctx); err != nil {
		t.Fatal(err)
	}

	signalled := time.Now()
	srv.Signal(syscall.SIGTERM)
	code, at, ok := srv.Wait(15 * time.Second)
	if !ok {
		t.Fatal("the server was still running 15 s after SIGTERM")
	}
	t.Logf("SIGTERM with two backend calls stuck: exited after %v with status %d", at.Sub(signalled).Round(time.Millisecond), code)
}
