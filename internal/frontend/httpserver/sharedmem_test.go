package httpserver_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

var shmSeq atomic.Int64

// shmObject creates a POSIX shared-memory object of size bytes as a client
// does (shm_open, ftruncate) and returns its key and an open file on it.
func shmObject(t *testing.T, size int64) (string, *os.File) {
	t.Helper()
	name := fmt.Sprintf("tritonhost-http-test-%d-%d", os.Getpid(), shmSeq.Add(1))
	path := filepath.Join("/dev/shm", name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Skipf("POSIX shared memory is not available here: %v", err)
	}
	t.Cleanup(func() { f.Close(); os.Remove(path) })
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return "/" + name, f
}

// TestSystemSharedMemoryRoutes: regions registered over HTTP are in the
// registry the server shares with gRPC; status lists them as Triton does,
// unregister removes one or all; the refusals are Triton's.
func TestSystemSharedMemoryRoutes(t *testing.T) {
	t.Parallel()
	reg := sharedmem.New(sharedmem.Options{MaxRegions: 2})
	h := newHarness(t, setup{opts: httpserver.Options{SharedMemory: reg}}, coretest.ModelDir{Name: "echo", Config: vector("")})
	key, _ := shmObject(t, 4096)
	for _, name := range []string{"a", "b"} {
		body := fmt.Sprintf(`{"key":%q,"offset":1024,"byte_size":1024}`, key)
		if status, _, out := h.call(t, "POST", "/v2/systemsharedmemory/region/"+name+"/register", []byte(body)); status != 200 {
			t.Fatalf("register %s: %d %s", name, status, out)
		}
	}
	if got, err := reg.Status("a"); err != nil || len(got) != 1 || got[0].Key != key || got[0].Offset != 1024 || got[0].ByteSize != 1024 {
		t.Errorf("the shared registry has %+v %v for region a", got, err)
	}
	var all []struct {
		Name, Key string
		Offset    uint64
		ByteSize  uint64 `json:"byte_size"`
	}
	status, _, body := h.call(t, "GET", "/v2/systemsharedmemory/status", nil)
	decodeJSON(t, body, &all)
	if status != 200 || len(all) != 2 || all[0].Name != "a" || all[1].Name != "b" || all[1].Key != key || all[1].ByteSize != 1024 {
		t.Errorf("status: %d %s", status, body)
	}
	status, _, body = h.call(t, "GET", "/v2/systemsharedmemory/region/b/status", nil)
	if status != 200 || !strings.Contains(string(body), `"name":"b"`) || strings.Contains(string(body), `"name":"a"`) {
		t.Errorf("status of b: %d %s", status, body)
	}
	for _, tc := range []struct {
		what, method, path, body string
		status                   int
		want                     string
	}{
		{"status of an unknown region", "GET", "/v2/systemsharedmemory/region/zz/status", "", 404, "Unable to find system shared memory region: 'zz'"},
		{"a name taken", "POST", "/v2/systemsharedmemory/region/a/register", fmt.Sprintf(`{"key":%q,"byte_size":8}`, key), 400, "shared memory region 'a' already in manager"},
		{"no key", "POST", "/v2/systemsharedmemory/region/c/register", `{"byte_size":8}`, 400, "Shared memory register request has no 'key' field"},
		{"no size", "POST", "/v2/systemsharedmemory/region/c/register", fmt.Sprintf(`{"key":%q}`, key), 400, "Shared memory register request has no 'byte_size' field"},
		{"no region name", "POST", "/v2/systemsharedmemory/register", fmt.Sprintf(`{"key":%q,"byte_size":8}`, key), 400,
			"'region name' is necessary to register system shared memory region"},
		{"past the bound", "POST", "/v2/systemsharedmemory/region/c/register", fmt.Sprintf(`{"key":%q,"byte_size":8}`, key), 503, "--system-shm-max-regions"},
	} {
		status, _, body := h.call(t, tc.method, tc.path, []byte(tc.body))
		wantError(t, tc.what, status, body, tc.status, tc.want)
	}
	if status, _, body := h.call(t, "POST", "/v2/systemsharedmemory/region/a/unregister", nil); status != 200 {
		t.Errorf("unregister a: %d %s", status, body)
	}
	if _, err := reg.Status("a"); err == nil {
		t.Error("region a is still registered after its unregister")
	}
	if status, _, body := h.call(t, "POST", "/v2/systemsharedmemory/unregister", nil); status != 200 {
		t.Errorf("unregister all: %d %s", status, body)
	}
	if status, _, body := h.call(t, "GET", "/v2/systemsharedmemory/status", nil); status != 200 || string(body) != "[]" {
		t.Errorf("status after unregistering all: %d %s", status, body)
	}
	if n := reg.Mapped(); n != 0 {
		t.Errorf("%d regions still mapped", n)
	}
}

