package protocol

import (
	"math"

	"github.com/tritonhost/tritonhost/core"
)

// ParseModelVersion reads a model version string as Triton's
// GetModelVersionFromString does (server src/common.cc): "" is the newest
// version (-1); otherwise the leading integer, as C's strtol reads it
// (leading white space, a sign, digits; what follows is ignored), which
// must not be negative. The errors are Triton's, words and all ("stol" is
// what the C++ library names in them).
func ParseModelVersion(s string) (int64, error) {
	if s == "" {
		return -1, nil
	}
	v, ok := leadingInt(s)
	if !ok {
		return 0, core.Errorf(core.CodeInvalidArg,
			"failed to get model version from specified version string '%s' (details: stol), version should be an integral value > 0", s)
	}
	if v < 0 {
		return 0, core.Errorf(core.CodeInvalidArg, "invalid model version specified '%s' , version should be an integral value > 0", s)
	}
	return v, nil
}

// leadingInt parses the integer at the start of s as strtol does in base
// 10; ok is false when there is none or it overflows an int64.
func leadingInt(s string) (v int64, ok bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var u uint64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, false
		}
		u = u*10 + d
	}
	switch {
	case i == start:
		return 0, false
	case neg && u <= 1<<63:
		return -int64(u), true // -(1<<63) wraps to itself, MinInt64
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	}
	return 0, false
}

// LookupModel resolves a model name and a version string (Triton's rules
// and errors). Version 0, which core takes for "the newest", is a version
// Triton looks for, and finds none of.
func LookupModel(srv *core.Server, name, version string) (*core.Model, error) {
	v, err := ParseModelVersion(version)
	if err != nil {
		return nil, err
	}
	m, err := srv.Model(name, max(v, 0))
	if err == nil && v == 0 {
		return nil, core.VersionNotFound(name, 0)
	}
	return m, err
}

// ModelReady reports whether a model version can take requests. As in
// Triton, a model or version the server does not know is not ready (no
// error); a version string that is not a version is an error
// (CodeInvalidArg).
func ModelReady(srv *core.Server, name, version string) (bool, error) {
	v, err := ParseModelVersion(version)
	if err != nil {
		return false, err
	}
	m, err := srv.Model(name, max(v, 0))
	return err == nil && v != 0 && m.Ready() == nil, nil
}

// StatisticsVersion reads the version string of a statistics request: ""
// (all versions) and 0 select every version, as core.Server.Statistics
// takes them.
func StatisticsVersion(version string) (int64, error) {
	v, err := ParseModelVersion(version)
	return max(v, 0), err
}
