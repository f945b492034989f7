package reliability

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
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
	if took > exitTimeout+500*time.Millisecond {
		t.Errorf("the server took %v to exit after SIGTERM (exit timeout %v, and half a second)", took, exitTimeout)
	}
	t.Logf("SIGTERM with 10 requests needing 8 s: exited after %v with status %d (--exit-timeout-secs %v)", took.Round(time.Millisecond), code, exitTimeout)
}

// TestSignalDuringStartUpEndsIt: a backend that never returns from
// initializing a model does not keep SIGTERM from ending the start-up.
func TestSignalDuringStartUpEndsIt(t *testing.T) {
	repo := testenv.Repository(t, hangModel(t, "hang_init"))
	srv := testenv.StartServer(t, testenv.ServerConfig{Binary: serverBinary, Repo: repo, NoWait: true})
	srv.AwaitOutput(t, "hang_init to hang", func(log string) bool {
		return strings.Contains(log, "hang_init hangs in TRITONBACKEND_ModelInitialize")
	})
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
	srv.AwaitOutput(t, "hang_init to load", func(log string) bool { return strings.Contains(log, "loading: hang_init") })
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

// hangExecModel is a model on testdata/hang.c whose executions never
// return, with count instances.
func hangExecModel(t *testing.T, name string, count int) testenv.Model {
	m := hangModel(t, name)
	m.Config = strings.Replace(m.Config, "count: 1", fmt.Sprintf("count: %d", count), 1)
	return m
}

// shutdownOutcome is what one in-flight call saw of the shutdown.
type shutdownOutcome struct {
	call string
	ok   bool   // it got the clear final error it should
	saw  string // what it got
}

// TestShutdownGivesInFlightWorkAFinalError: with calls on every route
// and protocol stuck in a backend that never returns (HTTP infer;
// generate and generate_stream on a model that is decoupled and on one
// that is not; gRPC ModelInfer; ModelStreamInfer on both models), SIGTERM
// ends the process within --exit-timeout-secs (and half a second), with
// exit status 1; before it does, each call gets a final error that says
// the server is shutting down: HTTP 503 with Triton's error object, a
// generate_stream its one event {"error": ...} (with 503, the status of
// an error first), gRPC UNAVAILABLE, and an error response on the stream.
// A request sent on the stream after the signal is refused with Triton's
// words.
func TestShutdownGivesInFlightWorkAFinalError(t *testing.T) {
	const exitTimeout = 2 * time.Second
	decoupledHang := hangExecModel(t, "hang_exec_decoupled", 3)
	decoupledHang.Config += "model_transaction_policy { decoupled: true }\n"
	repo := testenv.Repository(t, hangExecModel(t, "hang_exec", 5), decoupledHang)
	srv := start(t, repo, "--exit-timeout-secs", fmt.Sprint(int(exitTimeout.Seconds())))
	_, c := srv.Dial(t)
	addr := srv.HTTP
	ctx, cancel := context.WithTimeout(context.Background(), exitTimeout+30*time.Second)
	defer cancel()
	const shuttingDown = "shutting down"
	httpCalls := []struct {
		route, model, body string
		stream             bool // an event stream: the error is its one event
	}{
		{"infer", "hang_exec", `{"inputs":[{"name":"IN","datatype":"INT32","shape":[1],"data":[1]}]}`, false},
		{"generate", "hang_exec", `{"IN":1}`, false},
		{"generate", "hang_exec_decoupled", `{"IN":1}`, false},
		{"generate_stream", "hang_exec", `{"IN":1}`, true},
		{"generate_stream", "hang_exec_decoupled", `{"IN":1}`, true},
	}
	calls := len(httpCalls) + 2
	outcomes := make(chan shutdownOutcome, calls)
	for _, hc := range httpCalls {
		go func() {
			o := shutdownOutcome{call: "HTTP " + hc.route + " on " + hc.model}
			resp, err := http.Post("http://"+addr+"/v2/models/"+hc.model+"/"+hc.route, "application/json", strings.NewReader(hc.body))
			if err != nil {
				o.saw = err.Error()
				outcomes <- o
				return
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			o.saw = fmt.Sprintf("%d %q (%v)", resp.StatusCode, body, err)
			o.ok = resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(body), shuttingDown)
			if hc.stream {
				o.ok = o.ok && strings.HasPrefix(string(body), `data: {"error":`) && strings.HasSuffix(string(body), "\n\n")
			} else {
				o.ok = o.ok && strings.HasPrefix(string(body), `{"error":`)
			}
			outcomes <- o
		}()
	}
	go func() {
		o := shutdownOutcome{call: "gRPC ModelInfer"}
		req, _ := client.Request{Model: "hang_exec", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 1)}}.Message()
		_, err := c.ModelInfer(ctx, req)
		o.saw = fmt.Sprint(err)
		o.ok = status.Code(err) == codes.Unavailable && strings.Contains(status.Convert(err).Message(), shuttingDown)
		outcomes <- o
	}()
	st, err := client.OpenStream(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ id, model string }{{"in-flight", "hang_exec"}, {"in-flight-decoupled", "hang_exec_decoupled"}} {
		if err := st.Send(client.Request{Model: r.model, ID: r.id, Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 1)}}); err != nil {
			t.Fatal(err)
		}
	}
	srv.AwaitOutput(t, "eight executions", func(log string) bool { return strings.Count(log, "hangs in TRITONBACKEND_ModelInstanceExecute") == 8 })

	signalled := time.Now()
	srv.Signal(syscall.SIGTERM)
	srv.AwaitOutput(t, "new requests to be refused", func(log string) bool { return strings.Contains(log, "new requests are refused from now on") })
	if err := st.Send(client.Request{Model: "hang_exec", ID: "late", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 1)}}); err != nil {
		t.Fatal(err)
	}
	go func() {
		o := shutdownOutcome{call: "gRPC ModelStreamInfer"}
		var got []string
		finals := map[string]string{}
		for {
			res, err := st.Recv()
			if err != nil {
				got = append(got, "end: "+err.Error())
				break
			}
			got = append(got, fmt.Sprintf("%s final=%v err=%v", res.ID, res.Final, res.Err))
			if res.Err != nil && res.Final {
				finals[res.ID] = res.Err.Error()
			}
		}
		o.saw = strings.Join(got, "; ")
		o.ok = strings.Contains(finals["in-flight"], shuttingDown) && strings.Contains(finals["in-flight-decoupled"], shuttingDown) &&
			finals["late"] == "GRPC server is shutting down and has stopped accepting new requests."
		outcomes <- o
	}()
	code, at, ok := srv.Wait(exitTimeout + 10*time.Second)
	if !ok {
		t.Fatalf("the server was still running %v after SIGTERM", exitTimeout+10*time.Second)
	}
	took := at.Sub(signalled)
	if took > exitTimeout+500*time.Millisecond {
		t.Errorf("the server exited %v after SIGTERM, past --exit-timeout-secs %v and half a second", took.Round(time.Millisecond), exitTimeout)
	}
	if code != 1 {
		t.Errorf("exit status %d, want 1: work was abandoned", code)
	}
	for range calls {
		select {
		case o := <-outcomes:
			if !o.ok {
				t.Errorf("%s: got %s; want a final error saying the server is shutting down", o.call, o.saw)
			} else {
				t.Logf("%s: %s", o.call, o.saw)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("an in-flight call never ended")
		}
	}
	t.Logf("SIGTERM with %d calls stuck in a backend: exited after %v with status %d (--exit-timeout-secs %v)", calls+1, took.Round(time.Millisecond), code, exitTimeout)
}
