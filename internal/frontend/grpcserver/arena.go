package grpcserver

import (
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/mem"
)

// The messages of a stream live in its arena: the bytes of many small
// messages share one chunk, and the chunk goes back to a pool once gRPC has
// written every one of them, so a stream of small responses allocates
// nothing per response. gRPC counts references only to buffers whose
// capacity is above its pooling threshold (1 KiB) and hands those back to
// their pool once its transport wrote them (or dropped them with the
// stream); a message's buffer is therefore a slice of its chunk whose
// capacity runs to the chunk's end, however few bytes it holds, and its
// segment is the pool that gRPC hands it back to.
//
// The arena also knows how many bytes of the stream gRPC holds: a message
// counts in flight from its encoding until gRPC hands back its last
// buffer, which happens after its transport wrote the message's last byte
// to the connection. That bounds what gRPC's per-stream write quota
// (defaultWriteQuota, 64 KiB, in google.golang.org/grpc/internal/transport)
// has given out: when nothing else is in flight, SendMsg finds the whole
// quota free and does not wait (stream.go's sendHere relies on it).
// grpcassumptions_test.go fails if a grpc-go upgrade changes the quota or
// the pooling threshold.
//
// gRPC does not hand back the buffers of frames still queued when a
// connection breaks; their chunks are then left to the garbage collector.

const (
	// arenaChunkBytes is the memory of one chunk; a message whose own bytes
	// (everything but the large outputs it refers to) exceed
	// arenaMaxMessageBytes gets memory of its own instead.
	arenaChunkBytes      = 16 << 10
	arenaMaxMessageBytes = 4 << 10
	// arenaChunkSegments is how many messages one chunk holds at most.
	arenaChunkSegments = 256
	// messageHeaderBytes is gRPC's prefix of each message (flag and
	// length), which its write quota counts.
	messageHeaderBytes = 5
)

// streamArena hands out the memory of one stream's messages. Safe for
// concurrent use: backend threads encode responses of the stream at once.
type streamArena struct {
	mu       sync.Mutex
	cur      *arenaChunk  // the chunk segments come from; nil before the first
	inFlight atomic.Int64 // bytes of messages encoded and not yet handed back
}

// arenaChunk is memory shared by the segments of many messages.
type arenaChunk struct {
	mem   []byte
	off   int          // bytes handed out (under the arena's mu)
	nsegs int          // segments handed out (under the arena's mu)
	live  atomic.Int32 // segments not handed back, plus one while the chunk is its arena's current
	segs  [arenaChunkSegments]arenaSegment
}

// arenaSegment is one message of a chunk: its encodedMessage and the
// buffer gRPC sends and hands back. It is the buffer's mem.BufferPool.
type arenaSegment struct {
	msg    encodedMessage
	data   []byte // the buffer's bytes; mem.NewBuffer keeps a pointer to this field
	chunk  *arenaChunk
	arena  *streamArena
	weight int64 // what the message counts in its arena's inFlight
	done   atomic.Bool
}

var chunkPool = sync.Pool{New: func() any { return &arenaChunk{mem: make([]byte, arenaChunkBytes)} }}

// fits reports whether the chunk can give n bytes whose buffer gRPC will
// hand back: its capacity, to the chunk's end, stays above the threshold.
func (c *arenaChunk) fits(n int) bool {
	return c.nsegs < len(c.segs) && c.off+n <= len(c.mem) && !mem.IsBelowBufferPoolingThreshold(len(c.mem)-c.off)
}

// segment returns a segment of n bytes (n <= arenaMaxMessageBytes; 0 for a
// marker that only tells when the message was written), counting weight
// bytes in flight until gRPC, or free, hands it back.
func (a *streamArena) segment(n int, weight int64) *arenaSegment {
	a.mu.Lock()
	c := a.cur
	if c == nil || !c.fits(n) {
		if c != nil {
			c.release() // no longer current
		}
		c = chunkPool.Get().(*arenaChunk)
		c.live.Store(1)
		a.cur = c
	}
	s := &c.segs[c.nsegs]
	c.nsegs++
	s.data = c.mem[c.off : c.off+n : len(c.mem)]
	c.off += n
	c.live.Add(1)
	a.mu.Unlock()
	s.chunk, s.arena, s.weight = c, a, weight
	s.done.Store(false)
	a.inFlight.Add(weight)
	return s
}

// buffer returns the gRPC buffer over the segment's first n bytes (n at
// most the size it was made with).
func (s *arenaSegment) buffer(n int) mem.Buffer {
	s.data = s.data[:n]
	return mem.NewBuffer(&s.data, s)
}

// Get is never called: gRPC takes buffers from a pool only to copy into
// them, and a message's buffers are never copied into. It allocates, as a
// pool must.
func (s *arenaSegment) Get(length int) *[]byte {
	b := make([]byte, length)
	return &b
}

// Put hands the segment back: gRPC is done with its buffer (or the message
// was freed unsent).
func (s *arenaSegment) Put(*[]byte) {
	if s.done.Swap(true) {
		return
	}
	a, c := s.arena, s.chunk
	s.msg = encodedMessage{}
	s.data, s.chunk, s.arena = nil, nil, nil
	a.inFlight.Add(-s.weight)
	c.release()
}

// release drops one reference to the chunk; the last sends it back to the
// pool.
func (c *arenaChunk) release() {
	if c.live.Add(-1) == 0 {
		c.off, c.nsegs = 0, 0
		chunkPool.Put(c)
	}
}

// close lets go of the current chunk when the stream ends; its segments
// still out come back as gRPC hands them back.
func (a *streamArena) close() {
	a.mu.Lock()
	c := a.cur
	a.cur = nil
	a.mu.Unlock()
	if c != nil {
		c.release()
	}
}
