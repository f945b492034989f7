package httpserver_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// llmConfig is the configuration of Triton's mock_llm test model
// (qa/L0_http/generate_models/mock_llm): decoupled, PROMPT and STREAM of
// dims [1, 1], TEXT out.
const llmConfig = `backend: "go"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "PROMPT" data_type: TYPE_STRING dims: [ 1, 1 ] },
        { name: "STREAM" data_type: TYPE_BOOL dims: [ 1, 1 ] } ]
output [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1, -1 ] } ]
`

// mockLLM answers as mock_llm does: REPETITION responses (a request
// parameter, 1 by default) with TEXT = PROMPT and the request's parameters
// as response parameters, then, with FAIL_LAST, an error "An Error
// Occurred" (of the code ERROR_CODE names: INTERNAL by default), then a
// flags-only final.
func mockLLM() coretest.Behaviour {
	return coretest.Async(func(x *coretest.Exec, r *core.Request) {
		reps, failLast, code := int64(1), false, core.CodeInternal
		for _, p := range r.Parameters() {
			switch p.Name {
			case "REPETITION":
				reps = p.Int
			case "FAIL_LAST":
				failLast = p.Bool
			case "ERROR_CODE":
				if p.String == "UNAVAILABLE" {
					code = core.CodeUnavailable
				}
			}
		}
		var prompt []byte
		for _, in := range r.Inputs() {
			if in.Name == "PROMPT" {
				prompt = slices.Concat(in.Buffers...)
			}
		}
		for range reps {
			_ = x.Send(r, &core.Response{Parameters: r.Parameters(),
				Outputs: []core.Output{{Name: "TEXT", DataType: core.TypeBytes, Shape: []int64{1, 1}, Data: prompt}}}, false)
		}
		if failLast {
			_ = x.Send(r, &core.Response{Err: core.Errorf(code, "An Error Occurred")}, false)
		}
		_ = x.SendFinal(r)
	})
}

// newGenerateHarness serves mock_llm as "llm" and a few models for the
// shape rules: "vec" (INT32 [-1]), "pair" (INT32 [2]), "rows" (batching,
// INT32 [3]), "half" (FP16 [-1]) and "param" (an input named parameters).
func newGenerateHarness(t *testing.T) *harness {
	h := newHarness(t, setup{},
		coretest.ModelDir{Name: "llm", Config: llmConfig},
		coretest.ModelDir{Name: "vec", Config: vector("")},
		coretest.ModelDir{Name: "pair", Config: `backend: "go"
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]`},
		coretest.ModelDir{Name: "rows", Config: `backend: "go"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 3 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 3 ] } ]`},
		coretest.ModelDir{Name: "half", Config: `backend: "go"
input [ { name: "INPUT0" data_type: TYPE_FP16 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP16 dims: [ -1 ] } ]`},
		coretest.ModelDir{Name: "param", Config: `backend: "go"
input [ { name: "parameters" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]`})
	h.p.Set("llm", mockLLM())
	for _, m := range []string{"vec", "pair", "rows", "half", "param"} {
		h.p.Set(m, coretest.Echo())
	}
	return h
}

