package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/client"
)

// What Triton's sequence example clients (client repository,
// src/python/examples: simple_grpc_sequence_stream_infer_client.py,
// simple_grpc_sequence_sync_infer_client.py and
// simple_http_sequence_sync_infer_client.py) send to the example model
// simple_sequence, and the condition on which they print "PASS: Sequence".

// sequenceValues are the clients' values, each sequence's after its first.
var sequenceValues = []int32{11, 7, 5, 3, 2, 0, 1}

// exampleSequence is one of the three sequences a client sends.
type exampleSequence struct {
	// id is the correlation id: an int64 (sent as int64_param, or a JSON
	// number over HTTP) or a string (string_param, a JSON string).
	id     any
	values []int32
}

// uuid4 is a random UUID in its text form, as the clients' str(uuid.uuid4()).
func uuid4() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// exampleSequences are the clients' three sequences, in the order they
// send them: ids 1000 and 1001 ([0]+values and [100]-values), then a UUID
// string id ([20]-values).
func exampleSequences() []exampleSequence {
	negated := make([]int32, len(sequenceValues))
	for i, v := range sequenceValues {
		negated[i] = -v
	}
	return []exampleSequence{
		{id: int64(1000), values: append([]int32{0}, sequenceValues...)},
		{id: int64(1001), values: append([]int32{100}, negated...)},
		{id: uuid4(), values: append([]int32{20}, negated...)},
	}
}

// sequenceRequest is request count (1-based) of seq, as the clients build
// it: INPUT [1,1] INT32, OUTPUT requested by name, the sequence's id, START
// on the first and END on the last; the stream client also sets the
// request id "<sequence id>_<count>".
func sequenceRequest(seq exampleSequence, count int, withID bool) client.Request {
	r := client.Request{
		Model:   "simple_sequence",
		Inputs:  []client.Tensor{client.Int32s("INPUT", []int64{1, 1}, seq.values[count-1])},
		Outputs: []string{"OUTPUT"},
		Params: map[string]any{
			"sequence_id":    seq.id,
			"sequence_start": count == 1,
			"sequence_end":   count == len(seq.values),
		},
	}
	if withID {
		r.ID = fmt.Sprintf("%v_%d", seq.id, count)
	}
	return r
}

// checkSequencePass applies the clients' PASS condition (without --dyna) to
// the OUTPUT each sequence got, in the order received: element i is 1, 101
// and 21 for i = 0, and values[i-1], -values[i-1] and -values[i-1] after.
func checkSequencePass(t *testing.T, results [3][]int32) {
	t.Helper()
	n := len(sequenceValues) + 1
	for s, got := range results {
		if len(got) != n {
			t.Fatalf("sequence %d: %d results %v, want %d", s, len(got), got, n)
		}
	}
	for i := range n {
		want := [3]int32{1, 101, 21}
		if i > 0 {
			v := sequenceValues[i-1]
			want = [3]int32{v, -v, -v}
		}
		if got := [3]int32{results[0][i], results[1][i], results[2][i]}; got != want {
			t.Errorf("[%d] %d : %d : %d, [ expected ] %d : %d : %d", i, got[0], got[1], got[2], want[0], want[1], want[2])
		}
	}
}

// sequenceOutput reads OUTPUT of a simple_sequence response: INT32 [1,1].
func sequenceOutput(t *testing.T, outs []client.Tensor) int32 {
	t.Helper()
	for _, o := range outs {
		if o.Name != "OUTPUT" {
			continue
		}
		vals, err := o.AsInt32s()
		if err != nil || len(vals) != 1 || !slices.Equal(o.Shape, []int64{1, 1}) {
			t.Fatalf("OUTPUT %s %v = %v (%v), want one INT32 in [1,1]", o.Datatype, o.Shape, vals, err)
		}
		return vals[0]
	}
	t.Fatalf("no OUTPUT in %v", outs)
	return 0
}

// TestSimpleSequenceStreamClientPasses: simple_grpc_sequence_stream_infer_client
// sends its three sequences on one ModelStreamInfer stream without waiting
// and sorts the responses by the sequence id its request ids start with;
// the sequences run interleaved. Also with the requests sent round robin.
func TestSimpleSequenceStreamClientPasses(t *testing.T) {
	srv := startServer(t, "")
	for _, tc := range []struct {
		name  string
		order func(seqs []exampleSequence) [][2]int // (sequence, count) pairs
	}{
		{"client_order", func(seqs []exampleSequence) (o [][2]int) {
			for s, seq := range seqs {
				for c := range seq.values {
					o = append(o, [2]int{s, c + 1})
				}
			}
			return o
		}},
		{"round_robin", func(seqs []exampleSequence) (o [][2]int) {
			for c := range seqs[0].values {
				for s := range seqs {
					o = append(o, [2]int{s, c + 1})
				}
			}
			return o
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seqs := exampleSequences()
			st, err := client.OpenStream(ctxFor(t), srv.Client)
			if err != nil {
				t.Fatal(err)
			}
			order := tc.order(seqs)
			for _, sc := range order {
				if err := st.Send(sequenceRequest(seqs[sc[0]], sc[1], true)); err != nil {
					t.Fatal(err)
				}
			}
			var results [3][]int32
			for range order {
				r, err := st.Recv()
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				if r.Err != nil || r.Response == nil {
					t.Fatalf("response %q: %v", r.ID, r.Err)
				}
				prefix, _, _ := strings.Cut(r.ID, "_")
				s := slices.IndexFunc(seqs, func(seq exampleSequence) bool { return fmt.Sprint(seq.id) == prefix })
				if s < 0 {
					t.Fatalf("unexpected sequence id returned by the server: %s", prefix)
				}
				outs, err := client.Outputs(r.Response)
				if err != nil {
					t.Fatal(err)
				}
				results[s] = append(results[s], sequenceOutput(t, outs))
			}
			st.CloseSend()
			if rest := collect(t, st); len(rest) != 0 {
				t.Errorf("%d messages after the last response: %+v", len(rest), rest)
			}
			checkSequencePass(t, results)
		})
	}
}

