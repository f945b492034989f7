package trace

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/tritonhost/tritonhost/core"
)

// The trace extension's settings as the protocols carry them: each
// setting a list of strings (gRPC's SettingValue, HTTP's JSON string or,
// for trace_level, array). The parsing and the texts are Triton's (server
// src/grpc/grpc_server.cc, CommonHandler::RegisterTrace, and
// src/http_server.cc, HTTPAPIServer::HandleTrace), which differ in one
// space between the protocols.

// Setting names of the trace extension.
const (
	KeyLevel        = "trace_level"
	KeyRate         = "trace_rate"
	KeyCount        = "trace_count"
	KeyLogFrequency = "log_frequency"
	KeyFile         = "trace_file"
	KeyMode         = "trace_mode"
)

// SettingValue is one setting of a response, in the order Triton lists
// them.
type SettingValue struct {
	Name   string
	Values []string
}

// Response renders a setting in force, and the mode's options (those of
// --trace-config <mode>,... other than file and log-frequency), as the
// trace extension answers: trace_level, trace_rate, trace_count, then
// log_frequency and trace_file in mode triton, trace_mode, then the
// options by name.
func Response(s Setting, options map[string]string) []SettingValue {
	out := []SettingValue{
		{KeyLevel, LevelNames(s.Level)},
		{KeyRate, []string{strconv.FormatUint(uint64(s.Rate), 10)}},
		{KeyCount, []string{strconv.FormatInt(int64(s.Count), 10)}},
	}
	if s.Mode == ModeTriton {
		out = append(out, SettingValue{KeyLogFrequency, []string{strconv.FormatUint(uint64(s.LogFrequency), 10)}},
			SettingValue{KeyFile, []string{s.File}})
	}
	out = append(out, SettingValue{KeyMode, []string{s.Mode.String()}})
	names := make([]string, 0, len(options))
	for k := range options {
		if k != "file" && k != "log-frequency" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		out = append(out, SettingValue{k, []string{options[k]}})
	}
	return out
}

// Protocol says which frontend parses a request: Triton's texts differ in
// one place.
type Protocol int

// Protocols.
const (
	HTTP Protocol = iota
	GRPC
)

// ErrFileNotUpdatable refuses trace_file in an update.
func errFileNotUpdatable() error {
	return core.Errorf(core.CodeUnsupported, "trace file location can not be updated through network protocol")
}

// UnknownModel is the error for a model setting of a model that is not
// ready.
func UnknownModel(name string) error {
	return core.Errorf(core.CodeInvalidArg, "Request for unknown model : %s", name)
}

// ParseUpdate reads an update of the settings named, in Triton's order
// (trace_file, trace_level, trace_rate, trace_count, log_frequency). A nil
// value list clears the setting (gRPC's empty list, HTTP's null); HTTP's
// other values arrive as one string each, trace_level as its array.
// Settings of other names are ignored, as Triton ignores them.
func ParseUpdate(settings map[string][]string, p Protocol) (Update, error) {
	var u Update
	if _, ok := settings[KeyFile]; ok {
		return u, errFileNotUpdatable()
	}
	if v, ok := settings[KeyLevel]; ok {
		if v == nil {
			u.ClearLevel = true
		} else {
			l, set, err := parseLevels(v)
			if err != nil {
				return u, err
			}
			if set {
				u.Level = &l
			}
		}
	}
	for _, name := range []string{KeyRate, KeyCount, KeyLogFrequency} {
		v, ok := settings[name]
		if !ok {
			continue
		}
		if v == nil {
			switch name {
			case KeyRate:
				u.ClearRate = true
			case KeyCount:
				u.ClearCount = true
			default:
				u.ClearLogFrequency = true
			}
			continue
		}
		if len(v) != 1 {
			return u, core.Errorf(core.CodeInvalidArg, "expect only 1 value for '%s'", name)
		}
		if err := u.setNumber(name, v[0], p); err != nil {
			return u, err
		}
	}
	return u, nil
}

// parseLevels reads trace_level: "OFF" alone, or TIMESTAMPS and TENSORS;
// other names are ignored, and set is false when none was a level.
func parseLevels(values []string) (l core.TraceLevel, set bool, err error) {
	for _, v := range values {
		switch v {
		case "OFF":
			if len(values) != 1 {
				return 0, false, core.Errorf(core.CodeInvalidArg, "Expect only one trace level 'OFF' is specified")
			}
			return core.TraceLevelDisabled, true, nil
		case "TIMESTAMPS":
			l, set = l|core.TraceLevelTimestamps, true
		case "TENSORS":
			l, set = l|core.TraceLevelTensors, true
		}
	}
	return l, set, nil
}

// setNumber reads trace_rate, trace_count or log_frequency as Triton
// does, with C++'s std::stoi (leading digits, an int), the result stored
// in the setting's type.
func (u *Update) setNumber(name, v string, p Protocol) error {
	n, ok, inRange := stoi(v)
	switch {
	case !ok:
		return core.Errorf(core.CodeInvalidArg, "Unable to parse '%s', got: %s", name, v)
	case !inRange && name == KeyCount:
		return core.Errorf(core.CodeInvalidArg, "Unable to parse '%s', value is out of range [ %d, %d ], got: %s", name, minCount, math.MaxInt32, v)
	case !inRange:
		return core.Errorf(core.CodeInvalidArg, "Unable to parse '%s', value is out of range [ 0, %d ], got: %s", name, uint32(math.MaxUint32), v)
	}
	switch name {
	case KeyRate:
		r := uint32(n)
		u.Rate = &r
	case KeyLogFrequency:
		f := uint32(n)
		u.LogFrequency = &f
	default:
		if n < minCount {
			sep := ""
			if p == GRPC {
				sep = " "
			}
			return core.Errorf(core.CodeInvalidArg, "Unable to parse '%s'. Expecting value >= %d, got:%s%s", name, minCount, sep, v)
		}
		c := int32(n)
		u.Count = &c
	}
	return nil
}

// minCount is the smallest trace_count: -1, no limit.
const minCount = -1

// stoi reads an int as C++'s std::stoi does: leading white space, a sign,
// then as many digits as there are; ok is false without a digit, inRange
// false past a 32-bit int.
func stoi(s string) (n int64, ok, inRange bool) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	digits := 0
	for digits < len(s) && s[digits] >= '0' && s[digits] <= '9' {
		digits++
	}
	if digits == 0 {
		return 0, false, false
	}
	v, err := strconv.ParseInt(s[:digits], 10, 64)
	if neg {
		v = -v
	}
	if err != nil || v > math.MaxInt32 || v < math.MinInt32 {
		return 0, true, false
	}
	return v, true, true
}
