package httpserver

import (
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/tritonhost/tritonhost/internal/protocol"
)

// Counting while decoding. encoding/json builds every member of an object
// and every element of an array before a caller can count them: a body of
// tens of MiB naming millions of parameters took hundreds of MiB and
// seconds of CPU before it was refused. The types below count the members
// of their JSON value first, in one pass over its bytes that allocates
// nothing and stops one past the bound, and decode it only when it is
// within the bound; past it, they decode nothing and say so (over), and
// the caller refuses the request, naming the tensor the value belongs to.
// An object of parameters is decoded in that same pass, each member's
// value held where it lies until the end, so that millions of members
// repeating a few names cost no more than their bytes either.

// paramsJSON is a JSON object of parameters, at most
// protocol.MaxRequestParameters of them (distinct names, as a map counts
// them).
type paramsJSON struct {
	m    map[string]json.RawMessage
	over bool // it had more members than the bound; m is nil
	// An object of one member whose name needs no unescaping, as the
	// infer request's single pass (inferjson.go) finds it, is held here
	// instead of in m: single is set, m is nil.
	single bool
	name   string
	value  json.RawMessage
}

// each calls fn for every parameter in the order of their names, until fn
// fails.
func (p *paramsJSON) each(fn func(name string, raw json.RawMessage) error) error {
	if p.single {
		return fn(p.name, p.value)
	}
	if len(p.m) <= 1 {
		for name, raw := range p.m {
			return fn(name, raw)
		}
		return nil
	}
	for _, name := range sortedKeys(p.m) {
		if err := fn(name, p.m[name]); err != nil {
			return err
		}
	}
	return nil
}

// UnmarshalJSON decodes a parameters object within the bound.
func (p *paramsJSON) UnmarshalJSON(b []byte) error {
	var err error
	p.m, p.over, err = decodeObject(b, protocol.MaxRequestParameters)
	return err
}

// loadParamsJSON is the parameters object of a load or unload request, at
// most protocol.MaxLoadParameters of them.
type loadParamsJSON struct {
	m    map[string]json.RawMessage
	over bool
}

// UnmarshalJSON decodes a load request's parameters within the bound.
func (p *loadParamsJSON) UnmarshalJSON(b []byte) error {
	var err error
	p.m, p.over, err = decodeObject(b, protocol.MaxLoadParameters)
	return err
}

// shapeJSON is a tensor's shape, at most protocol.MaxTensorDims
// dimensions.
type shapeJSON struct {
	dims []int64
	over bool
}

// UnmarshalJSON decodes a shape within the bound.
func (s *shapeJSON) UnmarshalJSON(b []byte) error {
	s.dims = nil
	var err error
	s.over, err = decodeBounded(b, protocol.MaxTensorDims, &s.dims)
	return err
}

// inputsJSON is the inputs of an infer request, at most
// protocol.MaxRequestTensors.
type inputsJSON struct {
	list []inputJSON
	over bool
}

// UnmarshalJSON decodes the inputs within the bound.
func (in *inputsJSON) UnmarshalJSON(b []byte) error {
	in.list = nil
	var err error
	in.over, err = decodeBounded(b, protocol.MaxRequestTensors, &in.list)
	return err
}

// outputsJSON is the requested outputs of an infer request, at most
// protocol.MaxRequestTensors.
type outputsJSON struct {
	list []outputJSON
	over bool
}

// UnmarshalJSON decodes the requested outputs within the bound.
func (out *outputsJSON) UnmarshalJSON(b []byte) error {
	out.list = nil
	var err error
	out.over, err = decodeBounded(b, protocol.MaxRequestTensors, &out.list)
	return err
}

// decodeBounded decodes b, a JSON value, into v with encoding/json when b
// is an array of at most limit elements or an object of at most limit
// distinct member names, or anything else (null, or a value of the wrong
// type for encoding/json to refuse in its words); past the bound it
// decodes nothing and reports over.
func decodeBounded(b []byte, limit int, v any) (over bool, err error) {
	n, err := countItems(b, limit+1)
	if err != nil {
		return false, err
	}
	if n > limit {
		return true, nil
	}
	return false, json.Unmarshal(b, v)
}

// decodeObject decodes b, a JSON object, as encoding/json decodes it into
// a map[string]json.RawMessage (names unescaped, the last of a name
// kept), when it has at most limit distinct names; past the bound it
// reports over, and nil. A value that is not an object is left to
// encoding/json (null is a nil map; anything else its error).
func decodeObject(b []byte, limit int) (m map[string]json.RawMessage, over bool, err error) {
	m, over, err = decodeObjectInPlace(b, limit)
	for name, raw := range m { // the caller's bytes are not the map's to keep
		m[name] = append(json.RawMessage(nil), raw...)
	}
	return m, over, err
}

