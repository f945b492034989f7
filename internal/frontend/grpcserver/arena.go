package grpcserver

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/cpu"
	"google.golang.org/grpc/mem"
)

// The messages of a stream live in its arena: the bytes of many small
// messages share one chunk, and the chunk goes back to a pool once gRPC has
// written every one of them, so a stream of small responses allocates
// nothing per response. A message's segment is itself the mem.Buffer gRPC
// sends: gRPC counts its references (Ref, Free) and frees it once its
// transport wrote it (or dropped it with the stream), which hands the
// segment back. gRPC's own buffers (mem.NewBuffer) would cost a pooled
// object per message, which one processor takes and another frees.
//
// mem.Buffer has two unexported methods, which gRPC calls only on the
// buffers it reads from a connection (the receiving side); a segment gets
// them by embedding the interface, left nil, so that a call panics rather
// than reading a segment the wrong way. TestGRPCFreesTheArenaSegments
// (arena_test.go) sends segments through a real gRPC stream, so that a
// grpc-go upgrade that calls them on the sending side fails there.
//
// The arena also knows how many bytes of the stream gRPC holds: a message
// counts in flight from its encoding until gRPC frees its last buffer,
// which happens after its transport wrote the message's last byte to the
// connection. That bounds what gRPC's per-stream write quota
// (defaultWriteQuota, 64 KiB, in google.golang.org/grpc/internal/transport)
// has given out: when nothing else is in flight, SendMsg finds the whole
// quota free and does not wait (stream.go's sendHere relies on it).
// grpcassumptions_test.go fails if a grpc-go upgrade changes the quota.
//
// gRPC does not free the buffers of frames still queued when a connection
// breaks; their chunks are then left to the garbage collector.

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
// What is in flight is two counts, each written on one side only and kept
// on cache lines of their own (cpu.CacheLinePad): the bytes encoded, by
// the producers on one core, and the bytes handed back, by gRPC's writer
// on another. A line both sides wrote would move between the cores with
// every message.
type streamArena struct {
	mu      sync.Mutex
	cur     *arenaChunk  // the chunk segments come from; nil before the first
	encoded atomic.Int64 // bytes of messages encoded; stored under mu
	_       cpu.CacheLinePad
	freed   atomic.Int64 // bytes of messages handed back
}

// inFlight returns the bytes of messages encoded and not yet handed back,
// or more, never less: the two counts are read one after the other, the
// bytes handed back first, so that messages encoded and handed back in
// between count as in flight.
func (a *streamArena) inFlight() int64 {
	freed := a.freed.Load()
	return a.encoded.Load() - freed
}

// arenaChunk is memory shared by the segments of many messages.
//
// live counts the segments not yet handed back, without a write per
// segment handed out: while the chunk is its arena's current, each segment
// handed back subtracts one, so that live is 0 or less; when the chunk
// stops being current, the number handed out is added. Whoever brings it
// to 0 from then on puts the chunk back in the pool.
type arenaChunk struct {
	mem   []byte
	off   int // bytes handed out (under the arena's mu)
	nsegs int // segments handed out (under the arena's mu)
	_     cpu.CacheLinePad
	live  atomic.Int32
	_     cpu.CacheLinePad
	segs  [arenaChunkSegments]arenaSegment
}

// arenaSegment is one message of a chunk: its encodedMessage, and the
// buffer gRPC sends and frees (the segment itself, from buffer on).
type arenaSegment struct {
	mem.Buffer // nil: only its unexported methods are promoted (see above)
	refs       atomic.Int32
	msg        encodedMessage
	data       []byte // the buffer's bytes
	chunk      *arenaChunk
	arena      *streamArena
	weight     int64 // what the message counts in its arena's inFlight
}

var _ mem.Buffer = (*arenaSegment)(nil)

var chunkPool = sync.Pool{New: func() any { return &arenaChunk{mem: make([]byte, arenaChunkBytes)} }}

// fits reports whether the chunk can give a segment of n bytes.
func (c *arenaChunk) fits(n int) bool {
	return c.nsegs < len(c.segs) && c.off+n <= len(c.mem)
}

// segment returns a segment of n bytes (n <= arenaMaxMessageBytes; 0 for a
// marker that only tells when the message was written), counting weight
// bytes in flight until gRPC, or free, frees its buffer.
func (a *streamArena) segment(n int, weight int64) *arenaSegment {
	a.mu.Lock()
	c := a.cur
	if c == nil || !c.fits(n) {
		if c != nil {
			c.retire()
		}
		c = chunkPool.Get().(*arenaChunk)
		a.cur = c
	}
	s := &c.segs[c.nsegs]
	c.nsegs++
	s.data = c.mem[c.off : c.off+n : c.off+n]
	c.off += n
	a.encoded.Store(a.encoded.Load() + weight)
	a.mu.Unlock()
	s.chunk, s.arena, s.weight = c, a, weight
	return s
}

// buffer returns the segment as the gRPC buffer over its first n bytes (n
// at most the size it was made with), holding one reference: the
// message's, which gRPC frees once it sent the message, or free does for
// a message never sent.
func (s *arenaSegment) buffer(n int) mem.Buffer {
	s.data = s.data[:n]
	s.refs.Store(1)
	return s
}

// ReadOnlyData returns the buffer's bytes.
func (s *arenaSegment) ReadOnlyData() []byte {
	if s.refs.Load() <= 0 {
		panic("grpcserver: read of a freed arena segment")
	}
	return s.data
}

// Ref adds a reference to the buffer.
func (s *arenaSegment) Ref() {
	if s.refs.Add(1) <= 1 {
		panic("grpcserver: reference to a freed arena segment")
	}
}

// Free drops a reference to the buffer; the last hands the segment back:
// gRPC is done with it (or the message was freed unsent).
func (s *arenaSegment) Free() {
	switch n := s.refs.Add(-1); {
	case n < 0:
		panic("grpcserver: arena segment freed twice")
	case n > 0:
		return
	}
	a, c := s.arena, s.chunk
	s.msg = encodedMessage{}
	s.data, s.chunk, s.arena = nil, nil, nil
	a.freed.Add(s.weight)
	c.handBack(1)
}

// Len returns the buffer's length.
func (s *arenaSegment) Len() int { return len(s.ReadOnlyData()) }

// Slice returns a buffer of bytes start to end of the segment's, the
// segment itself when that is all of them. A part is copied: gRPC does
// not take parts of the buffers it sends, so this is not a path that
// needs to be fast.
func (s *arenaSegment) Slice(start, end int) mem.Buffer {
	data := s.ReadOnlyData()[start:end]
	if len(data) == len(s.data) {
		s.Ref()
		return s
	}
	return mem.Copy(data, mem.DefaultBufferPool())
}

// retire ends the chunk's time as its arena's current (under the arena's
// mu): it counts the segments handed out (see arenaChunk.live).
func (c *arenaChunk) retire() { c.handBack(-c.nsegs) }

// handBack subtracts n segments from those not yet handed back; the last
// sends the chunk back to the pool.
func (c *arenaChunk) handBack(n int) {
	if c.live.Add(-int32(n)) == 0 {
		c.off, c.nsegs = 0, 0
		chunkPool.Put(c)
	}
}

// close lets go of the current chunk when the stream ends; its segments
// still out come back as gRPC hands them back.
func (a *streamArena) close() {
	a.mu.Lock()
	if c := a.cur; c != nil {
		a.cur = nil
		c.retire()
	}
	a.mu.Unlock()
}
