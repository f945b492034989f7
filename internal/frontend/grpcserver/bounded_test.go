package grpcserver

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// loadRequest is a load request of n parameters named p0 ... p<n-1>, or,
// with distinct > 0, names repeating every distinct entries (each entry's
// value its index, so that the last of a name is known).
func loadRequest(t testing.TB, n, distinct int) []byte {
	t.Helper()
	var b []byte
	for i := range n {
		name := i
		if distinct > 0 {
			name = i % distinct
		}
		entry, err := proto.Marshal(&pb.RepositoryModelLoadRequest{Parameters: map[string]*pb.ModelRepositoryParameter{
			fmt.Sprint("p", name): {ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: fmt.Sprint(i)}}}})
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, entry...)
	}
	// The model's name after the parameters: a field past the ones dropped
	// still decodes.
	return protowire.AppendString(protowire.AppendTag(b, 2, protowire.BytesType), "m")
}

// TestMapsAreCountedOnTheWire: the codec decodes a request's map whole
// within its bound, as protobuf does (the last entry of a name winning),
// and no more than one past the bound beyond it, the message's other
// fields intact; checkMap then refuses it in the words both frontends
// use.
func TestMapsAreCountedOnTheWire(t *testing.T) {
	cases := []struct {
		name      string
		entries   int
		distinct  int
		decoded   int
		refused   bool
		lastValue string // of p0
	}{
		{"at the bound", 1024, 0, 1024, false, "0"},
		{"one past it", 1025, 0, 1025, true, "0"},
		{"far past it", 100000, 0, 1025, true, "0"},
		{"names repeated, within the bound", 5000, 3, 3, false, "4998"},
	}
	bm, _ := boundedMapOf(&pb.RepositoryModelLoadRequest{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := loadRequest(t, c.entries, c.distinct)
			var got pb.RepositoryModelLoadRequest
			if err := decodeBounded(b, &got, bm); err != nil {
				t.Fatal(err)
			}
			if len(got.Parameters) != c.decoded || got.ModelName != "m" || got.Parameters["p0"].GetStringParam() != c.lastValue {
				t.Errorf("decoded %d parameters, model %q, p0 %q; want %d, \"m\", %q", len(got.Parameters), got.ModelName,
					got.Parameters["p0"].GetStringParam(), c.decoded, c.lastValue)
			}
			if !c.refused {
				var want pb.RepositoryModelLoadRequest
				if err := proto.Unmarshal(b, &want); err != nil || !proto.Equal(&got, &want) {
					t.Errorf("decoded differently from protobuf (%v)", err)
				}
			}
			err := checkMap(&got, len(got.Parameters))
			if refused := err != nil; refused != c.refused ||
				refused && !strings.Contains(err.Error(), "the load request has more than the 1024 parameters the server accepts") {
				t.Errorf("checkMap: %v, want a refusal %v", err, c.refused)
			}
		})
	}
	var got pb.RepositoryModelLoadRequest
	if err := decodeBounded([]byte{0x1a, 0x05, 0x0a}, &got, bm); err == nil || !strings.Contains(err.Error(), "RepositoryModelLoadRequest") {
		t.Errorf("a truncated message: %v, want an error naming the message", err)
	}
}

// FuzzBoundedMapMatchesProtobuf: whatever bytes arrive as a request with
// a counted map, decoding neither panics nor decodes past the bound, and
// a message within the bound decodes as protobuf decodes it.
func FuzzBoundedMapMatchesProtobuf(f *testing.F) {
	f.Add(loadRequest(f, 3, 0))
	f.Add(loadRequest(f, 8, 2))
	for _, m := range []proto.Message{
		&pb.LogSettingsRequest{Settings: map[string]*pb.LogSettingsRequest_SettingValue{
			"log_info": {ParameterChoice: &pb.LogSettingsRequest_SettingValue_BoolParam{BoolParam: true}}}},
		&pb.TraceSettingRequest{ModelName: "m", Settings: map[string]*pb.TraceSettingRequest_SettingValue{
			"trace_level": {Value: []string{"TIMESTAMPS", "TENSORS"}}}},
		&pb.RepositoryModelUnloadRequest{ModelName: "m", Parameters: map[string]*pb.ModelRepositoryParameter{
			"unload_dependents": {ParameterChoice: &pb.ModelRepositoryParameter_BoolParam{BoolParam: true}}}},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	bm, _ := boundedMapOf(&pb.RepositoryModelLoadRequest{})
	bm.limit = 4
	f.Fuzz(func(t *testing.T, b []byte) {
		var got, want pb.RepositoryModelLoadRequest
		err := decodeBounded(b, &got, bm)
		werr := proto.Unmarshal(b, &want)
		switch {
		case err != nil:
			return // refused: nothing decoded is used
		case len(got.Parameters) > bm.limit+1:
			t.Fatalf("decoded %d parameters, bound %d", len(got.Parameters), bm.limit)
		case len(got.Parameters) <= bm.limit && (werr != nil || !proto.Equal(&got, &want)):
			t.Fatalf("decoded %v; protobuf decodes %v (%v)", &got, &want, werr)
		}
	})
}
