// Command repeat_client sends one request to the decoupled repeat_int32
// model over a gRPC stream and checks that its four responses arrive in
// order: for IN = [4, 2, 0, 1] the model answers OUT = IN[i], IDX = i.
package main

import (
	"fmt"
	"slices"

	"github.com/tritonhost/tritonhost/client"
	"github.com/tritonhost/tritonhost/examples/clients/streamdemo"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

const model = "repeat_int32"

func main() { streamdemo.Main("repeat_client", run) }

func run(st *streamdemo.Stream) error {
	in := []int32{4, 2, 0, 1}
	err := st.Send(client.Request{Model: model, ID: "0", Outputs: []string{"OUT", "IDX"}, Inputs: []client.Tensor{
		client.Int32s("IN", []int64{int64(len(in))}, in...),
		client.Uint32s("DELAY", []int64{4}, 1, 2, 3, 4),
		client.Uint32s("WAIT", []int64{1}, 5),
	}})
	if err != nil {
		return err
	}
	var outs []int32
	var idxs []uint32
	err = st.Receive(func(_ string, resp *pb.ModelInferResponse) error {
		out, err := client.Output(resp, "OUT")
		if err != nil {
			return err
		}
		idx, err := client.Output(resp, "IDX")
		if err != nil {
			return err
		}
		o, _ := out.AsInt32s()
		i, _ := idx.AsUint32s()
		outs, idxs = append(outs, o...), append(idxs, i...)
		return nil
	})
	if err != nil {
		return err
	}
	if !slices.Equal(outs, in) || !slices.Equal(idxs, []uint32{0, 1, 2, 3}) {
		return fmt.Errorf("got OUT %v IDX %v, want OUT %v IDX [0 1 2 3]", outs, idxs, in)
	}
	fmt.Println("PASS: " + model)
	return nil
}
