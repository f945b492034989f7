// Command square_client sends four requests (IN = 4, 2, 0, 1) to the
// decoupled square_int32 model on one gRPC stream, prints the responses as
// they arrive, tied to their requests by id, and checks that request i got
// IN[i] responses, each with OUT = IN[i].
package main

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/tritonhost/tritonhost/client"
	"github.com/tritonhost/tritonhost/examples/clients/streamdemo"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

const model = "square_int32"

func main() { streamdemo.Main("square_client", run) }

func run(st *streamdemo.Stream) error {
	values := []int32{4, 2, 0, 1}
	for i, v := range values {
		err := st.Send(client.Request{Model: model, ID: strconv.Itoa(i), Outputs: []string{"OUT"},
			Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, v)}})
		if err != nil {
			return err
		}
	}
	got := map[string]int{}
	err := st.Receive(func(id string, resp *pb.ModelInferResponse) error {
		i, err := strconv.Atoi(id)
		if err != nil || i < 0 || i >= len(values) {
			return fmt.Errorf("response for unknown request id %q", id)
		}
		out, err := client.Output(resp, "OUT")
		if err != nil {
			return err
		}
		if o, _ := out.AsInt32s(); len(o) != 1 || o[0] != values[i] {
			return fmt.Errorf("request %s: OUT = %v, want [%d]", id, o, values[i])
		}
		got[id]++
		return nil
	})
	if err != nil {
		return err
	}
	want := map[string]int{}
	for i, v := range values {
		if v > 0 {
			want[strconv.Itoa(i)] = int(v)
		}
	}
	if !maps.Equal(got, want) {
		return fmt.Errorf("responses per request id = %v, want %v", got, want)
	}
	fmt.Println("PASS: " + model)
	return nil
}
