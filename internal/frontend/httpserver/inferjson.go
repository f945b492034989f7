package httpserver

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// The JSON part of an infer request is decoded in one pass over its bytes
// when it has the form Triton's clients send: member names as the fields
// are spelled, each at most once, strings without escapes, shapes of
// plain integers, no nulls. encoding/json walks the same bytes several
// times (once to check them, once more for each value an UnmarshalJSON
// method decodes on its own) and reflects on every member. Anything else
// (a name in another case, an escape, a value of an unexpected type,
// invalid JSON...) is left to encoding/json, which decodes or refuses it
// as it always has: the single pass only ever decodes what encoding/json
// would, to the same values.

// maxFastDepth is the deepest nesting of arrays and objects the single
// pass checks; a deeper value is left to encoding/json, with its own
// bound.
const maxFastDepth = 64

// decodeInferJSON decodes header, the JSON part of an infer request, into
// rj, in one pass when it can, or else with encoding/json. The single
// pass keeps what it decodes in mem where it fits (nil: it allocates), and
// a tensor name that is one of m's inputs or outputs (m nil: none) shares
// the configuration's string rather than a copy.
func decodeInferJSON(header []byte, rj *inferRequestJSON, mem *inferMemory, m *core.Model) error {
	d := inferDecoder{b: header, mem: mem, model: m}
	if d.request(rj) {
		return nil
	}
	slow := new(inferRequestJSON) // rj, which json.Unmarshal would take to the heap, stays on its caller's stack
	err := json.Unmarshal(header, slow)
	*rj = *slow
	return err
}

// inferDecoder is the single pass: each method returns false for anything
// it leaves to encoding/json.
type inferDecoder struct {
	b     []byte
	i     int
	mem   *inferMemory // nil: allocate
	model *core.Model  // whose tensor names a request's share; nil: none
}

// inferMemory holds what the single pass decodes from a request of up to
// two inputs of up to four dimensions and two outputs, in the allocation
// of the request's inferCall (the inputs' shapes become the request's);
// what is larger is allocated.
type inferMemory struct {
	inputs  [2]inputJSON
	outputs [2]outputJSON
	dims    [2][4]int64
	shapes  int // dims taken
}

func (d *inferDecoder) space() { d.i = skipSpace(d.b, d.i) }

// peek skips white space and returns the byte there (0 at the end).
func (d *inferDecoder) peek() byte {
	d.space()
	if d.i >= len(d.b) {
		return 0
	}
	return d.b[d.i]
}

// take skips white space and the byte c, reporting whether it was there.
func (d *inferDecoder) take(c byte) bool {
	if d.peek() != c {
		return false
	}
	d.i++
	return true
}

// request decodes the whole of the JSON part: one object, then only white
// space.
func (d *inferDecoder) request(rj *inferRequestJSON) bool {
	ok := d.members(func(k int) bool {
		switch k {
		case 0:
			return d.str(&rj.ID)
		case 1:
			return d.params(&rj.Parameters)
		case 2:
			return d.inputs(&rj.Inputs)
		default:
			return d.outputs(&rj.Outputs)
		}
	}, "id", "parameters", "inputs", "outputs")
	d.space()
	return ok && d.i == len(d.b)
}

// members decodes an object whose members named fields (at most 64) each
// appear at most once, calling member with the index of each such member
// it meets; members of other names are skipped, and a name fieldIndex
// cannot tell apart fails the decoding.
func (d *inferDecoder) members(member func(k int) bool, fields ...string) bool {
	var seen uint64
	return d.object(func(name []byte) bool {
		switch k := fieldIndex(name, fields...); k {
		case -2:
			return false
		case -1:
			return d.skip(0)
		default:
			if seen&(1<<k) != 0 {
				return false
			}
			seen |= 1 << k
			return member(k)
		}
	})
}

// fieldIndex finds name, a member's quoted name, among fields: its index,
// -1 for a name that is none of them in any case, or -2 for one the single
// pass leaves to encoding/json (an escape, a byte past ASCII, which
// encoding/json may fold onto a field, or a field in another case).
func fieldIndex(quoted []byte, fields ...string) int {
	name := quoted[1 : len(quoted)-1]
	for k, f := range fields { // the same bytes hold no escape and no byte past ASCII
		if string(name) == f {
			return k
		}
	}
	for _, c := range name {
		if c == '\\' || c >= utf8.RuneSelf {
			return -2
		}
	}
	for _, f := range fields {
		if len(f) == len(name) && equalFoldASCII(f, name) {
			return -2
		}
	}
	return -1
}

