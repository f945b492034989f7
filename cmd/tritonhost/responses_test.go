package main

import (
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/client"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// nonDecoupledRepeat is Triton's repeat model with its
// model_transaction_policy removed, as Triton's gRPC state-cleanup test
// builds repeat_int32_non_decoupled.
func nonDecoupledRepeat(t *testing.T) testenv.Model {
	cfg := strings.Replace(testenv.ExampleConfig(t, "repeat_int32"), "model_transaction_policy { decoupled: True }\n", "", 1)
	cfg = strings.Replace(cfg, `name: "repeat_int32"`, `name: "repeat_int32_non_decoupled"`, 1)
	if strings.Contains(cfg, "model_transaction_policy") {
		t.Fatalf("the example's transaction policy moved:\n%s", cfg)
	}
	return testenv.Model{Name: "repeat_int32_non_decoupled", Config: cfg}
}

// TestNonDecoupledStreamingModelDeliversItsFirstResponse is Triton's
// test_non_decoupled_streaming_multi_response: four responses from a model
// that is not decoupled reach the client as one, IDX 0, final; the server
// logs the three it dropped once, at verbose level 1.
func TestNonDecoupledStreamingModelDeliversItsFirstResponse(t *testing.T) {
	repo := testenv.Repository(t, nonDecoupledRepeat(t))
	srv := startServer(t, repo, "--log-verbose", "1")
	s, err := client.OpenStream(ctxFor(t), srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(client.Request{Model: "repeat_int32_non_decoupled", ID: "0", Inputs: []client.Tensor{
		client.Int32s("IN", []int64{4}, 100, 101, 102, 103),
		client.Uint32s("DELAY", []int64{4}, 0, 0, 0, 0),
		client.Uint32s("WAIT", []int64{1}, 0),
	}, Outputs: []string{"OUT", "IDX"}}); err != nil {
		t.Fatal(err)
	}
	s.CloseSend()
	got := collect(t, s)
	if len(got) != 1 || got[0].id != "0" || !got[0].final || got[0].err != "" || got[0].outs["IDX"][0] != 0 || got[0].outs["OUT"][0] != 100 {
		t.Fatalf("got %+v, want one final message with IDX 0, OUT 100", got)
	}
	line := "[request id: 0] model 'repeat_int32_non_decoupled' is not decoupled but sent 4 responses; the first was delivered and the other 3 dropped"
	testenv.WaitUntil(t, "the dropped responses in the log", func() bool { return strings.Contains(srv.Log(), line) })
	if n := strings.Count(srv.Log(), "is not decoupled but sent"); n != 1 {
		t.Errorf("the log mentions the dropped responses %d times, want once", n)
	}
}
