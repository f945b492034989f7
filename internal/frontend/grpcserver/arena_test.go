package grpcserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// squareResponse is a response the size of square's.
func squareResponse(v byte) *core.Response {
	return &core.Response{Outputs: []core.Output{{Name: "OUT", DataType: core.TypeInt32, Shape: []int64{1}, Data: []byte{v, 0, 0, 0}}}}
}

var squareHeader = responseHeader{model: "square_int32", version: "1", id: "7"}.withFields()

func TestArenaMessagesAllocateNothing(t *testing.T) {
	a := new(streamArena)
	resp := squareResponse(1)
	allocs := testing.AllocsPerRun(10000, func() {
		encodeIn(a, squareHeader, resp, notFinal, true, "").free()
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per small streamed message, want 0", allocs)
	}
	if n := a.inFlight(); n != 0 {
		t.Errorf("%d bytes in flight after every message was freed", n)
	}
}

func TestArenaKeepsEveryMessageIntactAcrossChunks(t *testing.T) {
	a := new(streamArena)
	const n = 3 * arenaChunkSegments // several chunks' worth
	var msgs []*encodedMessage
	var weight int64
	for i := range n {
		m := encodeIn(a, squareHeader, squareResponse(byte(i)), notFinal, true, "")
		weight += int64(m.bufs.Len() + messageHeaderBytes)
		msgs = append(msgs, m)
	}
	if got := a.inFlight(); got != weight {
		t.Fatalf("in flight %d, want %d", got, weight)
	}
	// Freed out of order, as gRPC may when a stream ends: every message
	// must still hold its own bytes until it is freed.
	for _, order := range [][2]int{{1, 2}, {0, 2}} {
		for i := order[0]; i < n; i += order[1] {
			got := new(pb.ModelStreamInferResponse)
			if err := proto.Unmarshal(msgs[i].bufs.Materialize(), got); err != nil {
				t.Fatal(err)
			}
			if v := got.GetInferResponse().GetRawOutputContents()[0][0]; v != byte(i) {
				t.Fatalf("message %d holds %d", i, v)
			}
			msgs[i].free()
		}
	}
	if got := a.inFlight(); got != 0 {
		t.Errorf("%d bytes in flight after every message was freed", got)
	}
	a.close()
}

// chunkOf returns the chunk that holds message m.
func chunkOf(t *testing.T, m *encodedMessage) *arenaChunk {
	t.Helper()
	s, ok := m.bufs[0].(*arenaSegment)
	if !ok {
		t.Fatalf("message buffer is a %T, not an arena segment", m.bufs[0])
	}
	return s.chunk
}

// A chunk goes back to the pool (its counts reset) when its last segment
// is handed back after it stopped being current, or when it stops being
// current after its last segment was handed back; never before both.
func TestArenaChunkGoesBackWhenRetiredAndEmpty(t *testing.T) {
	a := new(streamArena)
	var chunks []*arenaChunk
	byChunk := map[*arenaChunk][]*encodedMessage{}
	for len(chunks) < 3 {
		m := encodeIn(a, squareHeader, squareResponse(1), notFinal, true, "")
		c := chunkOf(t, m)
		if len(chunks) == 0 || chunks[len(chunks)-1] != c {
			chunks = append(chunks, c)
		}
		byChunk[c] = append(byChunk[c], m)
	}
	returned := func(c *arenaChunk) bool { return c.nsegs == 0 && c.live.Load() == 0 }
	first, current := chunks[0], chunks[2]
	held := byChunk[first]
	for _, m := range held[:len(held)-1] {
		m.free()
	}
	if returned(first) {
		t.Fatal("a retired chunk went back to the pool with a segment still out")
	}
	held[len(held)-1].free()
	if !returned(first) {
		t.Fatalf("a retired chunk did not go back once its last segment was handed back (live %d)", first.live.Load())
	}
	for _, m := range byChunk[current] {
		m.free()
	}
	if returned(current) {
		t.Fatal("the arena's current chunk went back to the pool")
	}
	for _, m := range byChunk[chunks[1]] {
		m.free()
	}
	a.close()
	if !returned(current) {
		t.Fatalf("the current chunk, empty, did not go back when the arena closed (live %d)", current.live.Load())
	}
	if got := a.inFlight(); got != 0 {
		t.Errorf("%d bytes in flight after every message was freed", got)
	}
}

func TestArenaIsSafeForConcurrentProducers(t *testing.T) {
	a := new(streamArena)
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				m := encodeIn(a, squareHeader, squareResponse(byte(p)), notFinal, true, "")
				got := new(pb.ModelStreamInferResponse)
				if err := proto.Unmarshal(m.bufs.Materialize(), got); err != nil || got.GetInferResponse().GetRawOutputContents()[0][0] != byte(p) {
					t.Errorf("producer %d, message %d: %v %v", p, i, err, got)
					return
				}
				m.free()
			}
		})
	}
	wg.Wait()
	if got := a.inFlight(); got != 0 {
		t.Errorf("%d bytes in flight after every message was freed", got)
	}
}

