package modelconfig

import (
	"bytes"
	"encoding/json"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// jsonOptions reject unknown fields, as Triton's JsonToModelConfig does
// (ignore_unknown_fields = false).
var jsonOptions = protojson.UnmarshalOptions{DiscardUnknown: false}

// FromJSON parses a config JSON document (as a backend passes to
// TRITONBACKEND_ModelSetConfig).
//
// It accepts what ToJSON emits and what protobuf's JSON parser accepts:
// proto or lowerCamelCase field names, 64-bit integers as numbers or
// strings, enums by name or number. Like Triton, which parses with
// case_insensitive_enum_parsing, an enum name that matches only when
// upper-cased (e.g. "type_int32") is accepted. Unknown fields are errors
// that name the field. An empty document is an error.
func FromJSON(data []byte) (*configpb.ModelConfig, error) {
	cfg := &configpb.ModelConfig{}
	err := jsonOptions.Unmarshal(data, cfg)
	if err == nil {
		return cfg, nil
	}
	// Retry once with enum names upper-cased where that makes them valid.
	if fixed, ok := upperCaseEnums(data, cfg.ProtoReflect().Descriptor()); ok {
		retry := &configpb.ModelConfig{}
		if jsonOptions.Unmarshal(fixed, retry) == nil {
			return retry, nil
		}
	}
	return nil, &configError{msg: "parse model config JSON: " + err.Error(), cause: err}
}

// upperCaseEnums rewrites data, upper-casing enum values written as strings
// that are not enum names as given but are when upper-cased. It reports
// false when nothing changed or data is not a JSON object.
func upperCaseEnums(data []byte, md protoreflect.MessageDescriptor) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // keep numbers exactly as written
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, false
	}
	if !fixEnums(doc, md) {
		return nil, false
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, false
	}
	return out, true
}

// fixEnums walks a decoded JSON value of message type md and upper-cases
// enum strings in place; it reports whether anything changed.
func fixEnums(v any, md protoreflect.MessageDescriptor) bool {
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	changed := false
	for key, val := range obj {
		fd := md.Fields().ByName(protoreflect.Name(key))
		if fd == nil {
			fd = md.Fields().ByJSONName(key)
		}
		if fd == nil {
			continue
		}
		switch {
		case fd.IsMap():
			entries, ok := val.(map[string]any)
			if !ok {
				continue
			}
			for k, ev := range entries {
				if nv, c := fixValue(ev, fd.MapValue()); c {
					entries[k] = nv
					changed = true
				}
			}
		case fd.IsList():
			items, ok := val.([]any)
			if !ok {
				continue
			}
			for i, item := range items {
				if nv, c := fixValue(item, fd); c {
					items[i] = nv
					changed = true
				}
			}
		default:
			if nv, c := fixValue(val, fd); c {
				obj[key] = nv
				changed = true
			}
		}
	}
	return changed
}

// fixValue fixes one value of field fd; see fixEnums.
func fixValue(v any, fd protoreflect.FieldDescriptor) (any, bool) {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		s, ok := v.(string)
		if !ok || fd.Enum().Values().ByName(protoreflect.Name(s)) != nil {
			return v, false
		}
		upper := strings.ToUpper(s)
		if fd.Enum().Values().ByName(protoreflect.Name(upper)) == nil {
			return v, false
		}
		return upper, true
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return v, fixEnums(v, fd.Message())
	}
	return v, false
}
