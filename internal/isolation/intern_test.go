package isolation

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/wire"
)

// TestInternTableIsBounded: a table keeps the first of each short string
// and hands it out again, up to maxInterned strings; longer strings, and
// any past the bound, come back as copies that the table does not keep
// (a worker sending ever new names cannot grow it).
func TestInternTableIsBounded(t *testing.T) {
	tab := internTable{}
	first := tab.get([]byte("param0"))
	if again := tab.get([]byte("param0")); unsafe.StringData(again) != unsafe.StringData(first) {
		t.Error("a string the table holds was copied")
	}
	long := strings.Repeat("x", maxInternedBytes+1)
	if got := tab.get([]byte(long)); got != long || len(tab) != 1 {
		t.Errorf("a long string: %q, table of %d", got, len(tab))
	}
	for i := range 2 * maxInterned {
		if s := fmt.Sprint("name", i); tab.get([]byte(s)) != s {
			t.Fatalf("got a string other than %q", s)
		}
	}
	if len(tab) != maxInterned {
		t.Errorf("table of %d strings, want at most %d", len(tab), maxInterned)
	}
	var none internTable
	if got := none.get([]byte("param0")); got != "param0" {
		t.Errorf("a nil table: %q", got)
	}
}

// TestResponseParametersDecodeInPlace: a response's parameters read back
// whole, in the response's own memory when up to four, with the names and
// short values of an earlier response shared rather than copied; more
// than four read back whole too.
func TestResponseParametersDecodeInPlace(t *testing.T) {
	params := []core.Parameter{core.StringParam("param0", "an example string parameter"), core.IntParam("param1", 42), core.BoolParam("param2", false)}
	decode := func(t *testing.T, ps []core.Parameter, strs internTable) *decodedResponse {
		t.Helper()
		e := wire.NewEncoder(nil)
		if _, err := encodeResponse(e, 7, &core.Response{Outputs: []core.Output{{Name: "OUT", DataType: core.TypeInt32, Shape: []int64{1}, Data: []byte{1, 2, 3, 4}}}, Parameters: ps}, true); err != nil {
			t.Fatal(err)
		}
		d := wire.NewDecoder(e.Bytes())
		readHeader(d)
		key, dr, final := decodeResponse(d, &source{}, nil, strs)
		if err := d.Done(); err != nil || key != 7 || !final || dr == nil {
			t.Fatalf("decoded key %d, final %v, %v: %v", key, final, dr, err)
		}
		if !reflect.DeepEqual(dr.Parameters, ps) {
			t.Fatalf("parameters %+v, want %+v", dr.Parameters, ps)
		}
		return dr
	}
	strs := internTable{}
	a, b := decode(t, params, strs), decode(t, params, strs)
	if &a.Parameters[0] != &a.params[0] {
		t.Error("three parameters were not decoded into the response's room")
	}
	if unsafe.StringData(a.Parameters[0].Name) != unsafe.StringData(b.Parameters[0].Name) ||
		unsafe.StringData(a.Parameters[0].String) != unsafe.StringData(b.Parameters[0].String) {
		t.Error("the second response's parameter strings are copies")
	}
	many := append(params, core.IntParam("param3", 3), core.IntParam("param4", 4))
	if c := decode(t, many, strs); &c.Parameters[0] == &c.params[0] {
		t.Error("five parameters in room for four")
	}
}
