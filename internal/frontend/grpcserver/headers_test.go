package grpcserver_test

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// rawConn is an HTTP/2 client that writes the frames a test chooses, as a
// hostile client does, whatever the server announced.
type rawConn struct {
	conn    net.Conn
	fr      *http2.Framer // reads, and writes through written
	written countingWriter
	// quiet: another goroutine is writing, so frames read are not answered.
	quiet bool
}

func dialRaw(t *testing.T, h *harness) *rawConn {
	t.Helper()
	conn, err := h.lis.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(testenv.Patience))
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	r := &rawConn{conn: conn, written: countingWriter{w: conn}}
	r.fr = http2.NewFramer(&r.written, conn)
	r.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := r.fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return r
}

// headerBlock encodes the headers of a ServerLive call and extra fields,
// never indexed, so that the block reads the same on any connection.
func headerBlock(extra ...hpack.HeaderField) []byte {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	for _, f := range append([]hpack.HeaderField{
		{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
		{Name: ":path", Value: "/inference.GRPCInferenceService/ServerLive"}, {Name: ":authority", Value: "test"},
		{Name: "content-type", Value: "application/grpc"}, {Name: "te", Value: "trailers"},
	}, extra...) {
		f.Sensitive = true
		_ = enc.WriteField(f)
	}
	return buf.Bytes()
}

// call sends a ServerLive call on stream id with the header block, split
// into a HEADERS and CONTINUATION frames of at most 16 KiB, and an empty
// request message. It returns the first error writing.
func (r *rawConn) call(id uint32, block []byte) error {
	const maxFrame = 16 << 10
	first := block[:min(len(block), maxFrame)]
	rest := block[len(first):]
	if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: first, EndHeaders: len(rest) == 0}); err != nil {
		return err
	}
	for len(rest) > 0 {
		n := min(len(rest), maxFrame)
		if err := r.fr.WriteContinuation(id, n == len(rest), rest[:n]); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return r.fr.WriteData(id, true, []byte{0, 0, 0, 0, 0})
}

// outcome reads frames until stream id is answered or reset, or the
// connection ends, and describes what happened: "grpc-status 0",
// "reset FRAME_SIZE_ERROR", "GOAWAY ...", "closed".
func (r *rawConn) outcome(id uint32) string {
	goaway := ""
	for {
		f, err := r.fr.ReadFrame()
		if err != nil {
			if goaway != "" {
				return goaway
			}
			return "closed"
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() && !r.quiet {
				_ = r.fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() && !r.quiet {
				_ = r.fr.WritePing(true, f.Data)
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				return "reset " + f.ErrCode.String()
			}
		case *http2.GoAwayFrame:
			goaway = "GOAWAY " + f.ErrCode.String()
		case *http2.MetaHeadersFrame:
			if v := f.PseudoValue("status"); f.StreamID == id && v == "" {
				for _, hf := range f.RegularFields() {
					if hf.Name == "grpc-status" {
						return "grpc-status " + hf.Value
					}
				}
			}
		}
	}
}

// TestHeaderListsPastTheLimitAreRefused: the server announces
// MaxHeaderListBytes; a gRPC client refuses by itself to send more; a
// client that sends more anyway has that call reset while the connection
// serves its next call; and one header longer than the limit, sent across
// CONTINUATION frames (15 MB of it), ends the connection once the server
// has read about the limit, not the 15 MB.
func TestHeaderListsPastTheLimitAreRefused(t *testing.T) {
	t.Parallel()
	const limit = 4 << 10
	h := newHarness(t, setup{service: grpcserver.Options{Connection: grpcserver.ConnectionLimits{MaxHeaderListBytes: limit}}},
		coretest.ModelDir{Name: "echo", Config: vector("")})
	ctx := t.Context()

	within := metadata.AppendToOutgoingContext(ctx, "x-within", strings.Repeat("a", limit/2))
	if _, err := h.client.ServerLive(within, &pb.ServerLiveRequest{}); err != nil {
		t.Fatalf("a call with %d bytes of metadata: %v", limit/2, err)
	}
	past := metadata.AppendToOutgoingContext(ctx, "x-past", strings.Repeat("a", 2*limit))
	_, err := h.client.ServerLive(past, &pb.ServerLiveRequest{})
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "4096 bytes") {
		t.Errorf("a gRPC call with %d bytes of metadata: %v; want it refused for the server's limit of %d bytes", 2*limit, err, limit)
	}

	raw := dialRaw(t, h)
	var many []hpack.HeaderField
	for range 32 {
		many = append(many, hpack.HeaderField{Name: "x-many", Value: strings.Repeat("b", 256)})
	}
	if err := raw.call(1, headerBlock(many...)); err != nil {
		t.Fatal(err)
	}
	if got := raw.outcome(1); got != "reset FRAME_SIZE_ERROR" {
		t.Errorf("a call with 32 headers of 256 bytes (past %d bytes): %s, want it reset with FRAME_SIZE_ERROR", limit, got)
	}
	if err := raw.call(3, headerBlock()); err != nil {
		t.Fatal(err)
	}
	if got := raw.outcome(3); got != "grpc-status 0" {
		t.Errorf("the next call on the connection: %s, want it served (grpc-status 0)", got)
	}

	raw = dialRaw(t, h)
	raw.quiet = true
	huge := headerBlock(hpack.HeaderField{Name: "x-huge", Value: strings.Repeat("c", 15<<20)})
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		_ = raw.call(5, huge) // fails once the server has closed the connection
	}()
	got := raw.outcome(5)
	raw.conn.Close()
	<-sent
	if !strings.HasPrefix(got, "GOAWAY") && got != "closed" {
		t.Errorf("a header of 15 MB: %s, want the connection ended", got)
	}
	// The client could write what the server read, plus what the
	// in-memory connection buffers (1 MiB).
	if n := raw.written.n; n > 4<<20 {
		t.Errorf("the client wrote %d bytes of a 15 MB header before the connection ended", n)
	}
	t.Logf("a header of 15 MB: %s after the client wrote %d bytes", got, raw.written.n)
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
