package protocol

import (
	"regexp"
	"slices"
	"strings"

	"github.com/tritonhost/tritonhost/core"
)

// HeaderForwardPattern compiles a --grpc-header-forward-pattern or
// --http-header-forward-pattern as Triton does: case-insensitive (header
// names are), unanchored, in RE2 syntax (Go's regexp is RE2's); a pattern
// may turn case sensitivity back on with (?-i). An empty pattern forwards
// nothing (nil).
func HeaderForwardPattern(pattern string) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, nil
	}
	return regexp.Compile("(?i)" + pattern)
}

// reservedParameter reports whether name is a request parameter the
// protocol reserves (docs/protocol/extension_parameters.md), which a
// forwarded header may not set.
func reservedParameter(name string) bool {
	switch name {
	case ParamSequenceID, ParamSequenceStart, ParamSequenceEnd, ParamPriority, ParamTimeout, ParamHeaders, ParamBinaryDataOutput:
		return true
	}
	return strings.HasPrefix(name, "triton_")
}

// ForwardHeaders adds to ir, as string parameters named as the headers,
// every value of the headers whose names re matches anywhere (Triton's
// ForwardHeadersAsParameters; a header with several values gives several
// parameters), in the order of their names; nil re forwards nothing. A
// matching header named as a reserved parameter refuses the request
// (CodeInvalidArg), as Triton refuses it, naming setting (the flag) in the
// message.
func ForwardHeaders(re *regexp.Regexp, setting string, headers map[string][]string, ir *core.Submission) error {
	if re == nil {
		return nil
	}
	names := make([]string, 0, len(headers))
	for name := range headers {
		if re.MatchString(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if reservedParameter(strings.ToLower(name)) {
			return core.Errorf(core.CodeInvalidArg, "header '%s' matches %s, but parameter '%s' is reserved for Triton usage", name, setting, strings.ToLower(name))
		}
		for _, v := range headers[name] {
			ir.Parameters = append(ir.Parameters, core.StringParam(name, v))
		}
	}
	return nil
}
