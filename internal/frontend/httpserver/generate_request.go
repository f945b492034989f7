package httpserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// The generate extension's request, read as Triton's HTTP endpoint reads it
// (server src/http_server.cc, HandleGenerate and
// GenerateRequestClass::ConvertGenerateRequest): a JSON object whose
// members are taken in document order, duplicates included. A member named
// as an input of the model becomes that input; any other becomes a request
// parameter (string, int, bool or double) that reaches the backend as it
// is; the member "parameters" must be an object whose members are read the
// same way. An input's value is one value or an array of them, and the
// tensor takes the model's input shape (its metadata shape, a -1 batch
// dimension first when the model batches): fixed dimensions divide the
// array's length, the innermost -1 takes what is left, other -1s are 1.
// Each refusal carries Triton's text and code, hence its HTTP status; the
// errors of Triton's JSON reader (TritonJson) are INTERNAL there, so 500.

// generateParametersKey is the member holding more inputs and parameters.
const generateParametersKey = "parameters"

// jsonMember is one member of a JSON object.
type jsonMember struct {
	name string
	raw  json.RawMessage
}

// generateDecoder turns one generate body into a request of m.
type generateDecoder struct {
	m   *core.Model
	req *core.Submission
}

// maxGenerateMembers bounds the members of a generate request's object
// (and of its "parameters"): each is an input or a parameter, so more
// than both bounds together are refused whatever they are, counted only
// that far.
const maxGenerateMembers = protocol.MaxRequestTensors + protocol.MaxRequestParameters

// decodeGenerate turns a generate body into a request of m.
func decodeGenerate(m *core.Model, body []byte) (*core.Submission, error) {
	root, err := parseJSONDocument(body)
	if err != nil {
		return nil, err
	}
	d := &generateDecoder{m: m, req: &core.Submission{Model: m.Name(), Version: m.Version()}}
	members, isObject, over := objectMembers(root, maxGenerateMembers)
	if raw, ok := findMember(root, "id"); ok {
		var id string
		if err := json.Unmarshal(raw, &id); err != nil {
			return nil, core.Errorf(core.CodeInternal, "Unable to parse 'id': %s", errNotString)
		}
		d.req.ID = id
	}
	if !isObject {
		return nil, core.Errorf(core.CodeInternal, "attempt to get members for non-object")
	}
	if err := d.convert(members, over, true); err != nil {
		return nil, err
	}
	if err := d.checkCounts(); err != nil {
		return nil, err
	}
	return d.req, nil
}

// checkCounts refuses a request past the bounds both protocols share: the
// members naming inputs of the model are its inputs, every other member
// (at the top or under "parameters") its parameters.
func (d *generateDecoder) checkCounts() error {
	if n := len(d.req.Inputs); n > protocol.MaxRequestTensors {
		return fmt.Errorf("model %q: %w", d.m.Name(), protocol.TooMany("the request", n, "inputs", protocol.MaxRequestTensors))
	}
	if n := len(d.req.Parameters); n > protocol.MaxRequestParameters {
		return fmt.Errorf("model %q: %w", d.m.Name(), protocol.TooMany("the request", n, "parameters", protocol.MaxRequestParameters))
	}
	return nil
}

// parseJSONDocument checks that body is one JSON value, and says why not
// in the words of Triton's reader: "failed to parse the request JSON
// buffer: <why> at <offset>". The value returned is body's own bytes,
// without the white space around it.
func parseJSONDocument(body []byte) (json.RawMessage, error) {
	if json.Valid(body) { // one pass that allocates nothing
		return bytes.Trim(body, " \t\r\n"), nil
	}
	fail := func(why string, at int64) error {
		return core.Errorf(core.CodeInternal, "failed to parse the request JSON buffer: %s at %d", why, at)
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, fail("The document is empty.", int64(len(body)))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var root json.RawMessage
	if err := dec.Decode(&root); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, fail(se.Error(), se.Offset)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fail("unexpected end of JSON input", int64(len(body)))
		}
		return nil, fail(err.Error(), dec.InputOffset())
	}
	end := dec.InputOffset()
	if rest := bytes.TrimLeft(body[end:], " \t\r\n"); len(rest) > 0 {
		return nil, fail("The document root must not be followed by other values.", int64(len(body)-len(rest)))
	}
	return root, nil
}