// TestGenerateRefusesAsTritonDoes: every case Triton's generate request
// parser tells apart, with Triton's text (the whole "error") and HTTP
// status, on /generate and /generate_stream alike; the first three come
// from Triton's own generate endpoint tests.
func TestGenerateRefusesAsTritonDoes(t *testing.T) {
	t.Parallel()
	h := newGenerateHarness(t)
	for _, tc := range []struct {
		name, model, body string
		status            int
		text              string
	}{
		{"a value of the wrong JSON type for a string input", "llm", `{"PROMPT": 123, "STREAM": false}`,
			500, "Unable to parse JSON bytes array: attempt to access JSON non-string as string"},
		{"a value of the wrong JSON type for a bool input", "llm", `{"PROMPT": "hello", "STREAM": "false"}`,
			500, "Unable to parse 'data': attempt to access JSON non-boolean as boolean"},
		{"two bad values: the first in the document wins", "llm", `{"STREAM": 123, "PROMPT": true}`,
			500, "Unable to parse 'data': attempt to access JSON non-boolean as boolean"},
		{"an object for a string input", "llm", `{"PROMPT": {"USER": "hello world", "BOT": "world hello"}, "STREAM": true}`,
			500, "Unable to parse JSON bytes array: attempt to access JSON non-string as string"},
		{"an input given twice", "llm", `{"PROMPT": "hello", "STREAM": false, "PROMPT": "duplicate"}`,
			400, "[request id: <id_unknown>] input 'PROMPT' already exists in request"},
		{"two inputs given twice: the first repeated wins", "llm", `{"PROMPT": "hello", "STREAM": false, "STREAM": true, "PROMPT": "duplicate"}`,
			400, "[request id: <id_unknown>] input 'STREAM' already exists in request"},
		{"an input given at the top and in parameters", "llm", `{"id": "7", "PROMPT": "a", "STREAM": false, "parameters": {"PROMPT": "b"}}`,
			400, "Converting keyword: 'parameters': [request id: 7] input 'PROMPT' already exists in request"},
		{"a parameter of an object type", "llm", `{"PROMPT": "hello world", "STREAM": true, "PARAMS": {"PARAM_0": 0, "PARAM_1": true}}`,
			400, "parameter 'PARAMS' has invalid type. It should be either 'int', 'bool', or 'string'."},
		{"a parameter of an array type", "llm", `{"PROMPT": "hello world", "STREAM": true, "list": [1]}`,
			400, "parameter 'list' has invalid type. It should be either 'int', 'bool', or 'string'."},
		{"a null parameter", "llm", `{"PROMPT": "hello world", "STREAM": true, "nothing": null}`,
			400, "parameter 'nothing' has invalid type. It should be either 'int', 'bool', or 'string'."},
		{"parameters that are not an object", "llm", `{"PROMPT": ["hello world"], "STREAM": true, "parameters": 1}`,
			500, "Expected JSON object for keyword: 'parameters': attempt to access JSON non-object as object"},
		{"an object among the parameters", "llm", `{"PROMPT": ["hello world"], "STREAM": true, "parameters": {"nested": {"twice": 1}}}`,
			400, "Converting keyword: 'parameters': parameter 'nested' has invalid type. It should be either 'int', 'bool', or 'string'."},
		{"parameters inside parameters", "llm", `{"PROMPT": "x", "STREAM": true, "parameters": {"parameters": {}}}`,
			400, "Converting keyword: 'parameters': parameter 'parameters' has invalid type. It should be either 'int', 'bool', or 'string'."},
		{"an input called parameters", "param", `{"parameters": {"a": 1}}`,
			400, "Keyword 'parameters' for nested schema also given as input tensor name"},
		{"a missing input", "llm", `{"PROMPT": "hello"}`,
			400, "[request id: <id_unknown>] expected 2 inputs but got 1 inputs for model 'llm'. Got input(s) ['PROMPT'], but missing required input(s) ['STREAM']. Please provide all required input(s)."},
		{"an id that is not a string", "llm", `{"id": 5, "PROMPT": "hello", "STREAM": false}`,
			500, "Unable to parse 'id': attempt to access JSON non-string as string"},
		{"a body that is not an object", "vec", `[1]`, 500, "attempt to get members for non-object"},
		{"an empty body", "vec", ``, 500, "failed to parse the request JSON buffer: The document is empty. at 0"},
		{"two documents", "vec", `{} {}`, 500, "failed to parse the request JSON buffer: The document root must not be followed by other values. at 3"},
		{"more values than the shape's fixed dimensions hold", "pair", `{"INPUT0": [1, 2, 3]}`,
			400, "The schema can not convert input 'INPUT0' to tensor with proper shape"},
		{"no value for a fixed dimension", "pair", `{"INPUT0": []}`,
			400, "The schema can not convert input 'INPUT0' to tensor with proper shape"},
		{"nested arrays: only the outer length shapes the tensor", "vec", `{"INPUT0": [[1, 2], [3, 4]]}`,
			500, "Unable to parse 'data': Shape does not match true shape of 'data' field"},
		{"a float for an integer input", "vec", `{"INPUT0": [1, 2.5]}`,
			500, "Unable to parse 'data': attempt to access JSON non-signed-integer as signed-integer"},
		{"FP16 in JSON", "half", `{"INPUT0": [1]}`,
			400, "receiving FP16 data via JSON is not supported. Please use the binary data format for input INPUT0"},
		{"an unknown model", "nope", `{}`, 404, "Request for unknown model: 'nope' is not found"},
	} {
		for _, route := range []string{"generate", "generate_stream"} {
			status, _, body := h.call(t, "POST", "/v2/models/"+tc.model+"/"+route, []byte(tc.body))
			var e struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || status != tc.status || e.Error != tc.text {
				t.Errorf("%s (%s): %d %s\nwant %d %q", tc.name, route, status, body, tc.status, tc.text)
			}
		}
	}
	status, _, body := h.call(t, "POST", "/v2/models/vec/generate", []byte(`{"INPUT0": 1}`), "Content-Encoding", "gzip")
	wantError(t, "a compressed body", status, body, 400, "Unsupported content-encoding, only 'identity' is supported.")
}