// TestSharedMemoryInputsAndOutputsOverHTTP: the input is read from a
// region and the output written to one; the response names the output
// without data. An output region too small gets Triton's error, and the
// requests leave nothing leased.
func TestSharedMemoryInputsAndOutputsOverHTTP(t *testing.T) {
	t.Parallel()
	reg := sharedmem.New(sharedmem.Options{})
	h := newHarness(t, setup{opts: httpserver.Options{SharedMemory: reg}}, coretest.ModelDir{Name: "echo", Config: vector("")})
	h.p.Set("echo", coretest.Echo())
	key, f := shmObject(t, 4096)
	if status, _, out := h.call(t, "POST", "/v2/systemsharedmemory/region/data/register", fmt.Appendf(nil, `{"key":%q,"byte_size":4096}`, key)); status != 200 {
		t.Fatalf("register: %d %s", status, out)
	}
	in := int32Bytes(7, -7, 1<<30)
	if _, err := f.WriteAt(in, 100); err != nil {
		t.Fatal(err)
	}
	body := `{"id":"shm","inputs":[{"name":"INPUT0","datatype":"INT32","shape":[3],"parameters":{"shared_memory_region":"data","shared_memory_offset":100,"shared_memory_byte_size":12}}],
		"outputs":[{"name":"OUTPUT0","parameters":{"shared_memory_region":"data","shared_memory_offset":2048,"shared_memory_byte_size":64}}]}`
	status, header, out := h.call(t, "POST", "/v2/models/echo/infer", []byte(body))
	var resp struct {
		ID      string `json:"id"`
		Outputs []map[string]json.RawMessage
	}
	decodeJSON(t, out, &resp)
	if status != 200 || header.Get(httpserver.HeaderContentLength) != "" || resp.ID != "shm" || len(resp.Outputs) != 1 ||
		string(resp.Outputs[0]["name"]) != `"OUTPUT0"` || string(resp.Outputs[0]["shape"]) != "[3]" || resp.Outputs[0]["data"] != nil {
		t.Errorf("response %d %s, want OUTPUT0 [3] without data", status, out)
	}
	got := make([]byte, len(in))
	if _, err := f.ReadAt(got, 2048); err != nil || string(got) != string(in) {
		t.Errorf("the region holds %x at the output's place, want %x (%v)", got, in, err)
	}

	small := strings.Replace(body, `"shared_memory_byte_size":64`, `"shared_memory_byte_size":8`, 1)
	status, _, out = h.call(t, "POST", "/v2/models/echo/infer", []byte(small))
	wantError(t, "an output region too small", status, out, 500,
		"shared memory size specified with the request for output 'OUTPUT0' (8 bytes) should be at least 12 bytes to hold the results")
	past := strings.Replace(body, `"shared_memory_offset":100`, `"shared_memory_offset":4090`, 1)
	status, _, out = h.call(t, "POST", "/v2/models/echo/infer", []byte(past))
	wantError(t, "an input past the region's end", status, out, 400, "Invalid offset + byte size for shared memory region: 'data'")

	if status, _, out := h.call(t, "POST", "/v2/systemsharedmemory/unregister", nil); status != 200 {
		t.Fatalf("unregister: %d %s", status, out)
	}
	// A served request's lease goes just after its answer; a lease that was
	// never released stays.
	testenv.Eventually(func() bool { return reg.Mapped() == 0 })
	if n := reg.Mapped(); n != 0 {
		t.Errorf("%d regions still mapped after the requests and the unregister: a lease was not released", n)
	}
}

// TestCUDASharedMemoryRoutesAnswerAsTritonWithoutGPUs: no CUDA region is
// ever registered; status lists none, registering is refused.
func TestCUDASharedMemoryRoutesAnswerAsTritonWithoutGPUs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")})
	if status, _, body := h.call(t, "GET", "/v2/cudasharedmemory/status", nil); status != 200 || string(body) != "[]" {
		t.Errorf("status: %d %s", status, body)
	}
	if status, _, body := h.call(t, "POST", "/v2/cudasharedmemory/unregister", nil); status != 200 {
		t.Errorf("unregister: %d %s", status, body)
	}
	status, _, body := h.call(t, "GET", "/v2/cudasharedmemory/region/r/status", nil)
	wantError(t, "status of a region", status, body, 404, "Unable to find cuda shared memory region: 'r'")
	status, _, body = h.call(t, "POST", "/v2/cudasharedmemory/region/r/register", []byte(`{"raw_handle":{"b64":""},"device_id":0,"byte_size":8}`))
	wantError(t, "register", status, body, 400, "failed to register CUDA shared memory region: 'r', GPUs not supported")
}
