package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestTraceFileStaysWithinItsBound: tracing every request at TENSORS,
// requests of 1 MiB each would write about 1 MiB of trace apiece; with
// --trace-file-max-size 4 MiB the trace file stops at 4 MiB, a whole JSON
// array once the server exits, the traces past it counted in
// tritonhost_traces_dropped_total and the bound named once in the log.
func TestTraceFileStaysWithinItsBound(t *testing.T) {
	t.Parallel()
	const (
		maxBytes = 4 << 20
		requests = 20
		values   = 1 << 18 // INT32: 1 MiB as binary data
	)
	file := filepath.Join(t.TempDir(), "trace.json")
	srv := testenv.StartServer(t, testenv.ServerConfig{Binary: serverBinary,
		Repo: testenv.Repository(t, identityModel(t, "identity_int32")),
		Args: []string{"--trace-config", "triton,file=" + file, "--trace-config", "level=TENSORS", "--trace-config", "rate=1",
			"--trace-file-max-size", strconv.Itoa(maxBytes)}})
	head := fmt.Appendf(nil, `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[%d],"parameters":{"binary_data_size":%d}}],`+
		`"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`, values, 4*values)
	body := append(head, make([]byte, 4*values)...)
	cl := &http.Client{Timeout: time.Minute}
	for i := range requests {
		req, _ := http.NewRequest("POST", "http://"+srv.HTTP+"/v2/models/identity_int32/infer", bytes.NewReader(body))
		req.Header.Set("Inference-Header-Content-Length", strconv.Itoa(len(head)))
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
	}
	dropped := regexp.MustCompile(`(?m)^tritonhost_traces_dropped_total (\d+)`)
	var n int
	testenv.WaitUntil(t, "every trace to be written or counted as dropped", func() bool {
		resp, err := http.Get("http://" + srv.Metrics + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		text, _ := io.ReadAll(resp.Body)
		m := dropped.FindSubmatch(text)
		if m != nil {
			n, _ = strconv.Atoi(string(m[1]))
		}
		written, _ := os.ReadFile(file) // each trace is flushed as it is written
		return bytes.Count(written, []byte(`"model_name":"identity_int32"`))+n == requests
	})
	srv.Stop(t) // the file's array is closed as the server exits
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	data, _ := os.ReadFile(file)
	if err := json.Unmarshal(data, &objs); err != nil {
		t.Errorf("the trace file is not a JSON array: %v", err)
	}
	traces := 0
	for _, o := range objs {
		if o["model_name"] == "identity_int32" {
			traces++
		}
	}
	t.Logf("%d requests of 1 MiB at TENSORS: trace file of %d bytes (--trace-file-max-size %d) holding %d traces; %d dropped",
		requests, info.Size(), maxBytes, traces, n)
	if info.Size() > maxBytes {
		t.Errorf("the trace file grew to %d bytes, past --trace-file-max-size %d", info.Size(), maxBytes)
	}
	if traces == 0 || traces+n != requests {
		t.Errorf("%d traces written and %d dropped, want %d in all, some written", traces, n, requests)
	}
	if c := strings.Count(srv.Process.Log(), "--trace-file-max-size"); c != 1 {
		t.Errorf("the bound was logged %d times, want once", c)
	}
}
