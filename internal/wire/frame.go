package wire

import (
	"encoding/binary"
	"fmt"
)

// A datagram carries one message or several, each framed as the number of
// descriptors it brings (an unsigned varint), its length (an unsigned
// varint) and its bytes. The descriptors beside a datagram belong to its
// messages in order. A side that is behind thus sends, and the other
// reads, several messages per system call and wake-up (Conn.Send).

// frameOverhead bounds the bytes a frame adds to its message.
const frameOverhead = 2 * binary.MaxVarintLen64

// MaxDatagram is the largest datagram a Conn sends: one message of
// MaxMessage bytes, framed. A receive buffer of this size holds any.
const MaxDatagram = MaxMessage + frameOverhead

// AppendFrame appends msg, framed, to dst; it brings nfds descriptors.
func AppendFrame(dst, msg []byte, nfds int) []byte {
	dst = binary.AppendUvarint(dst, uint64(nfds))
	dst = binary.AppendUvarint(dst, uint64(len(msg)))
	return append(dst, msg...)
}

// Frame is one message of a datagram and the descriptors it brings.
type Frame struct {
	Msg   []byte
	Files []int
}

// SplitFrames checks the whole datagram dgram and the descriptors fds that
// came with it, and appends its messages to dst (each aliasing dgram, with
// its share of fds). A datagram whose frames do not parse, or do not
// account for exactly its descriptors, is malformed: SplitFrames then
// closes every descriptor and returns ErrMalformed, with nothing appended.
func SplitFrames(dst []Frame, dgram []byte, fds []int) ([]Frame, error) {
	want := 0
	for rest := dgram; len(rest) > 0; {
		nfds, _, next, err := nextFrame(rest)
		if err != nil {
			closeAll(fds)
			return dst, err
		}
		if nfds > uint64(MaxFiles) || want+int(nfds) > len(fds) {
			closeAll(fds)
			return dst, fmt.Errorf("%w: frames bringing more than the %d descriptors beside them", ErrMalformed, len(fds))
		}
		want += int(nfds)
		rest = next
	}
	if want != len(fds) || len(dgram) == 0 {
		closeAll(fds)
		return dst, fmt.Errorf("%w: %d descriptors beside frames that bring %d", ErrMalformed, len(fds), want)
	}
	for rest := dgram; len(rest) > 0; {
		nfds, msg, next, _ := nextFrame(rest)
		dst = append(dst, Frame{Msg: msg, Files: fds[:nfds:nfds]})
		fds = fds[nfds:]
		rest = next
	}
	return dst, nil
}

// nextFrame reads the frame at the start of b.
func nextFrame(b []byte) (nfds uint64, msg, rest []byte, err error) {
	nfds, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, nil, nil, fmt.Errorf("%w: a frame's descriptor count does not parse", ErrMalformed)
	}
	b = b[k:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return 0, nil, nil, fmt.Errorf("%w: a frame's length does not parse, or runs past the datagram", ErrMalformed)
	}
	b = b[k:]
	return nfds, b[:n:n], b[n:], nil
}
