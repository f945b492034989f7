package httpserver_test

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
)

// rawRequest is an HTTP/1.1 infer request of body to model, as bytes, with
// the header of the binary tensor extension when headerLen > 0.
func rawRequest(model string, body []byte, headerLen int) []byte {
	b := []byte("POST /v2/models/" + model + "/infer HTTP/1.1\r\nHost: bench\r\nUser-Agent: Go-http-client/1.1\r\n")
	if headerLen > 0 {
		b = append(b, "Content-Type: application/octet-stream\r\n"+httpserver.HeaderContentLength+": "+strconv.Itoa(headerLen)+"\r\n"...)
	} else {
		b = append(b, "Content-Type: application/json\r\n"...)
	}
	b = append(b, "Content-Length: "+strconv.Itoa(len(body))+"\r\nAccept-Encoding: gzip\r\n\r\n"...)
	return append(b, body...)
}

// readRawResponse reads one response of known length from r into buf and
// returns its status.
func readRawResponse(r *bufio.Reader, buf []byte) (int, error) {
	status, length := 0, -1
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		switch {
		case status == 0 && len(line) >= 12:
			status, _ = strconv.Atoi(string(line[9:12]))
		case len(line) > 16 && bytes.EqualFold(line[:15], []byte("Content-Length:")):
			length, _ = strconv.Atoi(string(bytes.TrimSpace(line[15:])))
		}
	}
	if length < 0 || length > len(buf) {
		return status, strconv.ErrRange
	}
	_, err := r.Discard(length)
	return status, err
}

// BenchmarkInferLoopback serves infer requests of 16 INT32 values, as
// binary data and as JSON, over a loopback connection to the server's own
// http.Server (NewHTTPServer, Listen), from a client that writes prepared
// requests and allocates nothing: the allocations per operation are the
// server's, the whole of net/http included.
func BenchmarkInferLoopback(b *testing.B) {
	front := jsonEchoFrontend(b)
	head := `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[16],"parameters":{"binary_data_size":64}}],` +
		`"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`
	// Triton's HTTP clients name no outputs by default and ask for them
	// all as binary data with a request parameter instead.
	allBinary := `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[16],"parameters":{"binary_data_size":64}}],` +
		`"parameters":{"binary_data_output":true}}`
	for _, tc := range []struct {
		name string
		req  []byte
	}{
		{"binary", rawRequest("echo", append([]byte(head), make([]byte, 64)...), len(head))},
		{"JSON", rawRequest("echo", jsonInferBody("INT32", 16), 0)},
		{"binary-all-outputs", rawRequest("echo", append([]byte(allBinary), make([]byte, 64)...), len(allBinary))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			srv := front.NewHTTPServer()
			go srv.Serve(front.Listen(lis))
			defer srv.Close()
			conn, err := net.Dial("tcp", lis.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			r := bufio.NewReader(conn)
			buf := make([]byte, 4096)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := conn.Write(tc.req); err != nil {
					b.Fatal(err)
				}
				if status, err := readRawResponse(r, buf); err != nil || status != http.StatusOK {
					b.Fatalf("status %d, %v", status, err)
				}
			}
		})
	}
}
