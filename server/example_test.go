package server_test

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/client"
	"github.com/tritonhost/tritonhost/server"
)

// Example embeds a server in a Go program: the serve command's defaults,
// one model of examples/models loaded at start, gRPC alone on a free
// loopback port. The program calls the model over gRPC with package
// client, then stops the server. (It runs in a checkout after `make
// backends`, which builds the identity backend into backends/.)
func Example() {
	cfg := server.DefaultConfig()
	cfg.Models.Repositories = []string{"../examples/models"}
	cfg.Models.ControlMode = "explicit"
	cfg.Models.LoadModels = []string{"identity_int32"}
	cfg.Backends.Directory = "../backends"
	cfg.GRPC.Address, cfg.GRPC.Port = "127.0.0.1", 0
	cfg.HTTP.Allow, cfg.Metrics.Allow = false, false
	cfg.Log.Info = false
	cfg.GC.Unmanaged = true // this program keeps its own garbage collector settings

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := server.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()

	conn, grpcClient, err := client.Dial(srv.GRPCAddr().String(), 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	req, err := client.Request{Model: "identity_int32", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{3}, 1, 2, 3)}}.Message()
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := grpcClient.ModelInfer(ctx, req)
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
	fmt.Println(values, err)

	cancel() // Serve returns
	if err := <-served; err != nil {
		fmt.Println(err)
	}
	if err := srv.Stop(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output: [1 2 3] <nil>
}

// ExampleConfig_BindFlags gives a program the serve command's flags, bound
// to a Config: parsing the command line sets it, and Validate checks it
// as New will, naming the flag at fault.
func ExampleConfig_BindFlags() {
	cfg := server.DefaultConfig()
	flags := pflag.NewFlagSet("myserver", pflag.ContinueOnError)
	cfg.BindFlags(flags)
	if err := flags.Parse([]string{"--model-repository", "../examples/models", "--grpc-port", "9001", "--http-port=-1"}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Models.Repositories, cfg.GRPC.Port)
	fmt.Println(cfg.Validate())
	// Output:
	// [../examples/models] 9001
	// --http-port -1 is out of range
}
