package main

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

func TestCancelledStreamCancelsItsRequestsInTheBackend(t *testing.T) {
	cfg := testenv.ExampleConfig(t, "square_int32") + `
parameters [{ key: "CUSTOM_INFER_DELAY_NS" value: { string_value: "5000000" } }]
`
	repo := testenv.Repository(t, testenv.Model{Name: "square_int32", Config: cfg})
	srv := startServer(t, repo)
	ctx, cancel := context.WithCancel(ctxFor(t))
	s, err := client.OpenStream(ctx, srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if err := s.Send(client.Request{Model: "square_int32", ID: id, Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 1000)}}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	cancel()

	// Both requests see the cancellation: square records one cancelled
	// response for each in its response statistics, and stops.
	var cancelled uint64
	testenv.Eventually(func() bool {
		st, err := srv.Client.ModelStatistics(ctxFor(t), &pb.ModelStatisticsRequest{Name: "square_int32"})
		if err != nil {
			t.Fatal(err)
		}
		cancelled = 0
		for _, r := range st.GetModelStats()[0].GetResponseStats() {
			cancelled += r.GetCancel().GetCount()
		}
		return cancelled == 2
	})
	if cancelled != 2 {
		t.Fatalf("the backend recorded %d cancelled requests, want 2", cancelled)
	}
	// The server keeps serving.
	s2, err := client.OpenStream(ctxFor(t), srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	s2.Send(client.Request{Model: "square_int32", ID: "after", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 1)}})
	s2.CloseSend()
	if got := collect(t, s2); len(got) != 1 {
		t.Errorf("after the cancelled stream: %+v", got)
	}
}

func TestSigtermDrainsInFlightStreams(t *testing.T) {
	srv := startServer(t, "")
	ctx := ctxFor(t)
	s, err := client.OpenStream(ctx, srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	slow := client.Request{Model: "repeat_int32", ID: "slow", Inputs: []client.Tensor{
		client.Int32s("IN", []int64{3}, 7, 8, 9),
		client.Uint32s("DELAY", []int64{3}, 300, 300, 300),
		client.Uint32s("WAIT", []int64{1}, 0),
	}, Params: map[string]any{client.EmptyFinalParam: true}}
	if err := s.Send(slow); err != nil {
		t.Fatal(err)
	}
	first, err := s.Recv()
	if err != nil {
		t.Fatal(err)
	}
	srv.Signal(syscall.SIGTERM)
	// Once the server says it is not ready it is draining: a request sent
	// now is refused; the one in flight finishes.
	testenv.WaitUntil(t, "the server to say it is not ready after SIGTERM", func() bool {
		r, err := srv.Client.ServerReady(ctx, &pb.ServerReadyRequest{})
		return err != nil || !r.GetReady()
	})
	if err := s.Send(client.Request{Model: "square_int32", ID: "late", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 1)}}); err != nil {
		t.Fatal(err)
	}
	got := []result{decode(t, first)}
	var streamErr error
	for {
		r, err := s.Recv()
		if err != nil {
			streamErr = err
			break
		}
		got = append(got, decode(t, r))
	}
	var values []int64
	var refused, finals int
	for _, r := range got {
		switch {
		case r.id == "late" && strings.Contains(r.err, "shutting down"):
			refused++
		case r.id == "slow" && r.final:
			finals++
		case r.id == "slow":
			values = append(values, r.outs["OUT"]...)
		default:
			t.Errorf("unexpected message %+v", r)
		}
	}
	if len(values) != 3 || values[2] != 9 || finals != 1 || refused != 1 {
		t.Errorf("during shutdown: values %v, finals %d, refused %d; want all three values, one final, the late request refused", values, finals, refused)
	}
	if errors.Is(streamErr, io.EOF) {
		t.Logf("stream closed cleanly")
	}
	if status, _, ok := srv.Wait(30 * time.Second); !ok {
		t.Fatal("server did not exit after draining")
	} else if status != 0 {
		t.Errorf("server exit: status %d", status)
	}
}

func TestGrpcurlListsAndStreamsWithJSON(t *testing.T) {
	grpcurl, err := exec.LookPath("grpcurl")
	if err != nil {
		t.Skip("grpcurl is not installed (.ci/run installs it)")
	}
	srv := startServer(t, "")
	out, err := exec.Command(grpcurl, "-plaintext", srv.Addr, "list").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "inference.GRPCInferenceService") {
		t.Fatalf("grpcurl list: %v\n%s", err, out)
	}
	req := `{"model_name":"square_int32","id":"json","inputs":[{"name":"IN","datatype":"INT32","shape":[1],"contents":{"int_contents":[2]}}],
"parameters":{"triton_enable_empty_final_response":{"bool_param":true}}}`
	out, err = exec.Command(grpcurl, "-plaintext", "-d", req, srv.Addr, "inference.GRPCInferenceService/ModelStreamInfer").CombinedOutput()
	if err != nil {
		t.Fatalf("grpcurl ModelStreamInfer: %v\n%s", err, out)
	}
	text := string(out)
	if strings.Count(text, `"id": "json"`) != 3 || strings.Count(text, `"boolParam": true`) != 1 || !strings.Contains(text, `"AgAAAA=="`) {
		t.Errorf("grpcurl output: want two responses with OUT=2 and an empty final:\n%s", text)
	}
}

func TestInferCommandPrintsEveryResponse(t *testing.T) {
	srv := startServer(t, "")
	out, err := exec.Command(serverBinary, "infer", "repeat_int32", "-u", srv.Addr,
		"-i", "IN:INT32:4:4,2,0,1", "-i", "DELAY:UINT32:4:1,2,3,4", "-i", "WAIT:UINT32:1:5").CombinedOutput()
	if err != nil {
		t.Fatalf("infer: %v\n%s", err, out)
	}
	want := `id=0 final=false OUT INT32 [1] = [4] IDX UINT32 [1] = [0]
id=0 final=false OUT INT32 [1] = [2] IDX UINT32 [1] = [1]
id=0 final=false OUT INT32 [1] = [0] IDX UINT32 [1] = [2]
id=0 final=false OUT INT32 [1] = [1] IDX UINT32 [1] = [3]
id=0 final=true
`
	if string(out) != want {
		t.Errorf("infer printed:\n%s\nwant:\n%s", out, want)
	}
	out, err = exec.Command(serverBinary, "infer", "square_int32", "-u", srv.Addr, "--json", "--id", "j", "-i", "IN:INT32:1:1").CombinedOutput()
	if err != nil {
		t.Fatalf("infer --json: %v\n%s", err, out)
	}
	want = `{"id":"j","model":"square_int32","version":"1","final":false,"outputs":[{"name":"OUT","datatype":"INT32","shape":[1],"data":[1]}]}
{"id":"j","model":"square_int32","version":"1","final":true,"outputs":[]}
`
	if string(out) != want {
		t.Errorf("infer --json printed:\n%s\nwant:\n%s", out, want)
	}
	out, err = exec.Command(serverBinary, "infer", "repeat_int32", "-u", srv.Addr, "--mode", "unary", "-i", "IN:INT32:1:1",
		"-i", "DELAY:UINT32:1:0", "-i", "WAIT:UINT32:1:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "decoupled") {
		t.Errorf("infer --mode unary on a decoupled model: %v\n%s", err, out)
	}
}