// decodeObjectInPlace is decodeObject with the map's values left in b,
// for a caller whose b outlives the map.
func decodeObjectInPlace(b []byte, limit int) (m map[string]json.RawMessage, over bool, err error) {
	s := jsonScanner{b: b}
	if s.next() != '{' {
		return m, false, json.Unmarshal(b, &m)
	}
	m = map[string]json.RawMessage{}
	err = s.members(func(quoted []byte) (bool, error) {
		name, err := memberName(quoted)
		if err != nil {
			return false, err
		}
		s.space()
		from := s.i
		if err := s.skipValue(); err != nil {
			return false, err
		}
		if _, seen := m[name]; !seen && len(m) == limit {
			over = true
			return false, nil
		}
		m[name] = b[from:s.i]
		return true, nil
	})
	if err != nil || over {
		return nil, over, err
	}
	return m, false, nil
}

// errNotJSON reports a value the scanner cannot walk. encoding/json has
// checked every value an UnmarshalJSON method sees, so only a direct
// caller with bytes of its own meets it.
var errNotJSON = errors.New("not a JSON value")

// countItems counts the elements of b, a JSON array, or the distinct
// member names of b, a JSON object, stopping once it has counted stop
// (at most stop distinct names are held meanwhile). Any other value counts
// 0.
func countItems(b []byte, stop int) (int, error) {
	s := jsonScanner{b: b}
	s.space()
	if s.i >= len(b) {
		return 0, errNotJSON
	}
	switch b[s.i] {
	case '[':
		n := 0
		err := s.elements(func() (bool, error) {
			n++
			return n < stop, s.skipValue()
		})
		return n, err
	case '{':
		names := map[string]struct{}{}
		err := s.members(func(name []byte) (bool, error) {
			key, err := memberName(name)
			if err != nil {
				return false, err
			}
			names[key] = struct{}{}
			return len(names) < stop, s.skipValue()
		})
		return len(names), err
	}
	return 0, nil
}

// memberName is a member's name as encoding/json decodes it (escapes
// resolved, invalid UTF-8 replaced), from its quoted form.
func memberName(quoted []byte) (string, error) {
	inner := quoted[1 : len(quoted)-1]
	plain := utf8.Valid(inner)
	for _, c := range inner {
		if c == '\\' || c < 0x20 {
			plain = false
			break
		}
	}
	if plain {
		return string(inner), nil
	}
	var name string
	if err := json.Unmarshal(quoted, &name); err != nil {
		return "", errNotJSON
	}
	return name, nil
}

// jsonScanner walks a JSON value without decoding it: it finds where
// members, elements and values begin and end, and allocates nothing.
// It is not a validator: given bytes that are not JSON it stops with
// errNotJSON or walks them somehow, but never reads past its slice.
type jsonScanner struct {
	b []byte
	i int
}

// space skips white space.
func (s *jsonScanner) space() { s.i = skipSpace(s.b, s.i) }

// next skips white space and returns the byte there, without taking it
// (0 at the end).
func (s *jsonScanner) next() byte {
	s.space()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// elements walks the array at the scanner, calling each for every element
// with the scanner at its start; each skips it and says whether to go on.
func (s *jsonScanner) elements(each func() (bool, error)) error {
	if s.next() != '[' {
		return errNotJSON
	}
	s.i++
	if s.next() == ']' {
		s.i++
		return nil
	}
	for {
		more, err := each()
		if err != nil || !more {
			return err
		}
		switch s.next() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return errNotJSON
		}
	}
}

// members walks the object at the scanner, calling each with every
// member's quoted name and the scanner at its value; each skips the value
// and says whether to go on.
func (s *jsonScanner) members(each func(name []byte) (bool, error)) error {
	if s.next() != '{' {
		return errNotJSON
	}
	s.i++
	if s.next() == '}' {
		s.i++
		return nil
	}
	for {
		if s.next() != '"' {
			return errNotJSON
		}
		start := s.i
		if err := s.skipString(); err != nil {
			return err
		}
		name := s.b[start:s.i]
		if s.next() != ':' {
			return errNotJSON
		}
		s.i++
		more, err := each(name)
		if err != nil || !more {
			return err
		}
		switch s.next() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return errNotJSON
		}
	}
}

// skipString skips the string whose opening quote is at the scanner.
func (s *jsonScanner) skipString() error {
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++ // the escaped byte; \uXXXX's digits are plain bytes
		case '"':
			s.i++
			return nil
		}
	}
	return errNotJSON
}

// skipValue skips one value: a string, a literal or number, or an array
// or object with everything in it.
func (s *jsonScanner) skipValue() error {
	depth := 0
	for {
		switch c := s.next(); c {
		case 0:
			return errNotJSON
		case '"':
			if err := s.skipString(); err != nil {
				return err
			}
		case '{', '[':
			s.i++
			depth++
			continue
		case '}', ']':
			if depth == 0 {
				return errNotJSON
			}
			s.i++
			depth--
		case ',', ':':
			if depth == 0 {
				return errNotJSON
			}
			s.i++
			continue
		default: // a literal or a number runs to the next delimiter
			start := s.i
			for s.i < len(s.b) && !isDelimiter(s.b[s.i]) {
				s.i++
			}
			if s.i == start {
				return errNotJSON
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

func isDelimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ':', '[', ']', '{', '}', '"':
		return true
	}
	return false
}

// skipSpace returns the index of the first byte of b at or after i that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
