package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/client"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/internal/testhooks"
)

// slowRepo is a repository with "slow", identity_int32 executing for
// delayMs, and the example square_int32.
func slowRepo(t *testing.T, delayMs string) string {
	t.Helper()
	slow := strings.Replace(testenv.ExampleConfig(t, "identity_int32"), `name: "identity_int32"`, `name: "slow"`, 1) +
		`parameters [ { key: "execute_delay_ms" value: { string_value: "` + delayMs + `" } } ]` + "\n"
	return testenv.Repository(t, testenv.Model{Name: "slow", Config: slow},
		testenv.Model{Name: "square_int32", Config: testenv.ExampleConfig(t, "square_int32")})
}

// TestCallPastItsDeadlineEndsDeadlineExceeded: a unary call whose deadline
// passes while its model executes ends with the status a Triton client
// sees, DEADLINE_EXCEEDED "Deadline Exceeded", in the call's trailers,
// not with the stream reset that grpc-go's server sends at the deadline
// (which a client whose own deadline has not fired reads as a
// cancellation). The client here keeps no deadline of its own: it sends
// grpc-timeout and reads what the server answers.
func TestCallPastItsDeadlineEndsDeadlineExceeded(t *testing.T) {
	srv := startServer(t, slowRepo(t, "3000"))
	msg, err := client.Request{Model: "slow", ID: "late", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{1}, 1)}}.Message()
	if err != nil {
		t.Fatal(err)
	}
	payload, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 5, 5+len(payload))
	binary.BigEndian.PutUint32(frame[1:], uint32(len(payload)))
	frame = append(frame, payload...)
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true) // h2c, as gRPC without TLS
	tr := &http.Transport{Protocols: &protocols}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctxFor(t), "POST", "http://"+srv.Addr+"/inference.GRPCInferenceService/ModelInfer", bytes.NewReader(frame))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	req.Header.Set("Grpc-Timeout", "300m")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("the call: %v", err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatalf("the call's body: %v (a reset stream instead of a status)", err)
	}
	st, text := resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
	if st == "" { // a trailers-only answer comes in the header
		st, text = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	if st != "4" || text != "Deadline Exceeded" {
		t.Errorf("grpc-status %q, grpc-message %q; want 4 (DEADLINE_EXCEEDED), \"Deadline Exceeded\"", st, text)
	}
	// The server goes on serving.
	ok, err := client.Request{Model: "slow", ID: "ok", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{1}, 7)}}.Message()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.ModelInfer(ctxFor(t), ok); err != nil {
		t.Errorf("a call after it: %v", err)
	}
}

// TestGRPCTestHooksDelayTheirStep: Triton's gRPC test hooks, set in the
// server's environment, delay the step they name (here the processing of
// each request and the sending of each response, unary and streamed, by
// 400 ms each), and the server says so in its log; unset, nothing waits
// and nothing is said.
func TestGRPCTestHooksDelayTheirStep(t *testing.T) {
	const delay = 400 * time.Millisecond
	env := append(os.Environ(), testhooks.DelayGRPCProcess+"=400", testhooks.DelayGRPCResponse+"=400")
	srv := startServerEnv(t, slowRepo(t, "0"), env)
	if !strings.Contains(srv.Log(), "test hooks") {
		t.Errorf("the log does not say the test hooks are set")
	}
	msg, err := client.Request{Model: "slow", ID: "u", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{1}, 1)}}.Message()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := srv.Client.ModelInfer(ctxFor(t), msg); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 2*delay {
		t.Errorf("a unary call took %v with %v before processing and %v before its response", took, delay, delay)
	}
	s, err := client.OpenStream(ctxFor(t), srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := s.Send(client.Request{Model: "square_int32", ID: "s", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 2)}}); err != nil {
		t.Fatal(err)
	}
	s.CloseSend()
	if got := collect(t, s); len(got) != 2 {
		t.Fatalf("square 2: %+v", got)
	}
	if took := time.Since(start); took < 3*delay {
		t.Errorf("a stream of two responses took %v with %v before processing and %v before each response", took, delay, delay)
	}

	plain := startServer(t, slowRepo(t, "0"))
	if strings.Contains(plain.Log(), "test hooks") {
		t.Errorf("without the hooks set, the log mentions them")
	}
	if _, err := plain.Client.ModelInfer(ctxFor(t), msg); status.Code(err) != codes.OK {
		t.Errorf("without hooks: %v", err)
	}
}