// equalFoldASCII compares ASCII letters without case.
func equalFoldASCII(a string, b []byte) bool {
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// object walks the object at the decoder, calling member with each quoted
// name once the decoder is at its value; member takes the value.
func (d *inferDecoder) object(member func(name []byte) bool) bool {
	if !d.take('{') {
		return false
	}
	if d.take('}') {
		return true
	}
	for {
		if d.peek() != '"' {
			return false
		}
		start := d.i
		if !d.skipString() {
			return false
		}
		name := d.b[start:d.i]
		if !d.take(':') || !member(name) {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return true
		default:
			return false
		}
	}
}

// array walks the array at the decoder, calling elem at each element;
// elem takes it.
func (d *inferDecoder) array(elem func() bool) bool {
	if !d.take('[') {
		return false
	}
	if d.take(']') {
		return true
	}
	for {
		d.space()
		if !elem() {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return true
		default:
			return false
		}
	}
}

// plainString takes the string at the decoder when it has no escape, no
// control character and no invalid UTF-8, and returns its bytes.
func (d *inferDecoder) plainString() ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	start := d.i + 1
	ascii := true
	for i := start; i < len(d.b); i++ {
		switch c := d.b[i]; {
		case c == '"':
			s := d.b[start:i]
			if !ascii && !utf8.Valid(s) {
				return nil, false
			}
			d.i = i + 1
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// str takes a plain string into *dst.
func (d *inferDecoder) str(dst *string) bool {
	s, ok := d.plainString()
	if ok {
		*dst = string(s)
	}
	return ok
}

// name is str for the name of one of the model's inputs (input) or
// outputs, which shares the configuration's string when there is one.
func (d *inferDecoder) name(dst *string, input bool) bool {
	s, ok := d.plainString()
	if !ok {
		return false
	}
	if d.model != nil {
		if input {
			if c := d.model.InputConfig(string(s)); c != nil {
				*dst = c.GetName()
				return true
			}
		} else if c := d.model.OutputConfig(string(s)); c != nil {
			*dst = c.GetName()
			return true
		}
	}
	*dst = string(s)
	return true
}

// datatype takes a plain string into *dst, sharing the name of a known
// datatype rather than copying it.
func (d *inferDecoder) datatype(dst *string) bool {
	s, ok := d.plainString()
	if !ok {
		return false
	}
	if dt := core.ParseDataType(string(s)); dt != core.TypeInvalid && dt.String() == string(s) {
		*dst = dt.String()
	} else {
		*dst = string(s)
	}
	return true
}

// params takes a parameters object as paramsJSON.UnmarshalJSON decodes
// it, its values left in place.
func (d *inferDecoder) params(p *paramsJSON) bool {
	if d.peek() != '{' {
		return false
	}
	start := d.i
	n := 0
	var name, value []byte
	if !d.object(func(quoted []byte) bool {
		d.space()
		from := d.i
		if !d.skip(1) {
			return false
		}
		if n++; n == 1 {
			name, value = quoted, d.b[from:d.i]
		}
		return true
	}) {
		return false
	}
	if n == 1 {
		if name, ok := plainMemberName(name); ok {
			*p = paramsJSON{single: true, name: name, value: value}
			return true
		}
	}
	obj := d.b[start:d.i]
	m, over, err := decodeObjectInPlace(obj, protocol.MaxRequestParameters)
	if err != nil {
		return false
	}
	*p = paramsJSON{m: m, over: over}
	return true
}

// extensionParams are the names of the parameters the extensions read,
// and of the request parameters the protocol reserves that clients send
// alone (Triton's HTTP client sends binary_data_output with every request
// that names no outputs), which plainMemberName returns without copying.
var extensionParams = [...]string{paramBinaryDataSize, paramBinaryData, paramShmRegion, paramShmOffset, paramShmByteSize, paramClassification,
	protocol.ParamBinaryDataOutput, protocol.ParamSequenceID, protocol.ParamPriority, protocol.ParamTimeout}

// plainMemberName returns the member name quoted (with its quotes) as a
// string when it is printable ASCII without escapes, as encoding/json
// decodes it then; the names of the extensions' parameters are shared,
// not copied.
func plainMemberName(quoted []byte) (string, bool) {
	inner := quoted[1 : len(quoted)-1]
	for _, c := range inner {
		if c < ' ' || c == '\\' || c >= utf8.RuneSelf {
			return "", false
		}
	}
	for _, known := range extensionParams {
		if string(inner) == known {
			return known, true
		}
	}
	return string(inner), true
}

// data takes any value, in place, as json.RawMessage holds it.
func (d *inferDecoder) data(dst *json.RawMessage) bool {
	switch d.peek() {
	case 'n':
		return false
	case '[':
		if start := d.i; d.skipNumbers() {
			*dst = d.b[start:d.i]
			return true
		}
	}
	start := d.i
	if !d.skip(0) {
		return false
	}
	*dst = d.b[start:d.i]
	return true
}

// skipNumbers takes the array at the decoder when it holds numbers alone,
// as a tensor's values mostly do, without a call per element; otherwise
// it leaves the decoder where it was, for skip, and returns false.
func (d *inferDecoder) skipNumbers() bool {
	start := d.i
	d.i++ // '['
	for {
		d.space()
		if !d.number() {
			break
		}
		d.space()
		if d.i >= len(d.b) {
			break
		}
		if c := d.b[d.i]; c == ']' {
			d.i++
			return true
		} else if c != ',' {
			break
		}
		d.i++
	}
	d.i = start
	return false
}

// shape takes an array of at most protocol.MaxTensorDims plain integers.
func (d *inferDecoder) shape(s *shapeJSON) bool {
	var dims []int64
	if m := d.mem; m != nil && m.shapes < len(m.dims) {
		dims = m.dims[m.shapes][:0]
		m.shapes++
	} else {
		dims = make([]int64, 0, 4)
	}
	ok := d.array(func() bool {
		start := d.i
		if d.i < len(d.b) && d.b[d.i] == '-' {
			d.i++
		}
		digits := d.i
		for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
			d.i++
		}
		if d.i == digits || (d.b[digits] == '0' && d.i > digits+1) || len(dims) == protocol.MaxTensorDims {
			return false
		}
		if d.i < len(d.b) && !isDelimiter(d.b[d.i]) {
			return false // a fraction or an exponent
		}
		v, err := strconv.ParseInt(string(d.b[start:d.i]), 10, 64)
		if err != nil {
			return false
		}
		dims = append(dims, v)
		return true
	})
	if ok {
		s.dims, s.over = dims, false
	}
	return ok
}

// inputs takes the array of inputs, at most protocol.MaxRequestTensors.
func (d *inferDecoder) inputs(in *inputsJSON) bool {
	list := []inputJSON{}
	if d.mem != nil {
		list = d.mem.inputs[:0]
	}
	ok := d.array(func() bool {
		if len(list) == protocol.MaxRequestTensors {
			return false
		}
		list = append(list, inputJSON{})
		return d.input(&list[len(list)-1])
	})
	if ok {
		in.list, in.over = list, false
	}
	return ok
}

func (d *inferDecoder) input(in *inputJSON) bool {
	return d.members(func(k int) bool {
		switch k {
		case 0:
			return d.name(&in.Name, true)
		case 1:
			return d.shape(&in.Shape)
		case 2:
			return d.datatype(&in.Datatype)
		case 3:
			return d.params(&in.Parameters)
		default:
			return d.data(&in.Data)
		}
	}, "name", "shape", "datatype", "parameters", "data")
}

// outputs takes the array of requested outputs, at most
// protocol.MaxRequestTensors.
func (d *inferDecoder) outputs(out *outputsJSON) bool {
	list := []outputJSON{}
	if d.mem != nil {
		list = d.mem.outputs[:0]
	}
	ok := d.array(func() bool {
		if len(list) == protocol.MaxRequestTensors {
			return false
		}
		list = append(list, outputJSON{})
		o := &list[len(list)-1]
		return d.members(func(k int) bool {
			if k == 0 {
				return d.name(&o.Name, false)
			}
			return d.params(&o.Parameters)
		}, "name", "parameters")
	})
	if ok {
		out.list, out.over = list, false
	}
	return ok
}

// skip takes one JSON value of any kind, checking it as encoding/json
// does; depth is how deep it lies in values skipped so far.
func (d *inferDecoder) skip(depth int) bool {
	if depth > maxFastDepth {
		return false
	}
	switch d.peek() {
	case '{':
		return d.object(func([]byte) bool { return d.skip(depth + 1) })
	case '[':
		return d.array(func() bool { return d.skip(depth + 1) })
	case '"':
		return d.skipString()
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	default:
		return d.number()
	}
}

func (d *inferDecoder) literal(word string) bool {
	if len(d.b)-d.i < len(word) || string(d.b[d.i:d.i+len(word)]) != word {
		return false
	}
	d.i += len(word)
	return true
}

// skipString takes a string, checking its escapes and that it holds no
// control character.
func (d *inferDecoder) skipString() bool {
	for i := d.i + 1; i < len(d.b); i++ {
		switch c := d.b[i]; {
		case c == '"':
			d.i = i + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			i++
			if i >= len(d.b) {
				return false
			}
			switch d.b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(d.b)-i < 5 {
					return false
				}
				for _, h := range d.b[i+1 : i+5] {
					if !isHex(h) {
						return false
					}
				}
				i += 4
			default:
				return false
			}
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number takes a number as JSON writes one: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *inferDecoder) number() bool {
	b, i := d.b, d.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digitsFrom(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digitsFrom(b, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digitsFrom(b, i)
		if j == i {
			return false
		}
		i = j
	}
	d.i = i
	return true
}

// digitsFrom returns the index of the first byte at or after i that is not
// a decimal digit.
func digitsFrom(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
