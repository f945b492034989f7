// Package streamdemo is what the example clients share: the -u flag, one
// gRPC stream to the server, and requests and responses printed as Triton's
// Python decoupled examples print them.
package streamdemo

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// Main parses the command line, opens a stream to the server and runs run
// on it; an error is printed after name and ends the process with status 1.
func Main(name string, run func(*Stream) error) {
	url := flag.String("u", "localhost:8001", "server address")
	flag.Parse()
	if err := open(*url, run); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Stream is an open stream to the server, closed when run returns.
type Stream struct {
	s *client.Stream
}

func open(url string, run func(*Stream) error) error {
	conn, c, err := client.Dial(url, 0)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := client.OpenStream(ctx, c)
	if err != nil {
		return err
	}
	fmt.Println("stream started...")
	if err := run(&Stream{s: s}); err != nil {
		return err
	}
	fmt.Println("stream stopped...")
	return nil
}

// Send prints the request and sends it.
func (st *Stream) Send(req client.Request) error {
	msg, err := req.Message()
	if err != nil {
		return err
	}
	fmt.Printf("async_stream_infer\n%s\n", client.Text(msg, ""))
	if err := st.s.Send(req); err != nil {
		return err
	}
	fmt.Printf("enqueued request %s to stream...\n", req.ID)
	return nil
}

// Receive says the client has sent everything, then prints every response
// and hands it to fn, until the server ends the stream. An error response
// stops it.
func (st *Stream) Receive(fn func(id string, resp *pb.ModelInferResponse) error) error {
	if err := st.s.CloseSend(); err != nil {
		return err
	}
	for {
		res, err := st.s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if res.Err != nil {
			return fmt.Errorf("request %q: %w", res.ID, res.Err)
		}
		fmt.Printf("infer_response {\n%s}\n\n", client.Text(res.Response, "  "))
		if err := fn(res.ID, res.Response); err != nil {
			return err
		}
	}
}