// TestGenerateFitsValuesToTheModelsShape: a value takes the shape of the
// model's input when the element counts agree: a lone string for dims
// [1, 1], an array for [-1], a row for a batching model's [3].
func TestGenerateFitsValuesToTheModelsShape(t *testing.T) {
	t.Parallel()
	h := newGenerateHarness(t)
	for _, tc := range []struct{ model, body, want string }{
		{"llm", `{"PROMPT": "hello world", "STREAM": false}`, `{"model_name":"llm","model_version":"1","TEXT":"hello world"}`},
		{"llm", `{"PROMPT": ["hello world"], "STREAM": [false]}`, `{"model_name":"llm","model_version":"1","TEXT":"hello world"}`},
		{"vec", `{"INPUT0": [1, 2, 3]}`, `{"model_name":"vec","model_version":"1","OUTPUT0":[1,2,3]}`},
		{"vec", `{"INPUT0": 7}`, `{"model_name":"vec","model_version":"1","OUTPUT0":7}`},
		{"pair", `{"INPUT0": [4, 5]}`, `{"model_name":"pair","model_version":"1","OUTPUT0":[4,5]}`},
		{"rows", `{"INPUT0": [4, 5, 6]}`, `{"model_name":"rows","model_version":"1","OUTPUT0":[4,5,6]}`},
		{"vec", `{"parameters": {"INPUT0": [8, 9]}}`, `{"model_name":"vec","model_version":"1","OUTPUT0":[8,9]}`},
		{"vec", `{"id": "r1", "INPUT0": [300]}`, `{"model_name":"vec","model_version":"1","id":"r1","OUTPUT0":300}`},
	} {
		status, _, body := h.call(t, "POST", "/v2/models/"+tc.model+"/generate", []byte(tc.body))
		if status != 200 || string(body) != tc.want {
			t.Errorf("%s %s: %d %s, want %s", tc.model, tc.body, status, body, tc.want)
		}
	}
}

// TestGenerateParametersReachTheBackendAsTyped: members that name no input
// are request parameters of their JSON type (an integer that fits int64 is
// an int, another number a double), and come back as response parameters.
func TestGenerateParametersReachTheBackendAsTyped(t *testing.T) {
	t.Parallel()
	h := newGenerateHarness(t)
	status, _, body := h.call(t, "POST", "/v2/models/llm/generate",
		[]byte(`{"PROMPT": "p", "STREAM": false, "n": 3, "t": 0.5, "big": 18446744073709551615, "flag": true, "s": "x", "parameters": {"sequence_id": 4, "triton_x": "y"}}`))
	var got map[string]any
	if err := json.Unmarshal(body, &got); status != 200 || err != nil {
		t.Fatalf("generate: %d %s", status, body)
	}
	for k, want := range map[string]any{"n": 3.0, "t": 0.5, "big": 18446744073709551615.0, "flag": true, "s": "x", "sequence_id": 4.0, "triton_x": "y", "TEXT": "p"} {
		if got[k] != want {
			t.Errorf("%s = %v (%T), want %v: %s", k, got[k], got[k], want, body)
		}
	}
	if !strings.Contains(string(body), `"n":3,`) || !strings.Contains(string(body), `"t":0.5,`) {
		t.Errorf("n should come back an int and t a double: %s", body)
	}
}

