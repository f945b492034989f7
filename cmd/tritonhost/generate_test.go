package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// textIdentity is identity over strings of dims [1, 1], as Triton's
// mock_llm takes its PROMPT.
const textIdentity = `name: "text"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ 1, 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ 1, 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
`

// TestGenerateAsTritonsEndpoint drives /generate and /generate_stream of
// the binary the way Triton's generate endpoint tests do: a lone value
// fitted to the input's dims (identity's response parameters come back as
// members, as Triton's mapping puts them), a decoupled model answered when
// it sent one response and refused otherwise, and the parser's refusals
// with Triton's texts and statuses.
func TestGenerateAsTritonsEndpoint(t *testing.T) {
	t.Parallel()
	repo := testenv.Repository(t, testenv.Model{Name: "text", Config: textIdentity},
		testenv.Model{Name: "repeat_int32", Config: testenv.ExampleConfig(t, "repeat_int32")})
	s := startServer(t, repo)
	notOne := "generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses"
	for _, tc := range []struct {
		name, path, body string
		status           int
		want             string // the whole body, or the whole error
	}{
		{"a lone string for dims [1, 1]", "/v2/models/text/generate", `{"INPUT0": "hello world"}`,
			200, `{"model_name":"text","model_version":"1","param0":"an example string parameter","param1":42,"param2":false,"OUTPUT0":"hello world"}`},
		{"a decoupled model that sent one response", "/v2/models/repeat_int32/generate", `{"IN": [7], "DELAY": [0], "WAIT": 0}`,
			200, `{"model_name":"repeat_int32","model_version":"1","OUT":7,"IDX":0}`},
		{"a decoupled model that sent two", "/v2/models/repeat_int32/generate", `{"IN": [7, 8], "DELAY": [0, 0], "WAIT": 0}`, 500, notOne},
		{"a decoupled model that sent none", "/v2/models/repeat_int32/generate", `{"IN": [], "DELAY": [], "WAIT": 0}`, 500, notOne},
		{"an error as the one response", "/v2/models/repeat_int32/generate", `{"IN": [1, 2], "DELAY": [0], "WAIT": 0}`,
			400, "expected IN and DELAY shape to match, got [2] and [1]"},
		{"a value of the wrong type", "/v2/models/text/generate", `{"INPUT0": 5}`,
			500, "Unable to parse JSON bytes array: attempt to access JSON non-string as string"},
		{"an input twice", "/v2/models/text/generate", `{"INPUT0": "a", "INPUT0": "b"}`,
			400, "[request id: <id_unknown>] input 'INPUT0' already exists in request"},
		{"a parameter of an object type", "/v2/models/text/generate", `{"INPUT0": "a", "X": {"y": 1}}`,
			400, "parameter 'X' has invalid type. It should be either 'int', 'bool', or 'string'."},
		{"parameters not an object", "/v2/models/text/generate", `{"INPUT0": "a", "parameters": 1}`,
			500, "Expected JSON object for keyword: 'parameters': attempt to access JSON non-object as object"},
		{"more values than dims [1, 1] hold", "/v2/models/text/generate", `{"INPUT0": ["a", "b"]}`,
			400, "The schema can not convert input 'INPUT0' to tensor with proper shape"},
		{"an error as the stream's first response", "/v2/models/repeat_int32/generate_stream", `{"IN": [1, 2], "DELAY": [0], "WAIT": 0}`,
			400, "data: {\"error\":\"expected IN and DELAY shape to match, got [2] and [1]\"}\n\n"},
		{"a stream of no response", "/v2/models/repeat_int32/generate_stream", `{"IN": [], "DELAY": [], "WAIT": 0}`, 200, ""},
	} {
		status, _, body := s.httpCall(t, "POST", tc.path, []byte(tc.body))
		got := string(body)
		var e struct {
			Error string `json:"error"`
		}
		if status >= 400 && !strings.HasPrefix(got, "data: ") && json.Unmarshal(body, &e) == nil {
			got = e.Error
		}
		if status != tc.status || got != tc.want {
			t.Errorf("%s: %d %s\nwant %d %s", tc.name, status, body, tc.status, tc.want)
		}
	}
}
