package client_test

import (
	"context"
	"fmt"

	"github.com/tritonhost/tritonhost/client"
	"github.com/tritonhost/tritonhost/server"
)

// serve starts a server of examples/models on a free loopback port for
// the examples (in a checkout, after `make backends`), and returns its
// gRPC address and what stops it.
func serve() (addr string, stop func(), err error) {
	cfg := server.DefaultConfig()
	cfg.Models.Repositories = []string{"../examples/models"}
	cfg.Models.ControlMode = "explicit"
	cfg.Models.LoadModels = []string{"identity_int32", "repeat_int32"}
	cfg.Backends.Directory = "../backends"
	cfg.GRPC.Address, cfg.GRPC.Port = "127.0.0.1", 0
	cfg.HTTP.Allow, cfg.Metrics.Allow = false, false
	cfg.Log.Info = false
	cfg.GC.Unmanaged = true
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, cfg)
	if err != nil {
		cancel()
		return "", nil, err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	return srv.GRPCAddr().String(), func() {
		cancel()
		<-served
		_ = srv.Stop(context.Background())
	}, nil
}

// Example calls a model over gRPC: a request of typed tensors, the
// response's outputs back as Go values.
func Example() {
	addr, stop, err := serve()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	conn, c, err := client.Dial(addr, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	req, err := client.Request{
		Model:  "identity_int32",
		Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{4}, 7, 8, 9, 10)},
	}.Message()
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := c.ModelInfer(context.Background(), req)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := client.Output(resp, "OUTPUT0")
	if err != nil {
		fmt.Println(err)
		return
	}
	values, err := out.AsInt32s()
	fmt.Println(out.Name, out.Shape, values, err)
	// Output: OUTPUT0 [4] [7 8 9 10] <nil>
}

// ExampleOpenStream calls a decoupled model, which answers one request
// with several responses, on a stream: Recv returns them in order, the
// last one marked final.
func ExampleOpenStream() {
	addr, stop, err := serve()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	conn, c, err := client.Dial(addr, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	st, err := client.OpenStream(context.Background(), c)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = st.Send(client.Request{
		Model: "repeat_int32",
		ID:    "r1",
		Inputs: []client.Tensor{
			client.Int32s("IN", []int64{3}, 4, 5, 6),
			client.Uint32s("DELAY", []int64{3}, 0, 0, 0),
			client.Uint32s("WAIT", []int64{1}, 0),
		},
		Params: map[string]any{client.EmptyFinalParam: true},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		res, err := st.Recv()
		if err != nil || res.Err != nil {
			fmt.Println(err, res.Err)
			return
		}
		if out, err := client.Output(res.Response, "OUT"); err == nil {
			values, _ := out.AsInt32s()
			fmt.Println(res.ID, values)
		}
		if res.Final {
			fmt.Println(res.ID, "final")
			break
		}
	}
	// Output:
	// r1 [4]
	// r1 [5]
	// r1 [6]
	// r1 final
}
