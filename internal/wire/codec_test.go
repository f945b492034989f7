package wire

import (
	"errors"
	"math"
	"testing"
)

func TestFieldsReadBackInOrder(t *testing.T) {
	e := NewEncoder(nil)
	e.Uint(0)
	e.Uint(math.MaxUint64)
	e.Int(-5)
	e.Int(math.MinInt64)
	e.Bool(true)
	e.Bool(false)
	e.Float(-1.5)
	e.String("tensor")
	e.Blob([]byte{1, 2, 3})
	e.Blob(nil)
	d := NewDecoder(e.Bytes())
	if v := d.Uint(); v != 0 {
		t.Errorf("Uint = %d", v)
	}
	if v := d.Uint(); v != math.MaxUint64 {
		t.Errorf("Uint = %d", v)
	}
	if v := d.Int(); v != -5 {
		t.Errorf("Int = %d", v)
	}
	if v := d.Int(); v != math.MinInt64 {
		t.Errorf("Int = %d", v)
	}
	if !d.Bool() || d.Bool() {
		t.Error("Bool")
	}
	if v := d.Float(); v != -1.5 {
		t.Errorf("Float = %v", v)
	}
	if v := d.String(16); v != "tensor" {
		t.Errorf("String = %q", v)
	}
	if v := d.Blob(16); string(v) != "\x01\x02\x03" {
		t.Errorf("Blob = %v", v)
	}
	if v := d.Blob(16); len(v) != 0 {
		t.Errorf("empty Blob = %v", v)
	}
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
}

func TestMalformedMessagesFailOnce(t *testing.T) {
	long := NewEncoder(nil)
	long.String("0123456789")
	for _, tc := range []struct {
		name string
		msg  []byte
		read func(d *Decoder)
	}{
		{"empty", nil, func(d *Decoder) { d.Uint() }},
		{"varint cut short", []byte{0x80}, func(d *Decoder) { d.Uint() }},
		{"blob past the end", []byte{5, 1}, func(d *Decoder) { d.Blob(100) }},
		{"blob over its bound", long.Bytes(), func(d *Decoder) { d.String(4) }},
		{"count over its bound", []byte{200, 1}, func(d *Decoder) { d.Count(10) }},
		{"bad bool", []byte{2}, func(d *Decoder) { d.Bool() }},
		{"float cut short", []byte{1, 2, 3}, func(d *Decoder) { d.Float() }},
		{"left over", []byte{1, 2, 3}, func(d *Decoder) { d.Uint() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDecoder(tc.msg)
			tc.read(d)
			d.Uint() // reads after a failure return zero and keep the first error
			if err := d.Done(); !errors.Is(err, ErrMalformed) {
				t.Errorf("Done = %v, want ErrMalformed", err)
			}
		})
	}
}

// FuzzDecoder: any bytes, read as any sequence of fields, end in a clean
// error or a clean message; nothing panics, and no blob is larger than its
// bound.
func FuzzDecoder(f *testing.F) {
	e := NewEncoder(nil)
	e.Uint(3)
	e.String("INPUT0")
	e.Blob([]byte{1, 2, 3, 4})
	e.Int(-1)
	f.Add(e.Bytes(), []byte{0, 1, 2, 3, 4, 5})
	f.Add([]byte{0xff, 0xff, 0xff}, []byte{2, 2, 2})
	f.Fuzz(func(t *testing.T, msg, plan []byte) {
		d := NewDecoder(msg)
		for _, step := range plan {
			switch step % 7 {
			case 0:
				d.Uint()
			case 1:
				d.Int()
			case 2:
				if b := d.Blob(64); len(b) > 64 {
					t.Fatalf("blob of %d bytes past its bound", len(b))
				}
			case 3:
				d.Bool()
			case 4:
				d.Float()
			case 5:
				if n := d.Count(16); n > 16 {
					t.Fatalf("count %d past its bound", n)
				}
			case 6:
				d.String(8)
			}
		}
		_ = d.Done()
	})
}
