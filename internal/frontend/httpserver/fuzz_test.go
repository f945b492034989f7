package httpserver_test

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// fuzzModels are the models the fuzz targets' requests go to: INT32,
// BYTES and FP32 models that echo their inputs, one that batches, and a
// decoupled one that answers twice.
var fuzzModels = []coretest.ModelDir{
	{Name: "echo", Config: vector("")},
	{Name: "dec", Config: vector(decoupled)},
	{Name: "strings", Config: `backend: "go"
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
`},
	{Name: "batched", Config: `backend: "go"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] }, { name: "INPUT1" data_type: TYPE_BOOL dims: [ 1, 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] }, { name: "OUTPUT1" data_type: TYPE_BOOL dims: [ 1, 1 ] } ]
`},
}

// fuzzServer is an httpserver.Server over the fuzz models, for requests
// through its handler alone (no connection), logging nowhere.
func fuzzServer(tb testing.TB, reg *sharedmem.Registry) http.Handler {
	tb.Helper()
	p := coretest.NewProvider()
	srv := coretest.Serve(tb, core.Options{Backends: p, Logger: serverlog.New(io.Discard)}, fuzzModels...)
	if !srv.Ready() {
		tb.Fatalf("a model did not load: %+v", srv.RepositoryIndex())
	}
	for _, m := range []string{"echo", "strings", "batched"} {
		p.Set(m, coretest.Echo())
	}
	p.Set("dec", coretest.Answering(coretest.Times(2)))
	hs := httpserver.New(srv, httpserver.Options{SharedMemory: reg, MaxInputBytes: 1 << 20})
	return hs.Handler()
}

