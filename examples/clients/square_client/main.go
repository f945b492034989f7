// Command square_client sends four requests (IN = 4, 2, 0, 1) to the
// decoupled square_int32 model on one gRPC stream, prints the responses as
// they arrive, tied to their requests by id, and checks that request i got
// IN[i] responses, each with OUT = IN[i].
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"time"

	"tritonhost/client"
)

func main() {
	url := flag.String("u", "localhost:8001", "server address")
	flag.Parse()
	if err := run(*url); err != nil {
		fmt.Fprintln(os.Stderr, "square_client:", err)
		os.Exit(1)
	}
}

func run(url string) error {
	const model = "square_int32"
	values := []int32{4, 2, 0, 1}
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
	for i, v := range values {
		req := client.Request{Model: model, ID: strconv.Itoa(i), Outputs: []string{"OUT"},
			Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, v)}}
		msg, err := req.Message()
		if err != nil {
			return err
		}
		fmt.Printf("async_stream_infer\n%s\n", client.Text(msg, ""))
		if err := stream.Send(req); err != nil {
			return err
		}
		fmt.Printf("enqueued request %d to stream...\n", i)
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}

	got := map[string]int{}
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
		i, err := strconv.Atoi(res.ID)
		if err != nil || i < 0 || i >= len(values) {
			return fmt.Errorf("response for unknown request id %q", res.ID)
		}
		out, err := client.Output(res.Response, "OUT")
		if err != nil {
			return err
		}
		if o, _ := out.AsInt32s(); len(o) != 1 || o[0] != values[i] {
			return fmt.Errorf("request %s: OUT = %v, want [%d]", res.ID, o, values[i])
		}
		got[res.ID]++
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
	fmt.Println("stream stopped...")
	return nil
}
