package core

import (
	"bytes"
	"slices"
	"testing"
)

// The entry format is the server's own (nothing outside reads it), so its
// tests are internal: a response survives the round trip, and decoding
// never trusts what a cache hands back.

func sampleResponse() *Response {
	return &Response{Outputs: []Output{
		{Name: "OUTPUT0", DataType: TypeInt32, Shape: []int64{2, 3}, Data: bytes.Repeat([]byte{1, 0, 0, 0}, 6)},
		{Name: "S", DataType: TypeBytes, Shape: []int64{1}, Data: EncodeBytes([]byte("hello"))},
		{Name: "empty", DataType: TypeFP32, Shape: []int64{0}, Data: nil},
		{Name: "scalar", DataType: TypeBool, Shape: []int64{}, Data: []byte{1}},
	}}
}

func encoded(resp *Response) []byte {
	buf := make([]byte, entrySize(resp))
	encodeEntry(buf, resp)
	return buf
}

func TestEntryRoundTrips(t *testing.T) {
	want := sampleResponse()
	got, err := decodeEntry(encoded(want))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Outputs) != len(want.Outputs) {
		t.Fatalf("%d outputs, want %d", len(got.Outputs), len(want.Outputs))
	}
	for i, o := range got.Outputs {
		w := want.Outputs[i]
		if o.Name != w.Name || o.DataType != w.DataType || !slices.Equal(o.Shape, w.Shape) || !bytes.Equal(o.Data, w.Data) {
			t.Errorf("output %d: %+v, want %+v", i, o, w)
		}
	}
}

func TestEntryRefusesWhatTheServerDidNotWrite(t *testing.T) {
	good := encoded(sampleResponse())
	for _, tt := range []struct {
		name  string
		entry []byte
	}{
		{"empty", nil},
		{"another magic", append([]byte("XXXX"), good[4:]...)},
		{"truncated by one byte", good[:len(good)-1]},
		{"one byte too many", append(slices.Clone(good), 0)},
		{"huge output count", append(slices.Clone(good[:4]), 0xff, 0xff, 0xff, 0x7f)},
	} {
		if _, err := decodeEntry(tt.entry); err == nil {
			t.Errorf("%s: decoded", tt.name)
		}
	}
	for cut := range good {
		if _, err := decodeEntry(good[:cut]); err == nil {
			t.Errorf("decoded the first %d of %d bytes", cut, len(good))
		}
	}
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(encoded(sampleResponse()))
	f.Add([]byte("THC1\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, entry []byte) {
		resp, err := decodeEntry(entry)
		if err != nil {
			return
		}
		if again := encoded(resp); !bytes.Equal(again, entry) {
			t.Errorf("an entry decoded but does not encode back to itself")
		}
	})
}
