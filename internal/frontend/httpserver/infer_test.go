package httpserver_test

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
)

type inferResponse struct {
	ModelName    string `json:"model_name"`
	ModelVersion string `json:"model_version"`
	ID           string `json:"id"`
	Outputs      []struct {
		Name       string         `json:"name"`
		Datatype   string         `json:"datatype"`
		Shape      []int64        `json:"shape"`
		Data       []any          `json:"data"`
		Parameters map[string]any `json:"parameters"`
	} `json:"outputs"`
}

func TestInferWithJSONTensors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")})
	h.p.Set("echo", coretest.Echo())
	status, hdr, body := h.call(t, "POST", "/v2/models/echo/infer",
		[]byte(`{"id":"r1","parameters":{"custom":3},"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[4],"data":[[1,-2],[3,2147483647]]}]}`))
	if status != 200 || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("infer: %d %s %s", status, hdr.Get("Content-Type"), body)
	}
	if at, err := http.ParseTime(hdr.Get("Date")); err != nil || time.Since(at) > 2*time.Second || len(hdr["Date"]) != 1 {
		t.Errorf("Date %q: %v", hdr["Date"], err)
	}
	var resp inferResponse
	decodeJSON(t, body, &resp)
	if resp.ModelName != "echo" || resp.ModelVersion != "1" || resp.ID != "r1" || len(resp.Outputs) != 1 {
		t.Fatalf("response %s", body)
	}
	o := resp.Outputs[0]
	if o.Name != "OUTPUT0" || o.Datatype != "INT32" || !slices.Equal(o.Shape, []int64{4}) || fmt.Sprint(o.Data) != "[1 -2 3 2.147483647e+09]" {
		t.Errorf("output %+v", o)
	}
}

func TestInferWithBinaryTensorsBothWays(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")})
	h.p.Set("echo", coretest.Echo())
	values := make([]int32, 100000)
	for i := range values {
		values[i] = int32(i * 7)
	}
	data := int32Bytes(values...)
	header := fmt.Sprintf(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[%d],"parameters":{"binary_data_size":%d}}],`+
		`"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`, len(values), len(data))
	status, hdr, body := h.call(t, "POST", "/v2/models/echo/infer", append([]byte(header), data...),
		httpserver.HeaderContentLength, strconv.Itoa(len(header)))
	if status != 200 {
		t.Fatalf("binary infer: %d %s", status, body)
	}
	n, err := strconv.Atoi(hdr.Get(httpserver.HeaderContentLength))
	if err != nil || n > len(body) || hdr.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("response header %v", hdr)
	}
	var resp inferResponse
	decodeJSON(t, body[:n], &resp)
	if size := resp.Outputs[0].Parameters["binary_data_size"]; size != float64(len(data)) || resp.Outputs[0].Data != nil {
		t.Errorf("output %+v, want binary_data_size %d and no data", resp.Outputs[0], len(data))
	}
	if !bytes.Equal(body[n:], data) {
		t.Error("the binary output differs from the binary input")
	}

	// binary_data_output asks for every output as binary data.
	status, hdr, body = h.call(t, "POST", "/v2/models/echo/infer",
		[]byte(`{"parameters":{"binary_data_output":true},"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[2],"data":[5,6]}]}`))
	n, _ = strconv.Atoi(hdr.Get(httpserver.HeaderContentLength))
	if status != 200 || n == 0 || !bytes.Equal(body[n:], int32Bytes(5, 6)) {
		t.Errorf("binary_data_output: %d %q", status, body)
	}
}

