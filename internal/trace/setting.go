package trace

import (
	"fmt"
	"strings"

	"github.com/tritonhost/tritonhost/core"
)

// Mode is how traces leave the server, as Triton's trace modes.
type Mode int

// Trace modes.
const (
	// ModeTriton writes traces to a JSON file (Setting.File), Triton's
	// trace file.
	ModeTriton Mode = iota
	// ModeOpenTelemetry exports each trace as an OpenTelemetry span
	// (through an Exporter).
	ModeOpenTelemetry
)

// String returns the mode as Triton's trace settings name it.
func (m Mode) String() string {
	if m == ModeOpenTelemetry {
		return "opentelemetry"
	}
	return "triton"
}

// ParseMode reads a mode name, in any case.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "triton":
		return ModeTriton, nil
	case "opentelemetry":
		return ModeOpenTelemetry, nil
	}
	return 0, fmt.Errorf("invalid value for trace mode option: %s. Available options are \"triton\" and \"opentelemetry\"", strings.ToLower(s))
}

// Defaults of a Setting, as Triton's.
const (
	DefaultRate  = 1000
	DefaultCount = -1
)

// Setting is a trace setting: the server's, or one model's.
type Setting struct {
	// Level is what a trace records (TraceLevelDisabled: no tracing).
	Level core.TraceLevel
	// Rate samples one request in Rate (0 traces none).
	Rate uint32
	// Count is how many more traces to collect (-1: no limit). The
	// setting in force counts down as its traces are created.
	Count int32
	// LogFrequency writes the traces to a new file, <File>.<n>, every
	// LogFrequency traces (0: all to File). ModeTriton only.
	LogFrequency uint32
	// File is the trace file (ModeTriton); it is set at start only.
	File string
	// Mode is how traces leave the server; it is set at start only.
	Mode Mode
}

// DefaultSetting is Triton's default: tracing off, one request in 1000,
// no limit on the count, mode triton.
func DefaultSetting() Setting {
	return Setting{Level: core.TraceLevelDisabled, Rate: DefaultRate, Count: DefaultCount, Mode: ModeTriton}
}

// invalidReason says why a setting traces nothing, in Triton's words; ""
// when it traces.
func (s Setting) invalidReason() string {
	switch {
	case s.Level == core.TraceLevelDisabled:
		return "tracing is disabled"
	case s.Rate == 0:
		return "sample rate must be non-zero"
	case s.Mode == ModeTriton && s.File == "":
		return "trace file name is not given"
	}
	return ""
}

// LevelNames returns the level as the trace settings list it: "OFF", or
// "TIMESTAMPS" and "TENSORS".
func LevelNames(l core.TraceLevel) []string {
	if l == core.TraceLevelDisabled {
		return []string{"OFF"}
	}
	var out []string
	if l&core.TraceLevelTimestamps != 0 {
		out = append(out, "TIMESTAMPS")
	}
	if l&core.TraceLevelTensors != 0 {
		out = append(out, "TENSORS")
	}
	return out
}

// Update changes a setting: each field set replaces the value in force,
// each Clear* field makes it follow its fallback again (a model's setting
// the server's, the server's its value at start).
type Update struct {
	Level        *core.TraceLevel
	Rate         *uint32
	Count        *int32
	LogFrequency *uint32

	ClearLevel, ClearRate, ClearCount, ClearLogFrequency bool
}

// Empty reports whether the update changes nothing.
func (u Update) Empty() bool {
	return u.Level == nil && u.Rate == nil && u.Count == nil && u.LogFrequency == nil &&
		!u.ClearLevel && !u.ClearRate && !u.ClearCount && !u.ClearLogFrequency
}
