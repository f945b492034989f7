package httpserver_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// seenParams records the string parameters of the requests a model
// executes whose names contain "header", by request id.
type seenParams struct {
	mu  sync.Mutex
	got map[string][]string // id -> "name=value", sorted
}

func (s *seenParams) inspect(r *core.Request) {
	var kv []string
	for _, p := range r.Parameters() {
		if p.Type == core.ParamString && strings.Contains(p.Name, "header") {
			kv = append(kv, p.Name+"="+p.String)
		}
	}
	slices.Sort(kv)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[r.ID()] = kv
}

func (s *seenParams) of(id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[id]
}

// TestHeaderForwardPatternForwardsMatchingHeaders: with
// Options.HeaderForward (--http-header-forward-pattern) the request
// headers whose names match, case-insensitively and anywhere in the name,
// become string parameters of the inference request of /infer and
// /generate, named in lower case; without a pattern nothing is forwarded;
// a matching header named as a reserved parameter is answered 400 with
// Triton's words.
func TestHeaderForwardPatternForwardsMatchingHeaders(t *testing.T) {
	t.Parallel()
	headers := []string{"My_Header_1", "my_value_1", "my_header_2", "my_value_2", "Header_1", "value_1"}
	all := []string{"my_header_1=my_value_1", "my_header_2=my_value_2"}
	for _, tc := range []struct {
		name, pattern string
		want          []string
	}{
		{"no pattern", "", nil},
		{"prefix", "my_header.*", all},
		{"case-insensitive", "MY_HEADER.*", all},
		{"unanchored", "header_2", []string{"my_header_2=my_value_2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			re, err := protocol.HeaderForwardPattern(tc.pattern)
			if err != nil {
				t.Fatal(err)
			}
			seen := &seenParams{got: map[string][]string{}}
			h := newHarness(t, setup{opts: httpserver.Options{HeaderForward: re}}, coretest.ModelDir{Name: "m", Config: vector("")})
			h.p.Set("m", coretest.Inspect(seen.inspect, coretest.Echo()))
			body := `{"id":"infer","inputs":[{"name":"INPUT0","shape":[1],"datatype":"INT32","data":[1]}]}`
			if status, _, out := h.call(t, "POST", "/v2/models/m/infer", []byte(body), headers...); status != http.StatusOK {
				t.Fatalf("infer: %d %s", status, out)
			}
			if got := seen.of("infer"); !slices.Equal(got, tc.want) {
				t.Errorf("infer: forwarded %q, want %q", got, tc.want)
			}
			if status, _, out := h.call(t, "POST", "/v2/models/m/generate", []byte(`{"INPUT0":[1]}`), headers...); status != http.StatusOK {
				t.Fatalf("generate: %d %s", status, out)
			}
			if got := seen.of(""); !slices.Equal(got, tc.want) {
				t.Errorf("generate: forwarded %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("reserved", func(t *testing.T) {
		t.Parallel()
		re, _ := protocol.HeaderForwardPattern(".*")
		h := newHarness(t, setup{opts: httpserver.Options{HeaderForward: re}}, coretest.ModelDir{Name: "m", Config: vector("")})
		body := []byte(`{"inputs":[{"name":"INPUT0","shape":[1],"datatype":"INT32","data":[1]}]}`)
		for _, key := range []string{"sequence_id", "sequence_start", "priority", "timeout", "headers", "binary_data_output", "triton_final_response", "triton_injected_via_header"} {
			status, _, out := h.call(t, "POST", "/v2/models/m/infer", body, key, "dummy-value")
			wantError(t, key, status, out, http.StatusBadRequest, "reserved for Triton usage")
		}
	})
}

// TestClientSharedMemoryCanBeDisallowed: with
// Options.DisallowClientSharedMemory (--allow-client-shm=false) the
// register and unregister routes, system and CUDA, and requests whose
// tensors name a region are answered 403; status answers with no region;
// requests without shared memory run.
func TestClientSharedMemoryCanBeDisallowed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{opts: httpserver.Options{DisallowClientSharedMemory: true}}, coretest.ModelDir{Name: "m", Config: vector("")})
	for _, path := range []string{
		"/v2/systemsharedmemory/region/r/register", "/v2/systemsharedmemory/unregister", "/v2/systemsharedmemory/region/r/unregister",
		"/v2/cudasharedmemory/region/r/register", "/v2/cudasharedmemory/unregister",
	} {
		status, _, out := h.call(t, "POST", path, []byte(`{"key":"/k","byte_size":4,"raw_handle":{"b64":""},"device_id":0}`))
		wantError(t, path, status, out, http.StatusForbidden, "--allow-client-shm")
	}
	if status, _, out := h.call(t, "GET", "/v2/systemsharedmemory/status", nil); status != http.StatusOK || string(out) != "[]" {
		t.Errorf("status: %d %s, want 200 []", status, out)
	}
	shm := `"parameters":{"shared_memory_region":"r","shared_memory_byte_size":4}`
	for what, body := range map[string]string{
		"an input in shared memory":  `{"inputs":[{"name":"INPUT0","shape":[1],"datatype":"INT32",` + shm + `}]}`,
		"an output in shared memory": `{"inputs":[{"name":"INPUT0","shape":[1],"datatype":"INT32","data":[1]}],"outputs":[{"name":"OUTPUT0",` + shm + `}]}`,
	} {
		status, _, out := h.call(t, "POST", "/v2/models/m/infer", []byte(body))
		wantError(t, what, status, out, http.StatusForbidden, "--allow-client-shm")
	}
	body := `{"inputs":[{"name":"INPUT0","shape":[1],"datatype":"INT32","data":[1]}]}`
	if status, _, out := h.call(t, "POST", "/v2/models/m/infer", []byte(body)); status != http.StatusOK {
		t.Errorf("a request without shared memory: %d %s", status, out)
	}
}