func TestInferReadsCompressedBodies(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")})
	h.p.Set("echo", coretest.Echo())
	plain := []byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[3],"data":[7,8,9]}]}`)
	for _, enc := range []string{"gzip", "deflate"} {
		var buf bytes.Buffer
		var zw interface {
			Write([]byte) (int, error)
			Close() error
		}
		if enc == "gzip" {
			zw = gzip.NewWriter(&buf)
		} else {
			zw = zlib.NewWriter(&buf)
		}
		zw.Write(plain)
		zw.Close()
		status, _, body := h.call(t, "POST", "/v2/models/echo/infer", buf.Bytes(), "Content-Encoding", enc)
		if status != 200 || !strings.Contains(string(body), `"data":[7,8,9]`) {
			t.Errorf("%s body: %d %s", enc, status, body)
		}
	}
	status, _, body := h.call(t, "POST", "/v2/models/echo/infer", plain, "Content-Encoding", "br")
	wantError(t, "brotli body", status, body, http.StatusUnsupportedMediaType, "br")
	status, _, body = h.call(t, "POST", "/v2/models/echo/infer", plain, "Content-Encoding", "gzip")
	wantError(t, "a plain body said to be gzip", status, body, 400, "gzip")
}

// TestBodiesAreBoundedAsSentAndDecompressed: a body over MaxInputBytes is
// refused with 400 and Triton's text, and so is a small compressed body
// that inflates past it; the server goes on serving.
func TestBodiesAreBoundedAsSentAndDecompressed(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	h := newHarness(t, setup{opts: httpserver.Options{MaxInputBytes: limit}}, coretest.ModelDir{Name: "echo", Config: vector("")})
	h.p.Set("echo", coretest.Echo())
	big := make([]byte, limit+1)
	status, _, body := h.call(t, "POST", "/v2/models/echo/infer", big)
	wantError(t, "a body over the limit", status, body, 400, fmt.Sprintf("request JSON size of %d bytes exceeds the maximum allowed input size of %d bytes. "+
		"Use --http-max-input-size to increase the limit.", limit+1, limit))
	status, _, body = h.call(t, "POST", "/v2/models/echo/infer", big, httpserver.HeaderContentLength, "10")
	wantError(t, "a body with binary tensors over the limit", status, body, 400, fmt.Sprintf("request body size of %d bytes exceeds", limit+1))

	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zw.Write(make([]byte, 16*limit))
	zw.Close()
	if bomb.Len() > limit {
		t.Fatalf("the compressed body is %d bytes, not under the limit", bomb.Len())
	}
	status, _, body = h.call(t, "POST", "/v2/models/echo/infer", bomb.Bytes(), "Content-Encoding", "gzip")
	wantError(t, "a body that inflates past the limit", status, body, 400, "decompressed request JSON size of")

	// Chunked (no Content-Length) and over the limit.
	req, _ := http.NewRequest("POST", h.ts.URL+"/v2/models/echo/infer", struct{ *bytes.Reader }{bytes.NewReader(big)})
	resp, err := h.ts.Client().Do(req)
	if err == nil {
		if resp.StatusCode != 400 {
			t.Errorf("a chunked body over the limit: %d, want 400", resp.StatusCode)
		}
		resp.Body.Close()
	}
	if status, _, body := h.call(t, "POST", "/v2/models/echo/infer", []byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[1]}]}`)); status != 200 {
		t.Errorf("after the refusals: %d %s", status, body)
	}
	status, _, body = h.call(t, "POST", "/v2/repository/index", big)
	wantError(t, "an index body over the limit", status, body, 400, "request body size of")
}

