package abi_test

import (
	"context"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestOnExecutingThread: a response the identity backend sends from within
// its Execute reaches Go on the executing thread; the square backend's,
// sent from a thread of its own, do not; and a goroutine of Go's own is on
// none.
func TestOnExecutingThread(t *testing.T) {
	if abi.OnExecutingThread() {
		t.Fatal("the test's goroutine is on an executing thread")
	}
	var models []testenv.Model
	for _, name := range []string{"identity_int32", "square_int32"} {
		models = append(models, testenv.Model{Name: name, Config: testenv.ExampleConfig(t, name)})
	}
	srv := startServer(t, testenv.Repository(t, models...))
	for _, c := range []struct {
		name      string
		req       *core.Submission
		executing bool
	}{
		{"identity responds in Execute", &core.Submission{Model: "identity_int32",
			Inputs: []core.Input{core.NewInput("INPUT0", core.TypeInt32, []int64{2}, int32s(1, 2))}}, true},
		{"square responds from its own thread", &core.Submission{Model: "square_int32",
			Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(3))}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan struct{})
			var on []bool
			fn := func(resp *core.Response, final bool) {
				if resp != nil {
					on = append(on, abi.OnExecutingThread())
				}
				if final {
					close(done)
				}
			}
			if err := srv.Infer(context.Background(), c.req, fn); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(testenv.Patience):
				t.Fatal("no final response")
			}
			if len(on) == 0 {
				t.Fatal("no response")
			}
			for i, got := range on {
				if got != c.executing {
					t.Errorf("response %d: on an executing thread %v, want %v", i, got, c.executing)
				}
			}
		})
	}
}
