package modelconfig

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// ToJSON renders the config the way Triton hands it to backends (no trailing
// NUL).
//
// Triton's ModelConfigToJson prints the message with protobuf's C++
// MessageToJsonString (preserve_proto_field_names, always_print_primitive_
// fields), re-parses the text with rapidjson, turns most 64-bit integers
// from JSON strings into numbers and writes it back compactly. The result,
// reproduced here, is:
//
//   - fields in .proto declaration order, keyed by their proto names;
//   - scalars, repeated fields and maps always present (0, "", false, [],
//     {}); singular messages and oneof members only when set, and then with
//     all their own fields;
//   - enums by name (by number when the value has no name);
//   - map keys as strings, sorted (Triton's order is unspecified);
//   - 64-bit integers as JSON numbers, except the ones Triton leaves as
//     strings: instance_group[].secondary_devices[].device_id,
//     optimization.cuda.graph_spec[].input{}.dim,
//     optimization.cuda.graph_spec[].graph_lower_bound.input{}.dim and
//     sequence_batching.state[].initial_state[].dims (a lookup bug in
//     Triton's fix-up skips them);
//   - floats as protobuf prints them (SimpleFtoa/SimpleDtoa) re-printed by
//     rapidjson: integral values as integers, others in rapidjson's
//     shortest form; NaN and infinities as the strings "NaN", "Infinity",
//     "-Infinity";
//   - strings with rapidjson's escaping: only '"', '\\' and control
//     characters are escaped; invalid UTF-8 (which Parse and FromJSON never
//     produce) becomes one space per bad byte.
//
// Like Triton, a configuration with every field at its default renders as
// empty output, not "{}".
func ToJSON(cfg *configpb.ModelConfig) ([]byte, error) {
	if cfg == nil || proto.Size(cfg) == 0 {
		return []byte{}, nil
	}
	e := jsonEncoder{buf: make([]byte, 0, 2048)}
	if err := e.message(cfg.ProtoReflect()); err != nil {
		return nil, fmt.Errorf("model %q: render config as JSON: %w", cfg.GetName(), err)
	}
	return e.buf, nil
}

// quotedInt64Fields are the 64-bit integer fields that Triton's
// ModelConfigToJson leaves as JSON strings; every other 64-bit field of
// ModelConfig is rewritten as a number.
// (Map keys, such as dynamic_batching.priority_queue_policy's uint64 keys,
// are JSON strings regardless.)
var quotedInt64Fields = map[protoreflect.FullName]bool{
	"inference.ModelInstanceGroup.SecondaryDevice.device_id":     true,
	"inference.ModelOptimizationPolicy.Cuda.GraphSpec.Shape.dim": true,
	"inference.ModelSequenceBatching.InitialState.dims":          true,
}

// jsonEncoder appends Triton-style JSON to buf.
type jsonEncoder struct {
	buf []byte
}

// message writes m as an object.
func (e *jsonEncoder) message(m protoreflect.Message) error {
	e.buf = append(e.buf, '{')
	fields := m.Descriptor().Fields()
	first := true
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.HasPresence() && !m.Has(fd) {
			continue // unset message, oneof member or optional scalar
		}
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
		e.buf = appendJSONString(e.buf, string(fd.Name()))
		e.buf = append(e.buf, ':')
		var err error
		switch {
		case fd.IsMap():
			err = e.mapValue(m.Get(fd).Map(), fd)
		case fd.IsList():
			err = e.list(m.Get(fd).List(), fd)
		default:
			err = e.value(m.Get(fd), fd)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", fd.Name(), err)
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// list writes a repeated field as an array.
func (e *jsonEncoder) list(l protoreflect.List, fd protoreflect.FieldDescriptor) error {
	e.buf = append(e.buf, '[')
	for i := 0; i < l.Len(); i++ {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.value(l.Get(i), fd); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

// mapValue writes a map field as an object with sorted keys.
func (e *jsonEncoder) mapValue(m protoreflect.Map, fd protoreflect.FieldDescriptor) error {
	keys := make([]protoreflect.MapKey, 0, m.Len())
	m.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k)
		return true
	})
	slices.SortFunc(keys, compareMapKeys(fd.MapKey().Kind()))
	e.buf = append(e.buf, '{')
	for i, k := range keys {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		ks := k.String() // decimal for integer keys, "true"/"false" for bools
		e.buf = appendJSONString(e.buf, ks)
		e.buf = append(e.buf, ':')
		if err := e.value(m.Get(k), fd.MapValue()); err != nil {
			return fmt.Errorf("[%q]: %w", ks, err)
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// value writes one singular value of field fd.
func (e *jsonEncoder) value(v protoreflect.Value, fd protoreflect.FieldDescriptor) error {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		e.buf = strconv.AppendBool(e.buf, v.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		e.buf = strconv.AppendInt(e.buf, v.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		e.buf = strconv.AppendUint(e.buf, v.Uint(), 10)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		quoted := quotedInt64Fields[fd.FullName()]
		e.quote(quoted)
		e.buf = strconv.AppendInt(e.buf, v.Int(), 10)
		e.quote(quoted)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		quoted := quotedInt64Fields[fd.FullName()]
		e.quote(quoted)
		e.buf = strconv.AppendUint(e.buf, v.Uint(), 10)
		e.quote(quoted)
	case protoreflect.FloatKind:
		e.buf = appendTritonFloat(e.buf, v.Float(), 32)
	case protoreflect.DoubleKind:
		e.buf = appendTritonFloat(e.buf, v.Float(), 64)
	case protoreflect.StringKind:
		e.buf = appendJSONString(e.buf, v.String())
	case protoreflect.BytesKind:
		e.buf = append(e.buf, '"')
		e.buf = base64.StdEncoding.AppendEncode(e.buf, v.Bytes())
		e.buf = append(e.buf, '"')
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			e.buf = appendJSONString(e.buf, string(ev.Name()))
		} else {
			e.buf = strconv.AppendInt(e.buf, int64(v.Enum()), 10)
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return e.message(v.Message())
	default:
		return fmt.Errorf("unsupported field kind %v", fd.Kind())
	}
	return nil
}

// quote writes a double quote when quoted is true; it brackets the 64-bit
// integers Triton leaves as JSON strings.
func (e *jsonEncoder) quote(quoted bool) {
	if quoted {
		e.buf = append(e.buf, '"')
	}
}

// compareMapKeys orders map keys of the given kind: numerically for
// integers, false before true, bytewise for strings.
func compareMapKeys(kind protoreflect.Kind) func(a, b protoreflect.MapKey) int {
	switch kind {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return func(a, b protoreflect.MapKey) int { return cmp.Compare(a.Int(), b.Int()) }
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return func(a, b protoreflect.MapKey) int { return cmp.Compare(a.Uint(), b.Uint()) }
	case protoreflect.BoolKind:
		return func(a, b protoreflect.MapKey) int { return cmp.Compare(boolRank(a.Bool()), boolRank(b.Bool())) }
	default:
		return func(a, b protoreflect.MapKey) int { return cmp.Compare(a.String(), b.String()) }
	}
}

// boolRank orders false before true.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// appendJSONString appends s as a JSON string escaped the way rapidjson's
// Writer does: '"', '\\' and bytes below 0x20 only (\b \t \n \f \r or
// \u00XX with upper-case hex). Invalid UTF-8 bytes become spaces.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, ' ')
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		default:
			dst = append(dst, c)
		}
		i++
	}
	return append(dst, '"')
}