func TestInferRefusesBadRequestsClearly(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{},
		coretest.ModelDir{Name: "echo", Config: vector("")},
		coretest.ModelDir{Name: "stream", Config: vector(decoupled)})
	h.p.Set("echo", coretest.Echo())
	h.p.Set("stream", coretest.Answering(coretest.Stream(2)))
	const in = `{"name":"INPUT0","datatype":"INT32","shape":[2],"data":[1,2]}`
	for _, tt := range []struct {
		name, path, body, header string
		status                   int
		words                    []string
	}{
		{"decoupled model", "/v2/models/stream/infer", `{"inputs":[` + in + `]}`, "", 501,
			[]string{"HTTP end point doesn't support models with decoupled transaction policy"}},
		{"unknown model", "/v2/models/nope/infer", `{"inputs":[` + in + `]}`, "", 404, []string{"nope"}},
		{"version 0", "/v2/models/echo/versions/0/infer", `{"inputs":[` + in + `]}`, "", 404, []string{"Request for unknown model: 'echo' version 0 is not found"}},
		{"unknown version", "/v2/models/echo/versions/3/infer", `{"inputs":[` + in + `]}`, "", 404, []string{"Request for unknown model: 'echo' version 3 is not found"}},
		{"not JSON", "/v2/models/echo/infer", `{"inputs":`, "", 400, []string{"echo", "JSON"}},
		{"unknown datatype", "/v2/models/echo/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT33","shape":[1],"data":[1]}]}`, "", 400, []string{"INPUT0", "INT33"}},
		{"too few values", "/v2/models/echo/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[3],"data":[1,2]}]}`, "", 400, []string{"INPUT0", "2 values", "3"}},
		{"too many values", "/v2/models/echo/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[1,2]}]}`, "", 400, []string{"INPUT0", "more than the 1"}},
		{"value out of range", "/v2/models/echo/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[4294967296]}]}`, "", 400, []string{"INPUT0", "not a INT32"}},
		{"ragged data", "/v2/models/echo/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[3],"data":[[1,2],[3]]}]}`, "", 400, []string{"INPUT0", "not all of one length"}},
		{"huge shape", "/v2/models/echo/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1000000000000],"data":[1]}]}`, "", 400, []string{"INPUT0", "limit"}},
		{"wrong input name", "/v2/models/echo/infer", `{"inputs":[{"name":"INPUTX","datatype":"INT32","shape":[1],"data":[1]}]}`, "", 400, []string{"INPUTX"}},
		{"binary size past the body", "/v2/models/echo/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[2],"parameters":{"binary_data_size":8}}]}`, "-", 400, []string{"unexpected size for input 'INPUT0', expecting 8 additional bytes for model 'echo'"}},
		{"binary data left over", "/v2/models/echo/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"parameters":{"binary_data_size":4}}]}xxxxyyyy`, "+8", 400,
			[]string{"unexpected additional input data for model 'echo'"}},
		{"no data", "/v2/models/echo/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1]}]}`, "", 400,
			[]string{"Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But no field is set"}},
		{"data twice", "/v2/models/echo/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[1],"parameters":{"shared_memory_region":"r"}}]}`, "", 400,
			[]string{"Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But set 'data' 'shared_memory_region'"}},
		{"a binary size that is not a size", "/v2/models/echo/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"parameters":{"binary_data_size":-4}}]}`, "", 400,
			[]string{"Unable to parse 'binary_data_size'"}},
		{"header length past the body", "/v2/models/echo/infer", `{}`, "99", 400, []string{"Inference-Header-Content-Length"}},
		{"reserved parameter", "/v2/models/echo/infer", `{"parameters":{"triton_x":1},"inputs":[` + in + `]}`, "", 400, []string{"triton_x", "reserved"}},
		{"an unknown region", "/v2/models/echo/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"parameters":{"shared_memory_region":"r","shared_memory_byte_size":4}}]}`, "", 404,
			[]string{"Unable to find shared memory region: 'r'"}},
		{"an output in a region and as binary", "/v2/models/echo/infer", `{"inputs":[` + in + `],"outputs":[{"name":"OUTPUT0","parameters":{"shared_memory_region":"r","binary_data":true}}]}`, "", 400,
			[]string{"Output can't set both 'shared_memory_region' and 'binary_data'"}},
		{"classification", "/v2/models/echo/infer", `{"inputs":[` + in + `],"outputs":[{"name":"OUTPUT0","parameters":{"classification":2}}]}`, "", 501,
			[]string{"classification"}},
	} {
		var header []string
		switch tt.header {
		case "-":
			header = []string{httpserver.HeaderContentLength, strconv.Itoa(len(tt.body))}
		case "+8": // the body ends in 8 bytes of binary data
			header = []string{httpserver.HeaderContentLength, strconv.Itoa(len(tt.body) - 8)}
		case "":
		default:
			header = []string{httpserver.HeaderContentLength, tt.header}
		}
		status, _, body := h.call(t, "POST", tt.path, []byte(tt.body), header...)
		wantError(t, tt.name, status, body, tt.status, tt.words...)
	}
	if status, _, body := h.call(t, "POST", "/v2/models/echo/infer", []byte(`{"inputs":[`+in+`]}`)); status != 200 {
		t.Errorf("a good request after the bad ones: %d %s", status, body)
	}
}

// TestInferEveryDatatypeInJSON: values of each type go in as JSON and come
// back as the same JSON, at the edges of their ranges.
func TestInferEveryDatatypeInJSON(t *testing.T) {
	t.Parallel()
	types := map[string]string{"BOOL": "true,false", "INT8": "-128,127", "INT16": "-32768,4", "INT32": "-2147483648,7",
		"INT64": "-9223372036854775808,5", "UINT8": "0,255", "UINT16": "1,65535", "UINT32": "4294967295,0",
		"UINT64": "18446744073709551615,1", "FP32": "0.5,-1.25", "FP64": "1e+300,-2", "BYTES": `"a","\u00e9\"q"`}
	var models []coretest.ModelDir
	for dt := range types {
		cfg := dt
		if dt == "BYTES" {
			cfg = "STRING"
		}
		models = append(models, coretest.ModelDir{Name: strings.ToLower(dt), Config: `backend: "go"
input [ { name: "INPUT0" data_type: TYPE_` + cfg + ` dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_` + cfg + ` dims: [ 2 ] } ]`})
	}
	h := newHarness(t, setup{}, models...)
	for dt, values := range types {
		h.p.Set(strings.ToLower(dt), coretest.Echo())
		body := fmt.Sprintf(`{"inputs":[{"name":"INPUT0","datatype":"%s","shape":[2],"data":[%s]}]}`, dt, values)
		status, _, out := h.call(t, "POST", "/v2/models/"+strings.ToLower(dt)+"/infer", []byte(body))
		want := `"data":[` + values + `]`
		if dt == "BYTES" {
			want = `"data":["a","é\"q"]`
		}
		if status != 200 || !strings.Contains(string(out), want) {
			t.Errorf("%s: %d %s, want %s", dt, status, out, want)
		}
	}
	_ = binary.LittleEndian
}

// TestAnswersCarryTheirLength: every answer, small (whose length net/http
// writes) or large (whose length the handler sets), JSON or with binary
// data, success or error, comes with a Content-Length of its body, never
// chunked.
func TestAnswersCarryTheirLength(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")})
	h.p.Set("echo", coretest.Echo())
	binaryBody := func(n int) ([]byte, []string) {
		header := fmt.Sprintf(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[%d],"parameters":{"binary_data_size":%d}}],`+
			`"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`, n, 4*n)
		return append([]byte(header), make([]byte, 4*n)...), []string{httpserver.HeaderContentLength, strconv.Itoa(len(header))}
	}
	for _, tt := range []struct {
		name     string
		elements int
		binary   bool
		status   int
	}{
		{"small JSON", 4, false, 200},
		{"JSON past 1 KiB", 130, false, 200},
		{"JSON past 2 KiB", 300, false, 200},
		{"large JSON", 20000, false, 200},
		{"small binary", 16, true, 200},
		{"binary past 1 KiB", 250, true, 200},
		{"binary past 2 KiB", 600, true, 200},
		{"error", -1, false, 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			var header []string
			switch {
			case tt.elements < 0:
				body = []byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[2],"data":[1]}]}`)
			case tt.binary:
				body, header = binaryBody(tt.elements)
			default:
				body = jsonInferBody("INT32", tt.elements)
			}
			status, hdr, got := h.call(t, "POST", "/v2/models/echo/infer", body, header...)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %.200s", status, tt.status, got)
			}
			if cl := hdr.Get("Content-Length"); cl != strconv.Itoa(len(got)) {
				t.Errorf("Content-Length %q for a body of %d bytes (header %v)", cl, len(got), hdr)
			}
			if tt.binary && hdr.Get(httpserver.HeaderContentLength) == "" {
				t.Errorf("no %s (header %v)", httpserver.HeaderContentLength, hdr)
			}
		})
	}
}
