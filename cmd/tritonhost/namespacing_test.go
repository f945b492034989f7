package main

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// identityOf is the configuration of a model on the identity backend from
// INPUT0 to OUTPUT0, vectors of datatype typ.
func identityOf(typ string) string {
	return fmt.Sprintf(`backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: %s dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: %s dims: [ -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
`, typ, typ)
}

// ensembleOf is an ensemble from IN to OUT, vectors of datatype typ,
// whose one step runs model.
func ensembleOf(typ, model string) string {
	return fmt.Sprintf(`platform: "ensemble"
max_batch_size: 0
input [ { name: "IN" data_type: %s dims: [ -1 ] } ]
output [ { name: "OUT" data_type: %s dims: [ -1 ] } ]
ensemble_scheduling { step [ { model_name: %q model_version: -1
  input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "OUT" } } ] }
`, typ, typ, model)
}

// TestModelNamespacing: with --model-namespacing=true, two repositories
// each hold a model "ident" (INT32 in one, FP32 in the other) and an
// ensemble that runs "ident". A model only one repository holds answers;
// "ident" itself is refused with Triton's INVALID_ARG for an ambiguous
// name; each ensemble runs its own repository's "ident" (the other's
// datatype would not load); the index lists both. Without namespacing,
// "ident" is a duplicate that does not load, and the server is not ready.
func TestModelNamespacing(t *testing.T) {
	a := testenv.Repository(t,
		testenv.Model{Name: "ident", Config: identityOf("TYPE_INT32")},
		testenv.Model{Name: "only_a", Config: identityOf("TYPE_INT32")},
		testenv.Model{Name: "ens_a", Config: ensembleOf("TYPE_INT32", "ident")})
	b := testenv.Repository(t,
		testenv.Model{Name: "ident", Config: identityOf("TYPE_FP32")},
		testenv.Model{Name: "ens_b", Config: ensembleOf("TYPE_FP32", "ident")})

	srv := startServer(t, a, "--model-repository", b, "--model-namespacing=true")
	ctx := ctxFor(t)
	ints := client.Int32s("INPUT0", []int64{3}, 1, 2, 3)
	floats := client.FP32s("IN", []int64{2}, 1.5, 2.5)
	for _, tc := range []struct {
		model  string
		in     client.Tensor
		output string
		code   codes.Code
		msg    string
	}{
		{model: "only_a", in: ints, output: "OUTPUT0"},
		{model: "ens_a", in: client.Int32s("IN", []int64{3}, 1, 2, 3), output: "OUT"},
		{model: "ens_b", in: floats, output: "OUT"},
		{model: "ident", in: ints, code: codes.InvalidArgument,
			msg: "There are 2 identifiers of model 'ident' in global map, model namespace must be provided to resolve ambiguity."},
	} {
		t.Run(tc.model, func(t *testing.T) {
			resp, err := srv.Client.ModelInfer(ctx, mustMessage(t, tc.model, tc.in))
			if tc.code != codes.OK {
				if status.Code(err) != tc.code || status.Convert(err).Message() != tc.msg {
					t.Fatalf("infer: %v, want %v %q", err, tc.code, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("infer: %v", err)
			}
			out, err := client.Output(resp, tc.output)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := out.Data, tc.in.Data; !slices.Equal(got, want) || out.Datatype != tc.in.Datatype {
				t.Errorf("%s = %s %v, want %s %v", tc.output, out.Datatype, got, tc.in.Datatype, want)
			}
		})
	}

	for _, call := range []struct {
		name string
		err  func() error
	}{
		{"ModelMetadata", func() error {
			_, err := srv.Client.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "ident"})
			return err
		}},
		{"ModelStatistics", func() error {
			_, err := srv.Client.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: "ident"})
			return err
		}},
	} {
		if err := call.err(); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s(ident): %v, want InvalidArgument", call.name, err)
		}
	}

	index, err := srv.Client.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range index.GetModels() {
		listed = append(listed, m.GetName()+" "+m.GetState())
	}
	want := []string{"ens_a READY", "ens_b READY", "ident READY", "ident READY", "only_a READY"}
	if !slices.Equal(listed, want) {
		t.Errorf("index %q, want %q", listed, want)
	}

	plain := startServer(t, a, "--model-repository", b, "--exit-on-error=false")
	if _, err := plain.Client.ModelInfer(ctx, mustMessage(t, "ident", ints)); status.Code(err) == codes.OK {
		t.Error("without namespacing, ident (in two repositories) answered")
	}
	if ready, err := plain.Client.ServerReady(ctx, &pb.ServerReadyRequest{}); err != nil || ready.GetReady() {
		t.Errorf("without namespacing, ServerReady = %v, %v; want not ready (ident is a duplicate)", ready.GetReady(), err)
	}
}

// mustMessage is the inference request of model with one input.
func mustMessage(t *testing.T, model string, in client.Tensor) *pb.ModelInferRequest {
	t.Helper()
	msg, err := client.Request{Model: model, ID: "1", Inputs: []client.Tensor{in}}.Message()
	if err != nil {
		t.Fatal(err)
	}
	return msg
}
