package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/client"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestCancellationNotificationsAreLogged: a unary call whose deadline
// passes and a stream its client cancels are logged at verbose level 1 in
// the words Triton's request-cancellation tests grep for, with the request
// id.
func TestCancellationNotificationsAreLogged(t *testing.T) {
	slow := strings.Replace(testenv.ExampleConfig(t, "identity_int32"), `name: "identity_int32"`, `name: "slow"`, 1) +
		`parameters [ { key: "execute_delay_ms" value: { string_value: "3000" } } ]` + "\n"
	repo := testenv.Repository(t, testenv.Model{Name: "slow", Config: slow},
		testenv.Model{Name: "repeat_int32", Config: testenv.ExampleConfig(t, "repeat_int32")})
	srv := startServer(t, repo, "--log-verbose", "1")

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	msg, err := client.Request{Model: "slow", ID: "u1", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{1}, 1)}}.Message()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.ModelInfer(ctx, msg); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("ModelInfer: %v, want DEADLINE_EXCEEDED", err)
	}
	testenv.WaitUntil(t, "the unary cancellation in the log", func() bool {
		return strings.Contains(srv.Log(), "Cancellation notification received for ModelInferHandler, request id: u1\n")
	})

	sctx, scancel := context.WithCancel(ctxFor(t))
	s, err := client.OpenStream(sctx, srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(client.Request{Model: "repeat_int32", ID: "s1", Inputs: []client.Tensor{
		client.Int32s("IN", []int64{2}, 1, 2),
		client.Uint32s("DELAY", []int64{2}, 0, 2000),
		client.Uint32s("WAIT", []int64{1}, 0),
	}}); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Recv(); err != nil || r.ID != "s1" {
		t.Fatalf("first response: %+v, %v", r, err)
	}
	scancel() // the second response is two seconds away
	testenv.WaitUntil(t, "the stream cancellation in the log", func() bool {
		return strings.Contains(srv.Log(), "Cancellation notification received for ModelStreamInferHandler, request id: s1\n")
	})
}