// objectMembers returns the members of raw, a valid JSON value, in
// document order, duplicates included, each value a slice of raw; ok is
// false when raw is not an object. It stops after limit members: over
// says there were more.
func objectMembers(raw json.RawMessage, limit int) (members []jsonMember, ok, over bool) {
	s := jsonScanner{b: raw}
	if s.next() != '{' {
		return nil, false, false
	}
	_ = s.members(func(quoted []byte) (bool, error) {
		if len(members) == limit {
			over = true
			return false, nil
		}
		name, err := memberName(quoted)
		if err != nil {
			return false, err
		}
		s.space()
		from := s.i
		if err := s.skipValue(); err != nil {
			return false, err
		}
		members = append(members, jsonMember{name: name, raw: raw[from:s.i]})
		return true, nil
	})
	return members, true, over
}

// findMember returns the value of the first member of raw, a valid JSON
// object, called name, as Triton's reader finds a member; it holds no
// other member meanwhile.
func findMember(raw json.RawMessage, name string) (value json.RawMessage, found bool) {
	s := jsonScanner{b: raw}
	_ = s.members(func(quoted []byte) (bool, error) {
		key, err := memberName(quoted)
		if err != nil {
			return false, err
		}
		s.space()
		from := s.i
		if err := s.skipValue(); err != nil {
			return false, err
		}
		if key == name {
			value, found = raw[from:s.i], true
			return false, nil
		}
		return true, nil
	})
	return value, found
}

// convert maps the members of one object onto the request, in order; at
// the top level, "parameters" holds more of them. over says the object had
// more members than maxGenerateMembers (the rest were not read).
func (d *generateDecoder) convert(members []jsonMember, over, top bool) error {
	if over || len(d.req.Inputs)+len(d.req.Parameters)+len(members) > maxGenerateMembers {
		// Past both bounds together whatever the members are: refused
		// before any is decoded (checkCounts names the bound).
		return fmt.Errorf("model %q: %w", d.m.Name(), protocol.MoreThan("the request", "inputs and parameters", maxGenerateMembers))
	}
	first := make(map[string]json.RawMessage, len(members)) // a name's value, as Triton's reader finds it
	for _, mb := range members {
		if _, ok := first[mb.name]; !ok {
			first[mb.name] = mb.raw
		}
	}
	for _, mb := range members {
		if top && mb.name == generateParametersKey {
			if err := d.convertParameters(first[generateParametersKey]); err != nil {
				return err
			}
			continue
		}
		if err := d.exactMapping(mb.name, first[mb.name]); err != nil {
			return err
		}
	}
	return nil
}

// convertParameters reads the "parameters" member, raw, which must be an
// object and not also the name of an input.
func (d *generateDecoder) convertParameters(raw json.RawMessage) error {
	key := generateParametersKey
	if _, ok := d.m.InputDataType(key); ok {
		return core.Errorf(core.CodeInvalidArg, "Keyword '%s' for nested schema also given as input tensor name", key)
	}
	nested, ok, over := objectMembers(raw, maxGenerateMembers)
	if !ok {
		return core.Errorf(core.CodeInternal, "Expected JSON object for keyword: '%s': attempt to access JSON non-object as object", key)
	}
	if err := d.convert(nested, over, false); err != nil {
		return core.Errorf(core.CodeOf(err), "Converting keyword: '%s': %w", key, err)
	}
	return nil
}

// exactMapping makes member name an input, when the model has one of that
// name, or else a parameter.
func (d *generateDecoder) exactMapping(name string, raw json.RawMessage) error {
	dt, isInput := d.m.InputDataType(name)
	if !isInput {
		p, err := generateParameter(name, raw)
		if err != nil {
			return err
		}
		d.req.Parameters = append(d.req.Parameters, p)
		return nil
	}
	in, err := generateInput(d.m, name, dt, raw)
	if err != nil {
		return err
	}
	for i := range d.req.Inputs {
		if d.req.Inputs[i].Name == name {
			return core.InputExistsError(d.req.ID, name)
		}
	}
	d.req.Inputs = append(d.req.Inputs, in)
	return nil
}