// TestGenerateAnswersADecoupledModelThatSentOneResponse: /generate runs
// decoupled models and answers when the request got exactly one response
// (the flags-only final after it does not count); otherwise it answers
// INTERNAL with Triton's text. Triton's test_one_response,
// test_zero_response and test_many_response.
func TestGenerateAnswersADecoupledModelThatSentOneResponse(t *testing.T) {
	t.Parallel()
	h := newGenerateHarness(t)
	status, _, body := h.call(t, "POST", "/v2/models/llm/generate", []byte(`{"PROMPT": "hello world", "STREAM": true}`))
	if want := `{"model_name":"llm","model_version":"1","TEXT":"hello world"}`; status != 200 || string(body) != want {
		t.Errorf("one response: %d %s, want %s", status, body, want)
	}
	for _, reps := range []string{"0", "2"} {
		status, _, body := h.call(t, "POST", "/v2/models/llm/generate", []byte(`{"PROMPT": "hello world", "STREAM": true, "REPETITION": `+reps+`}`))
		wantError(t, reps+" responses", status, body, 500,
			"generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses")
		_, _, events := events(t, h, "/v2/models/llm/generate_stream", `{"PROMPT": "hello world", "STREAM": true, "REPETITION": `+reps+`}`)
		if n := map[string]int{"0": 0, "2": 2}[reps]; len(events) != n {
			t.Errorf("generate_stream with %s responses: %q", reps, events)
		}
	}
	// One response, an error: its status and text.
	status, _, body = h.call(t, "POST", "/v2/models/llm/generate", []byte(`{"PROMPT": "x", "STREAM": true, "REPETITION": 0, "FAIL_LAST": true, "ERROR_CODE": "UNAVAILABLE"}`))
	wantError(t, "an error response", status, body, 503, "An Error Occurred")
}

// TestGenerateStreamTakesItsStatusFromTheFirstResponse is Triton's
// generate_error_status_test and test_generate_stream_response_error: an
// error as the first response sets the status (500 for INTERNAL, 503 for
// UNAVAILABLE) with the error as the stream's one event; after a good
// first response the stream is 200 and the error an event in it.
func TestGenerateStreamTakesItsStatusFromTheFirstResponse(t *testing.T) {
	t.Parallel()
	h := newGenerateHarness(t)
	for _, tc := range []struct {
		code   string
		status int
	}{{"", 500}, {"UNAVAILABLE", 503}} {
		body := `{"PROMPT": ["hello world"], "STREAM": true, "REPETITION": 0, "FAIL_LAST": true, "ERROR_CODE": "` + tc.code + `"}`
		status, ctype, got := events(t, h, "/v2/models/llm/generate_stream", body)
		if status != tc.status || ctype != "text/event-stream; charset=utf-8" || !slices.Equal(got, []string{`{"error":"An Error Occurred"}`}) {
			t.Errorf("error first (%q): %d %q %q, want %d and the error event", tc.code, status, ctype, got, tc.status)
		}
	}
	status, _, got := events(t, h, "/v2/models/llm/generate_stream", `{"PROMPT": ["hello world"], "STREAM": true, "parameters": {"REPETITION": 1, "FAIL_LAST": true}}`)
	if status != 200 || len(got) != 2 || !strings.Contains(got[0], `"TEXT":"hello world"`) || got[1] != `{"error":"An Error Occurred"}` {
		t.Errorf("error second: %d %q", status, got)
	}
}
