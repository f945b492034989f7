// Command repeat_client sends one request to the decoupled repeat_int32
// model over a gRPC stream and checks that its four responses arrive in
// order: for IN = [4, 2, 0, 1] the model answers OUT = IN[i], IDX = i.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"tritonhost/client"
)

func main() {
	url := flag.String("u", "localhost:8001", "server address")
	flag.Parse()
	if err := run(*url); err != nil {
		fmt.Fprintln(os.Stderr, "repeat_client:", err)
		os.Exit(1)
	}
}

func run(url string) error {
	const model = "repeat_int32"
	in := []int32{4, 2, 0, 1}
	conn, c, err := client.Dial(url, 0)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := client.OpenStream(ctx, c)
	if err != nil {
		return err
	}
	fmt.Println("stream started...")

	req := client.Request{Model: model, ID: "0", Outputs: []string{"OUT", "IDX"}, Inputs: []client.Tensor{
		client.Int32s("IN", []int64{int64(len(in))}, in...),
		client.Uint32s("DELAY", []int64{4}, 1, 2, 3, 4),
		client.Uint32s("WAIT", []int64{1}, 5),
	}}
	msg, err := req.Message()
	if err != nil {
		return err
	}
	fmt.Printf("async_stream_infer\n%s\n", client.Text(msg, ""))
	if err := stream.Send(req); err != nil {
		return err
	}
	fmt.Println("enqueued request 0 to stream...")
	if err := stream.CloseSend(); err != nil {
		return err
	}

	var outs []int32
	var idxs []uint32
	for {
		res, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if res.Err != nil {
			return fmt.Errorf("request %q: %w", res.ID, res.Err)
		}
		fmt.Printf("infer_response {\n%s}\n\n", client.Text(res.Response, "  "))
		out, err := client.Output(res.Response, "OUT")
		if err != nil {
			return err
		}
		idx, err := client.Output(res.Response, "IDX")
		if err != nil {
			return err
		}
		o, _ := out.AsInt32s()
		i, _ := idx.AsUint32s()
		outs, idxs = append(outs, o...), append(idxs, i...)
	}
	if !slices.Equal(outs, in) || !slices.Equal(idxs, []uint32{0, 1, 2, 3}) {
		return fmt.Errorf("got OUT %v IDX %v, want OUT %v IDX [0 1 2 3]", outs, idxs, in)
	}
	fmt.Println("PASS: " + model)
	fmt.Println("stream stopped...")
	return nil
}