// generateParameter is a request parameter from a JSON value: a string, a
// boolean, an integer (int64) or another number (double).
func generateParameter(name string, raw json.RawMessage) (core.Parameter, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err == nil {
		switch v := tok.(type) {
		case string:
			return core.StringParam(name, v), nil
		case bool:
			return core.BoolParam(name, v), nil
		case json.Number:
			if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				return core.IntParam(name, n), nil
			}
			if f, err := strconv.ParseFloat(string(v), 64); err == nil {
				return core.DoubleParam(name, f), nil
			}
		}
	}
	return core.Parameter{}, core.Errorf(core.CodeInvalidArg,
		"parameter '%s' has invalid type. It should be either 'int', 'bool', or 'string'.", name)
}

// TritonJson's words for a value of the wrong JSON type.
const (
	errNotString   = "attempt to access JSON non-string as string"
	errNotBool     = "attempt to access JSON non-boolean as boolean"
	errNotInt      = "attempt to access JSON non-signed-integer as signed-integer"
	errNotUint     = "attempt to access JSON non-unsigned-integer as unsigned-integer"
	errNotNumber   = "attempt to access JSON non-number as double"
	errShapeOfData = "Shape does not match true shape of 'data' field"
)

// generateInput decodes one input's value. Its checks come in Triton's
// order: the strings of a BYTES value, the shape, FP16 and BF16 (which JSON
// cannot carry), then each value against the data type and the count.
func generateInput(m *core.Model, name string, dt core.DataType, raw json.RawMessage) (core.Input, error) {
	v, err := readLeaves(raw, dt)
	if err != nil {
		return core.Input{}, err
	}
	if dt == core.TypeBytes && v.typeErr != "" {
		return core.Input{}, core.Errorf(core.CodeInternal, "Unable to parse JSON bytes array: %s", v.typeErr)
	}
	shape, ok := fitShape(metadataShape(m, name), v.top)
	if !ok {
		return core.Input{}, core.Errorf(core.CodeInvalidArg, "The schema can not convert input '%s' to tensor with proper shape", name)
	}
	switch dt {
	case core.TypeFP16, core.TypeBF16:
		return core.Input{}, core.Errorf(core.CodeInvalidArg,
			"receiving %s data via JSON is not supported. Please use the binary data format for input %s", dt, name)
	case core.TypeBytes:
	default:
		// Values are read up to the top-level count; a type error or one
		// value too many, whichever comes first, ends the reading.
		switch {
		case v.typeErr != "" && v.typeErrAt < v.top:
			return core.Input{}, core.Errorf(core.CodeInternal, "Unable to parse 'data': %s", v.typeErr)
		case v.count != v.top:
			return core.Input{}, core.Errorf(core.CodeInternal, "Unable to parse 'data': %s", errShapeOfData)
		}
	}
	return core.NewInput(name, dt, shape, v.data), nil
}

// metadataShape is an input's shape as the model metadata reports it: its
// dims, after a -1 batch dimension when the model batches.
func metadataShape(m *core.Model, name string) []int64 {
	dims := m.InputConfig(name).GetDims()
	shape := make([]int64, 0, len(dims)+1)
	if m.MaxBatchSize() > 0 {
		shape = append(shape, -1)
	}
	return append(shape, dims...)
}

// fitShape gives count values the shape meta, as Triton's generate mapping
// does: from the innermost dimension out, each fixed dimension must divide
// what is left; then the innermost -1 takes the rest and the other -1s are
// 1. It fails when the values do not fill the shape exactly.
func fitShape(meta []int64, count int64) ([]int64, bool) {
	shape := append([]int64(nil), meta...)
	for i := len(shape) - 1; i >= 0; i-- {
		if d := shape[i]; d != -1 {
			if d <= 0 || count%d != 0 {
				return nil, false
			}
			count /= d
		}
	}
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] == -1 {
			shape[i], count = count, 1
		}
	}
	return shape, count == 1
}

// leaves are the values of one input as read from its JSON.
type leaves struct {
	top       int64  // the top-level array's length, or 1 for a lone value
	count     int64  // values read (arrays are walked into)
	data      []byte // the values as the data type's bytes (BYTES length-prefixed)
	typeErr   string // the first value of the wrong JSON type, in TritonJson's words
	typeErrAt int64  // its index among the values
}