// serve sends one request through h and returns the answer.
func serve(h http.Handler, method, path string, body []byte, header ...string) *http.Response {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

// checkAnswer fails the test unless resp is a clean answer: a status of
// Triton's (its codes' statuses, and the body bounds'), an error as
// Triton's error object with a message, an event stream made of events
// whose data is JSON, and JSON (the JSON part of a binary answer) that
// parses.
func checkAnswer(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	switch resp.StatusCode {
	case 200, 400, 404, 413, 415, 500, 501, 503:
	default:
		t.Fatalf("%s: status %d (%q)", what, resp.StatusCode, body)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for rest := string(body); rest != ""; {
			event, after, ok := strings.Cut(rest, "\n\n")
			data, isData := strings.CutPrefix(event, "data: ")
			if !ok || !isData || !json.Valid([]byte(data)) {
				t.Fatalf("%s: %q is not a stream of JSON events", what, body)
			}
			rest = after
		}
		return
	}
	if resp.StatusCode != 200 {
		var e struct {
			Error *string `json:"error"`
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || *e.Error == "" {
			t.Fatalf("%s: %d %q is not Triton's error object", what, resp.StatusCode, body)
		}
		return
	}
	head := body
	if n := resp.Header.Get(httpserver.HeaderContentLength); n != "" {
		size, err := strconv.Atoi(n)
		if err != nil || size > len(body) {
			t.Fatalf("%s: %s %q for a body of %d bytes", what, httpserver.HeaderContentLength, n, len(body))
		}
		head = body[:size]
	}
	if len(head) > 0 && !json.Valid(head) {
		t.Fatalf("%s: 200 with %q, not JSON", what, head)
	}
}

// fuzzRoutes are the routes whose bodies FuzzHTTPRequest sends: every
// route that decodes a body beyond a fixed struct.
var fuzzRoutes = []string{
	"/v2/models/echo/infer", "/v2/models/strings/infer", "/v2/models/batched/infer", "/v2/models/dec/infer",
	"/v2/models/echo/generate", "/v2/models/strings/generate", "/v2/models/batched/generate", "/v2/models/dec/generate",
	"/v2/models/echo/generate_stream", "/v2/models/dec/generate_stream",
	"/v2/repository/models/echo/load", "/v2/repository/models/echo/unload",
	"/v2/systemsharedmemory/region/r/register",
}

// fuzzEncodings are the ways FuzzHTTPRequest sends a body: plain, gzip
// and deflate streams of it, the bytes as they are under a compressed
// encoding's name, and an encoding the server does not take.
var fuzzEncodings = []string{"", "gzip", "deflate", "gzip-raw", "br"}

// encode returns body sent as fuzzEncodings[enc], and the encoding's name.
func encode(enc int, body []byte) ([]byte, string) {
	var b bytes.Buffer
	switch name := fuzzEncodings[enc]; name {
	case "gzip":
		zw := gzip.NewWriter(&b)
		zw.Write(body)
		zw.Close()
		return b.Bytes(), name
	case "deflate":
		zw := zlib.NewWriter(&b)
		zw.Write(body)
		zw.Close()
		return b.Bytes(), name
	case "gzip-raw":
		return body, "gzip"
	default:
		return body, name
	}
}

// FuzzHTTPRequest: whatever body a route that decodes one receives, in
// whatever encoding and with whatever binary-data header, the server
// neither panics nor answers anything but a clean answer (checkAnswer).
// The seeds are the requests Triton's clients and this project's tests
// send.
func FuzzHTTPRequest(f *testing.F) {
	h := fuzzServer(f, sharedmem.New(sharedmem.Options{}))
	seeds := []struct {
		route, header string
		body          string
	}{
		{"/v2/models/echo/infer", "", `{"id":"1","inputs":[{"name":"INPUT0","datatype":"INT32","shape":[3],"data":[1,2,3]}],"outputs":[{"name":"OUTPUT0"}]}`},
		{"/v2/models/echo/infer", "", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[2,2],"data":[[1,2],[3,4]]}],"parameters":{"binary_data_output":true}}`},
		{"/v2/models/echo/infer", "79", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[2],"parameters":{"binary_data_size":8}}]}` + "\x01\x00\x00\x00\x02\x00\x00\x00"},
		{"/v2/models/strings/infer", "", `{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[2],"data":["a","\u00e9\"\\"]}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`},
		{"/v2/models/batched/infer", "", `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,2],"data":[0.5,1e30]},{"name":"INPUT1","datatype":"BOOL","shape":[1,1,1],"data":[true]}]}`},
		{"/v2/models/echo/infer", "", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"parameters":{"shared_memory_region":"r","shared_memory_byte_size":4}}]}`},
		{"/v2/models/echo/infer", "", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[1]}],"parameters":{"sequence_id":7,"sequence_start":true,"priority":1,"timeout":100}}`},
		{"/v2/models/dec/infer", "", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[1]}]}`},
		{"/v2/models/echo/generate", "", `{"id":"g","INPUT0":[1,2,3],"parameters":{"max_tokens":5,"stream":false,"temperature":0.5}}`},
		{"/v2/models/strings/generate", "", `{"INPUT0":"text","p":"v"}`},
		{"/v2/models/batched/generate", "", `{"INPUT0":[0.5,1.5],"INPUT1":true}`},
		{"/v2/models/dec/generate", "", `{"INPUT0":[7]}`},
		{"/v2/models/echo/generate_stream", "", `{"INPUT0":[1],"INPUT0":[2]}`},
		{"/v2/models/dec/generate_stream", "", `{"INPUT0":[7],"parameters":{"x":{"nested":1}}}`},
		{"/v2/repository/models/echo/load", "", `{"parameters":{"config":"{\"backend\":\"go\"}","file:1/model.bin":"AAEC"}}`},
		{"/v2/repository/models/echo/unload", "", `{"parameters":{"unload_dependents":true}}`},
		{"/v2/systemsharedmemory/region/r/register", "", `{"key":"/no-such-object","offset":0,"byte_size":64}`},
	}
	for _, s := range seeds {
		for enc := range fuzzEncodings {
			f.Add(uint8(slicesIndex(fuzzRoutes, s.route)), uint8(enc), s.header, []byte(s.body))
		}
	}
	f.Fuzz(func(t *testing.T, route, enc uint8, headerLen string, body []byte) {
		path := fuzzRoutes[int(route)%len(fuzzRoutes)]
		sent, encoding := encode(int(enc)%len(fuzzEncodings), body)
		header := []string{"Content-Type", "application/json"}
		if encoding != "" {
			header = append(header, "Content-Encoding", encoding)
		}
		if headerLen != "" {
			header = append(header, httpserver.HeaderContentLength, headerLen)
		}
		checkAnswer(t, path, serve(h, "POST", path, sent, header...))
	})
}

func slicesIndex(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	panic("no route " + s)
}

// FuzzSharedMemoryRequest: a region registered at any offset and size of
// a 4 KiB object, an infer request whose input and output name any span
// of it, in parameters of any JSON type, and the object shrunk beneath the
// region before the request: the server neither panics nor answers
// anything but a clean answer, and once the region is unregistered it
// holds no mapping (no lease outlives its request).
func FuzzSharedMemoryRequest(f *testing.F) {
	const objectSize = 4096
	reg := sharedmem.New(sharedmem.Options{})
	h := fuzzServer(f, reg)
	name := fmt.Sprintf("tritonhost-http-fuzz-%d", os.Getpid())
	path := filepath.Join("/dev/shm", name)
	obj, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		f.Skipf("POSIX shared memory is not available here: %v", err)
	}
	f.Cleanup(func() { obj.Close(); os.Remove(path) })
	if err := obj.Truncate(objectSize); err != nil {
		f.Fatal(err)
	}
	if _, err := obj.WriteAt(int32Bytes(1, 2, 3, 4, 5, 6, 7, 8), 0); err != nil {
		f.Fatal(err)
	}
	// regOffset, regSize: the registration; in*, out*: the request's
	// parameters, as JSON values; shape: the input's shape; shrink: the
	// object's size during the request (0: whole).
	f.Add(uint64(0), uint64(objectSize), "0", "16", "256", "16", "[4]", uint16(0))
	f.Add(uint64(1024), uint64(1024), "4", "8", "512", "8", "[2]", uint16(0))
	f.Add(uint64(0), uint64(objectSize), "4090", "16", "0", "16", "[4]", uint16(0))
	f.Add(uint64(0), uint64(objectSize), "0", "16", "16", "4", "[4]", uint16(0))
	f.Add(uint64(0), uint64(objectSize), "-1", "16", "0", "16", "[4]", uint16(0))
	f.Add(uint64(0), uint64(objectSize), `"0"`, "16.5", "0", "true", "[4]", uint16(0))
	f.Add(uint64(0), uint64(objectSize), "0", "18446744073709551615", "0", "16", "[4611686018427387904]", uint16(0))
	f.Add(uint64(2048), uint64(2048), "0", "16", "100", "16", "[4]", uint16(2000))
	f.Add(uint64(0), uint64(1<<40), "0", "16", "0", "16", "[4]", uint16(0))
	f.Fuzz(func(t *testing.T, regOffset, regSize uint64, inOffset, inSize, outOffset, outSize, shape string, shrink uint16) {
		register := fmt.Appendf(nil, `{"key":%q,"offset":%d,"byte_size":%d}`, "/"+name, regOffset, regSize)
		checkAnswer(t, "register", serve(h, "POST", "/v2/systemsharedmemory/region/r/register", register))
		if shrink > 0 {
			if err := obj.Truncate(int64(shrink % objectSize)); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := obj.Truncate(objectSize); err != nil {
					t.Fatal(err)
				}
			}()
		}
		infer := fmt.Sprintf(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":%s,"parameters":{"shared_memory_region":"r","shared_memory_offset":%s,"shared_memory_byte_size":%s}}],
"outputs":[{"name":"OUTPUT0","parameters":{"shared_memory_region":"r","shared_memory_offset":%s,"shared_memory_byte_size":%s}}]}`,
			shape, inOffset, inSize, outOffset, outSize)
		checkAnswer(t, "infer", serve(h, "POST", "/v2/models/echo/infer", []byte(infer)))
		if resp := serve(h, "POST", "/v2/systemsharedmemory/unregister", nil); resp.StatusCode != 200 {
			t.Fatalf("unregister: %d", resp.StatusCode)
		}
		// The request's lease is released once core is done with it, which
		// may be just after its answer.
		if !testenv.Eventually(func() bool { return reg.Mapped() == 0 }) {
			t.Fatalf("%d regions still mapped after the request and the unregister: a lease outlived its request", reg.Mapped())
		}
	})
}
