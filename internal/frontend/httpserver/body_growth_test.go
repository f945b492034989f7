package httpserver

import (
	"bytes"
	"testing"
	"testing/iotest"
)

// TestBodyBufferFollowsBytesReceived: the buffer readGrowing reads a body
// into holds at most four times what arrived (twice without a declared
// length), however much was declared, and a whole body of the declared
// length is read whole.
func TestBodyBufferFollowsBytesReceived(t *testing.T) {
	const maxBytes = 256 << 20
	for _, tc := range []struct {
		name     string
		declared int64
		sent     int
		maxCap   int
	}{
		{"promise of 250 MiB, 4 bytes sent", 250 << 20, 4, firstBodyBuffer},
		{"promise of 250 MiB, 1 MiB sent", 250 << 20, 1 << 20, 4 << 20},
		{"whole body of 16 MiB", 16 << 20, 16 << 20, 16<<20 + 1},
		{"no length, 3 MiB sent", -1, 3 << 20, 6 << 20},
		{"no length, 100 bytes sent", -1, 100, firstBodyBuffer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := bytes.Repeat([]byte{'x'}, tc.sent)
			// Short reads, as a network gives them.
			got, err := readGrowing(iotest.HalfReader(bytes.NewReader(body)), tc.declared, maxBytes)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, body) {
				t.Fatalf("read %d bytes, want the %d sent", len(got), tc.sent)
			}
			if cap(got) > tc.maxCap {
				t.Errorf("buffer of %d bytes for %d received, want at most %d", cap(got), tc.sent, tc.maxCap)
			}
		})
	}
}
