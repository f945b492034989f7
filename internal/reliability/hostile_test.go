package reliability

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// sequenceModel is a sequence model on the identity backend whose state
// has the given dims and extra fields.
func sequenceModel(name, dims, extra string) testenv.Model {
	return testenv.Model{Name: name, Config: fmt.Sprintf(`name: %q
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
sequence_batching {
  state [ { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_INT32 dims: %s %s } ]
}
`, name, dims, extra)}
}

// identityModel is identity_int32 under another name.
func identityModel(t *testing.T, name string) testenv.Model {
	cfg := strings.Replace(testenv.ExampleConfig(t, "identity_int32"), `"identity_int32"`, fmt.Sprintf("%q", name), 1)
	return testenv.Model{Name: name, Config: cfg}
}

// TestConfigurationsAskingForTooMuchFailAlone: a sequence state of 2^40
// elements, or an initial_state file outside the model's directory, fails
// that model's load with a reason, at start-up and through
// RepositoryModelLoad, while the server and its other models go on, and
// nothing that large is allocated.
func TestConfigurationsAskingForTooMuchFailAlone(t *testing.T) {
	repo := testenv.Repository(t,
		identityModel(t, "good"),
		sequenceModel("huge_state", "[ 1099511627776 ]", ""),
		sequenceModel("escaping_state", "[ 1 ]", `initial_state: { data_type: TYPE_INT32 dims: [ 1 ] name: "x" data_file: "../../../../../../etc/passwd" }`),
	)
	reasons := map[string]string{
		"huge_state":     "--grpc-max-message-size",
		"escaping_state": "must be a relative path inside",
	}
	t.Run("at start-up", func(t *testing.T) {
		srv := start(t, repo, "--exit-on-error=false")
		_, c := srv.Dial(t)
		idx, err := c.RepositoryIndex(context.Background(), &pb.RepositoryIndexRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range idx.GetModels() {
			want, bad := reasons[m.GetName()]
			switch {
			case bad && (m.GetState() == "READY" || !strings.Contains(m.GetReason(), want)):
				t.Errorf("model %s: state %s, reason %q; want it unavailable with a reason naming %q", m.GetName(), m.GetState(), m.GetReason(), want)
			case !bad && m.GetState() != "READY":
				t.Errorf("model %s: state %s (%s), want READY", m.GetName(), m.GetState(), m.GetReason())
			}
			if bad {
				t.Logf("%s: %s", m.GetName(), m.GetReason())
			}
		}
		if err := unaryIdentityOn(c, "good")(context.Background()); err != nil {
			t.Fatal(err)
		}
		if rss := srv.ProcStatus(t, "VmHWM"); rss > 512<<20 {
			t.Errorf("peak RSS %d MiB after refusing the models", rss>>20)
		}
	})
	t.Run("loaded over the API", func(t *testing.T) {
		srv := start(t, repo, "--model-control-mode", "explicit", "--load-model", "good")
		_, c := srv.Dial(t)
		for name, want := range reasons {
			_, err := c.RepositoryModelLoad(context.Background(), &pb.RepositoryModelLoadRequest{ModelName: name})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("load %s: %v; want an error naming %q", name, err, want)
			}
		}
		if err := unaryIdentityOn(c, "good")(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Logf("after both loads were refused the server serves; peak RSS %d MiB", srv.ProcStatus(t, "VmHWM")>>20)
	})
	t.Run("a config override", func(t *testing.T) {
		// The same check as for config.pbtxt: an input of 2^62 elements
		// fails the load (it used to load from an override).
		srv := start(t, repo, "--model-control-mode", "explicit", "--load-model", "good")
		_, c := srv.Dial(t)
		override := `{"name":"good","backend":"identity","max_batch_size":0,
			"input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[4611686018427387904]}],
			"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[4611686018427387904]}]}`
		for _, name := range []string{"escaping_state", "huge_state"} {
			_, err := c.RepositoryModelLoad(context.Background(), &pb.RepositoryModelLoadRequest{ModelName: name,
				Parameters: map[string]*pb.ModelRepositoryParameter{"config": {ParameterChoice: &pb.ModelRepositoryParameter_StringParam{
					StringParam: strings.Replace(override, `"good"`, fmt.Sprintf("%q", name), 1)}}}})
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), `input "INPUT0"`) || !strings.Contains(err.Error(), "--grpc-max-message-size") {
				t.Errorf("load %s with an input of 2^62 elements: %v; want INVALID_ARGUMENT naming the input and --grpc-max-message-size", name, err)
			}
			t.Logf("load %s with an override of input dims [4611686018427387904]: %v", name, err)
		}
		if err := unaryIdentityOn(c, "good")(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

func unaryIdentityOn(c pb.GRPCInferenceServiceClient, model string) func(context.Context) error {
	req, _ := client.Request{Model: model, Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{4}, 1, 2, 3, 4)}}.Message()
	return func(ctx context.Context) error {
		_, err := c.ModelInfer(ctx, req)
		return err
	}
}

// TestShapesWhoseSizeOverflowsAreRefused: a shape of 2^62 INT32 elements
// with no data would wrap a 64-bit byte count to 0; it is refused as
// invalid, on ModelInfer and on a stream (which goes on).
func TestShapesWhoseSizeOverflowsAreRefused(t *testing.T) {
	srv := start(t, "")
	_, c := srv.Dial(t)
	huge := &pb.ModelInferRequest{ModelName: "identity_int32", Id: "overflow",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1 << 62}}},
		RawInputContents: [][]byte{{}}}
	_, err := c.ModelInfer(context.Background(), huge)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "INPUT0") {
		t.Fatalf("ModelInfer with shape [2^62]: %v; want InvalidArgument naming INPUT0", err)
	}
	t.Logf("ModelInfer: %v", err)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := c.ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sq := squareRequest("after", 2)
	next, _ := sq.Message()
	bad := &pb.ModelInferRequest{ModelName: "square_int32", Id: "overflow",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "IN", Datatype: "INT32", Shape: []int64{1 << 62}}},
		RawInputContents: [][]byte{{}}}
	for _, m := range []*pb.ModelInferRequest{bad, next} {
		if err := st.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	var refused, answered int
	for refused+answered < 3 {
		msg, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case msg.GetErrorMessage() != "":
			refused++
			if msg.GetInferResponse().GetId() != "overflow" {
				t.Errorf("error for request %q: %s", msg.GetInferResponse().GetId(), msg.GetErrorMessage())
			}
		default:
			answered++
		}
	}
	if refused != 1 || answered != 2 {
		t.Errorf("got %d refusals and %d responses, want 1 and 2", refused, answered)
	}
}