// readLeaves walks raw, one valid JSON value or nested arrays of values,
// and converts each value to dt in place, as encoding/json's token decoder
// would have read it: nothing is allocated per value (a BYTES string with
// escapes or bytes that are not UTF-8 aside), the data is allocated once
// for the most values raw can hold. An object counts as one value (of the
// wrong type).
func readLeaves(raw json.RawMessage, dt core.DataType) (leaves, error) {
	var v leaves
	if size := int64(dt.ByteSize()); size > 0 && dt != core.TypeFP16 && dt != core.TypeBF16 {
		// n values take at least 2n-1 bytes of JSON (a digit and a comma).
		v.data = make([]byte, 0, (int64(len(raw))+1)/2*size)
	} else if dt == core.TypeBytes {
		// n strings take at least 3n-1 bytes of JSON and give n 4-byte
		// lengths: at most len(raw)+n+1 bytes, unless bytes that are not
		// UTF-8 are replaced, when append grows it.
		v.data = make([]byte, 0, int64(len(raw))+(int64(len(raw))+1)/3+1)
	}
	s := valueScanner{b: raw}
	depth := 0
	for {
		kind, tok, err := s.token()
		if err != nil {
			return v, core.Errorf(core.CodeInternal, "failed to parse the request JSON buffer: %v", err)
		}
		switch kind {
		case tokEnd:
			if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
				v.top = 1 // a lone value
			}
			return v, nil
		case tokOpen:
			if depth == 1 {
				v.top++
			}
			depth++
			continue
		case tokClose:
			depth--
			continue
		case tokObject:
			// valueScanner stops at an object: skip it, a value of no
			// convertible type.
			js := jsonScanner{b: s.b, i: s.i}
			if err := js.skipValue(); err != nil {
				return v, core.Errorf(core.CodeInternal, "failed to parse the request JSON buffer: %v", err)
			}
			s.i, s.after = js.i, true
		}
		if depth == 1 {
			v.top++
		}
		v.addLeaf(dt, kind, tok)
	}
}

// addLeaf converts one value, of kind and text tok; the first that does
// not convert is kept as the type error, and values after it are only
// counted.
func (v *leaves) addLeaf(dt core.DataType, kind tokenKind, tok []byte) {
	idx := v.count
	v.count++
	if v.typeErr != "" {
		return
	}
	var err string
	v.data, err = appendGenerateValue(v.data, dt, kind, tok)
	if err != "" {
		v.typeErr, v.typeErrAt = err, idx
	}
}

// appendGenerateValue appends one value, of kind and text tok, as an
// element of dt, converting as Triton's reader does (integers are
// truncated to the element's width), or returns TritonJson's words for a
// value of the wrong JSON type.
func appendGenerateValue(b []byte, dt core.DataType, kind tokenKind, tok []byte) ([]byte, string) {
	isNum := kind == tokNumber
	switch dt {
	case core.TypeBool:
		switch kind {
		case tokTrue:
			return append(b, 1), ""
		case tokFalse:
			return append(b, 0), ""
		}
		return b, errNotBool
	case core.TypeBytes:
		if kind != tokString {
			return b, errNotString
		}
		at := len(b)
		b = append(b, 0, 0, 0, 0)
		b, ok := appendUnquoted(b, tok)
		if !ok { // not reached: the scanner checked the string
			return b[:at], errNotString
		}
		binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
		return b, ""
	case core.TypeUint8, core.TypeUint16, core.TypeUint32, core.TypeUint64:
		if !isNum {
			return b, errNotUint
		}
		u, err := strconv.ParseUint(string(tok), 10, 64)
		if err != nil {
			return b, errNotUint
		}
		return appendLE(b, u, dt.ByteSize()*8), ""
	case core.TypeInt8, core.TypeInt16, core.TypeInt32, core.TypeInt64:
		if !isNum {
			return b, errNotInt
		}
		n, err := strconv.ParseInt(string(tok), 10, 64)
		if err != nil {
			return b, errNotInt
		}
		return appendLE(b, uint64(n), dt.ByteSize()*8), ""
	case core.TypeFP32, core.TypeFP64:
		if !isNum {
			return b, errNotNumber
		}
		f, err := strconv.ParseFloat(string(tok), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return b, errNotNumber
		}
		if dt == core.TypeFP32 {
			return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(f))), ""
		}
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(f)), ""
	}
	return b, fmt.Sprintf("invalid datatype %s", dt)
}