// arenaTestResponse is response i of TestGRPCFreesTheArenaSegments: its
// output's size varies with i, from one element to a message near
// arenaMaxMessageBytes, and its bytes with i.
func arenaTestResponse(i int) *core.Response {
	data := make([]byte, 4*(1+i%(arenaMaxMessageBytes/4-64)))
	for j := range data {
		data[j] = byte(i + j)
	}
	return &core.Response{Outputs: []core.Output{{Name: "OUT", DataType: core.TypeInt32, Shape: []int64{int64(len(data) / 4)}, Data: data}}}
}

// TestGRPCFreesTheArenaSegments sends an arena's messages through a real
// gRPC stream whose client window is small, so that many messages are cut
// across frames. Each must arrive as encoded (a segment handed back before
// gRPC wrote all of it would be overwritten by a later message), and once
// the client has read them all, gRPC must have freed every segment, or the
// arena could not tell when a stream is idle (sendHere). gRPC may call
// only mem.Buffer's exported methods on a segment: its unexported ones are
// a nil interface's, and panic.
func TestGRPCFreesTheArenaSegments(t *testing.T) {
	const count = 2000
	arenas := make(chan *streamArena, 1)
	desc := grpc.ServiceDesc{
		ServiceName: "arena.Test",
		HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{{StreamName: "Push", ServerStreams: true, Handler: func(_ any, stream grpc.ServerStream) error {
			a := new(streamArena)
			arenas <- a
			for i := range count {
				if err := stream.SendMsg(encodeIn(a, squareHeader, arenaTestResponse(i), notFinal, true, "")); err != nil {
					return err
				}
			}
			return nil
		}}},
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(grpc.ForceServerCodecV2(newWireCodec(requestLimits{maxMessageBytes: 1 << 20, maxDecodedContents: 1 << 20})))
	g.RegisterService(&desc, struct{}{})
	go g.Serve(lis)
	defer g.Stop()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStaticStreamWindowSize(64<<10), grpc.WithStaticConnWindowSize(64<<10),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(bytesCodec{})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := conn.NewStream(ctx, &desc.Streams[0], "/arena.Test/Push")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if i%500 == 0 {
			time.Sleep(20 * time.Millisecond) // the window fills: frames end where it does
		}
		var frame []byte
		err := s.RecvMsg(&frame)
		if errors.Is(err, io.EOF) {
			if i != count {
				t.Fatalf("%d messages, want %d", i, count)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		m := encodeIn(nil, squareHeader, arenaTestResponse(i), notFinal, true, "")
		want := m.bufs.Materialize()
		m.free()
		if !bytes.Equal(frame, want) {
			t.Fatalf("message %d: %d bytes differ from the %d encoded", i, len(frame), len(want))
		}
	}
	a := <-arenas
	testenv.WaitUntil(t, "gRPC to free every message the client has read", func() bool { return a.inFlight() == 0 })
}

// bytesCodec hands frames to the test as they are.
type bytesCodec struct{}

func (bytesCodec) Marshal(v any) (mem.BufferSlice, error) {
	switch v := v.(type) {
	case *[]byte:
		return mem.BufferSlice{mem.SliceBuffer(*v)}, nil
	}
	return nil, fmt.Errorf("bytesCodec: %T", v)
}

func (bytesCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (bytesCodec) Name() string { return "proto" }