// TestDecoupledStatisticsStayBounded: one square request with a very large
// response count leaves ModelStatistics answering, with per-response
// statistics capped, and no memory held for each response.
func TestDecoupledStatisticsStayBounded(t *testing.T) {
	srv := start(t, "")
	_, c := srv.Dial(t)
	n := scale(200_000, 8_000_000)
	// What the server holds at start differs from machine to machine (a
	// GPU's pinned and device memory pools, 400 MiB on an H200): the bound
	// is on what the request adds.
	before := srv.ProcStatus(t, "VmRSS")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st, err := client.OpenStream(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if err := st.Send(squareRequest("many", int32(n))); err != nil {
		t.Fatal(err)
	}
	for got := 0; got < n; got++ {
		res, err := st.Recv()
		if err != nil || res.Err != nil {
			t.Fatalf("after %d of %d responses: %v %v", got, n, err, res.Err)
		}
	}
	elapsed := time.Since(begin)
	// square reports a response's statistics just after sending it: the
	// last one's may come after the client read it.
	var stats *pb.ModelStatisticsResponse
	var counted uint64
	testenv.Eventually(func() bool {
		stats, err = c.ModelStatistics(context.Background(), &pb.ModelStatisticsRequest{Name: "square_int32"})
		if err != nil {
			t.Fatalf("ModelStatistics after %d responses: %v", n, err)
		}
		counted = 0
		for _, s := range stats.GetModelStats()[0].GetResponseStats() {
			counted += s.GetSuccess().GetCount()
		}
		return counted >= uint64(n)
	})
	keys := len(stats.GetModelStats()[0].GetResponseStats())
	if keys > 1025 {
		t.Errorf("response_stats has %d entries after one request of %d responses", keys, n)
	}
	if counted != uint64(n) {
		t.Errorf("response_stats count %d responses, want %d", counted, n)
	}
	rss := srv.ProcStatus(t, "VmRSS")
	if grew := rss - before; grew > 64<<20 {
		t.Errorf("RSS grew by %d MiB with the request, from %d MiB", grew>>20, before>>20)
	}
	t.Logf("square of %d responses in %v: response_stats has %d entries counting all of them; RSS %d MiB before, %d MiB after",
		n, elapsed.Round(time.Millisecond), keys, before>>20, rss>>20)
}

// TestLogFileNeedsTheOperatorsConsent: LogSettings may not point the log
// at a file unless the server runs with --allow-log-file-setting; a
// refused request creates nothing.
func TestLogFileNeedsTheOperatorsConsent(t *testing.T) {
	srv := start(t, "")
	_, c := srv.Dial(t)
	target := filepath.Join(t.TempDir(), "hijacked.log")
	_, err := c.LogSettings(context.Background(), &pb.LogSettingsRequest{Settings: map[string]*pb.LogSettingsRequest_SettingValue{
		"log_file": {ParameterChoice: &pb.LogSettingsRequest_SettingValue_StringParam{StringParam: target}},
	}})
	if err == nil {
		t.Fatal("LogSettings chose a log file without --allow-log-file-setting")
	}
	if _, serr := os.Stat(target); !os.IsNotExist(serr) {
		t.Fatalf("the refused request created %s", target)
	}
	t.Logf("refused: %v", err)
}

// TestOversizedRequestOnAStreamFailsAlone: a request over the message
// limit is refused with its own error, and the request sent before it on
// the same stream completes.
func TestOversizedRequestOnAStreamFailsAlone(t *testing.T) {
	const limit = 1 << 20
	srv := start(t, "", "--grpc-max-message-size", fmt.Sprint(limit))
	_, c := srv.Dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := client.OpenStream(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	slow := repeatRequest("slow", 7, 3)
	slow.Inputs[1] = client.Uint32s("DELAY", []int64{3}, 200, 200, 200)
	big := client.Request{Model: "identity_int32", ID: "big", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{(limit + limit/4) / 4}, make([]int32, (limit+limit/4)/4)...)}}
	for _, r := range []client.Request{slow, big} {
		if err := st.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	check := &exactlyOnce{want: map[string]expectation{}, got: map[string]*received{}}
	check.add("slow", 7, 3)
	bigRefused := false
	for !bigRefused || !check.got["slow"].final {
		res, err := st.Recv()
		if err != nil {
			t.Fatalf("the stream ended: %v", err)
		}
		if res.ID == "big" {
			if res.Err == nil || !strings.Contains(res.Err.Error(), "--grpc-max-message-size") {
				t.Fatalf("the oversized request got %v, want an error naming --grpc-max-message-size", res.Err)
			}
			bigRefused = true
			t.Logf("oversized request: %v", res.Err)
			continue
		}
		if err := check.take(res); err != nil {
			t.Fatal(err)
		}
	}
}