// TestSimpleSequenceSyncClientsPass: simple_grpc_sequence_sync_infer_client
// and simple_http_sequence_sync_infer_client send each sequence's requests
// one call after another, sequence after sequence, with no request id.
func TestSimpleSequenceSyncClientsPass(t *testing.T) {
	srv := startServer(t, "")
	for _, tc := range []struct {
		protocol string
		infer    func(t *testing.T, r client.Request) int32
	}{
		{"grpc", func(t *testing.T, r client.Request) int32 {
			msg, err := r.Message()
			if err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client.ModelInfer(ctxFor(t), msg)
			if err != nil {
				t.Fatalf("ModelInfer: %v", err)
			}
			outs, err := client.Outputs(resp)
			if err != nil {
				t.Fatal(err)
			}
			return sequenceOutput(t, outs)
		}},
		{"http", func(t *testing.T, r client.Request) int32 {
			// The Python HTTP client sends INPUT as binary data and asks
			// for OUTPUT as binary data; the sequence fields are request
			// parameters.
			in := r.Inputs[0]
			header := map[string]any{
				"inputs": []map[string]any{{"name": in.Name, "shape": in.Shape, "datatype": in.Datatype,
					"parameters": map[string]any{"binary_data_size": len(in.Data)}}},
				"outputs":    []map[string]any{{"name": "OUTPUT", "parameters": map[string]any{"binary_data": true}}},
				"parameters": r.Params,
			}
			outs := srv.httpInfer(t, r.Model, header, in.Data)
			if len(outs) != 1 || outs[0].Name != "OUTPUT" || outs[0].Datatype != "INT32" || len(outs[0].Binary) != 4 {
				t.Fatalf("outputs %+v, want OUTPUT as 4 bytes of binary INT32", outs)
			}
			return sequenceOutput(t, []client.Tensor{{Name: "OUTPUT", Datatype: "INT32", Shape: outs[0].Shape, Data: outs[0].Binary}})
		}},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			var results [3][]int32
			for s, seq := range exampleSequences() {
				for c := range seq.values {
					results[s] = append(results[s], tc.infer(t, sequenceRequest(seq, c+1, false)))
				}
			}
			checkSequencePass(t, results)
		})
	}
}

// httpOutput is one output of an HTTP/REST infer response: its JSON data,
// or the bytes it has after the JSON header (binary tensor extension).
type httpOutput struct {
	Name     string
	Datatype string
	Shape    []int64
	JSONData []byte // the "data" member as sent, when not binary
	Binary   []byte // when the output came as binary data
}

// httpInfer posts an infer request with the JSON header and, after it, the
// binary data of the inputs that have binary_data_size, as Triton's Python
// HTTP client does; it wants 200 and splits the response the same way.
func (s *serverProcess) httpInfer(t *testing.T, model string, header map[string]any, binaryData ...[]byte) []httpOutput {
	t.Helper()
	head, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	body := slices.Concat(append([][]byte{head}, binaryData...)...)
	var extra []string
	if len(binaryData) > 0 {
		extra = []string{"Inference-Header-Content-Length", fmt.Sprint(len(head))}
	}
	status, hdr, resp := s.httpCall(t, "POST", "/v2/models/"+model+"/infer", body, extra...)
	if status != 200 {
		t.Fatalf("POST /v2/models/%s/infer: %d %s", model, status, resp)
	}
	jsonPart, rest := resp, []byte(nil)
	if n := hdr.Get("Inference-Header-Content-Length"); n != "" {
		var size int
		if _, err := fmt.Sscan(n, &size); err != nil || size > len(resp) {
			t.Fatalf("Inference-Header-Content-Length %q of a %d-byte body", n, len(resp))
		}
		jsonPart, rest = resp[:size], resp[size:]
	}
	var decoded struct {
		ModelName string `json:"model_name"`
		Outputs   []struct {
			Name       string          `json:"name"`
			Datatype   string          `json:"datatype"`
			Shape      []int64         `json:"shape"`
			Parameters map[string]any  `json:"parameters"`
			Data       json.RawMessage `json:"data"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(jsonPart, &decoded); err != nil || decoded.ModelName != model {
		t.Fatalf("response %s: %v", jsonPart, err)
	}
	var outs []httpOutput
	for _, o := range decoded.Outputs {
		out := httpOutput{Name: o.Name, Datatype: o.Datatype, Shape: o.Shape}
		if size, ok := o.Parameters["binary_data_size"].(float64); ok {
			if int(size) > len(rest) {
				t.Fatalf("output %s: binary_data_size %v, %d bytes left", o.Name, size, len(rest))
			}
			out.Binary, rest = rest[:int(size)], rest[int(size):]
		} else {
			out.JSONData = o.Data
		}
		outs = append(outs, out)
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes after the last binary output", len(rest))
	}
	return outs
}
