package protocol

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tritonhost/tritonhost/core"
)

// Request parameters the protocol reserves; they configure the request
// rather than reaching the backend.
const (
	ParamSequenceID       = "sequence_id"
	ParamSequenceStart    = "sequence_start"
	ParamSequenceEnd      = "sequence_end"
	ParamPriority         = "priority"
	ParamTimeout          = "timeout"
	ParamEmptyFinal       = "triton_enable_empty_final_response"
	ParamFinalResponse    = "triton_final_response"
	ParamBinaryDataOutput = "binary_data_output"
	ParamHeaders          = "headers"
)

// Kind is the type of a parameter Value.
type Kind int

// Parameter value kinds, as the protocols carry them.
const (
	KindNone Kind = iota
	KindBool
	KindInt    // a signed integer
	KindUint   // an unsigned integer (gRPC's uint64_param)
	KindString // a string
	KindDouble // a floating-point number
)

// Value is one parameter value as a frontend decoded it; only the field of
// its Kind is meaningful.
type Value struct {
	Kind   Kind
	Bool   bool
	Int    int64
	Uint   uint64
	String string
	Double float64
}

// Options are what a frontend itself takes from a request's parameters.
type Options struct {
	// EmptyFinal: triton_enable_empty_final_response, send a flags-only
	// final as an empty response.
	EmptyFinal bool
	// BinaryDataOutput: binary_data_output, send every output as binary
	// data (HTTP's binary tensor extension).
	BinaryDataOutput bool
}

// ApplyParameter applies request parameter name to ir and opts: a reserved
// one configures the request (sequence, priority, timeout) or the frontend;
// any other becomes a parameter the backend sees. Names starting with
// triton_ are reserved. The error says what is wrong with the value, for
// the caller to prefix with the model and parameter names.
func ApplyParameter(ir *core.Submission, opts *Options, name string, v Value) error {
	switch name {
	case ParamSequenceID:
		switch {
		case v.Kind == KindInt:
			ir.CorrelationID = core.CorrelationID{Uint: uint64(v.Int)}
		case v.Kind == KindUint:
			ir.CorrelationID = core.CorrelationID{Uint: v.Uint}
		case v.Kind == KindString:
			ir.CorrelationID = core.CorrelationID{String: v.String, IsString: true}
		default:
			return fmt.Errorf("must be an integer or a string")
		}
	case ParamSequenceStart, ParamSequenceEnd, ParamEmptyFinal, ParamBinaryDataOutput:
		if v.Kind != KindBool {
			return fmt.Errorf("must be a bool")
		}
		switch {
		case name == ParamEmptyFinal:
			opts.EmptyFinal = v.Bool
		case name == ParamBinaryDataOutput:
			opts.BinaryDataOutput = v.Bool
		case v.Bool && name == ParamSequenceStart:
			ir.Flags |= core.RequestFlagSequenceStart
		case v.Bool:
			ir.Flags |= core.RequestFlagSequenceEnd
		}
	case ParamPriority, ParamTimeout:
		n, err := unsigned(v)
		if err != nil {
			return err
		}
		if name == ParamPriority {
			ir.Priority = n
		} else {
			ir.Timeout = time.Duration(n) * time.Microsecond
		}
	case ParamHeaders:
		// Forwarded headers: nothing to do.
	default:
		if strings.HasPrefix(name, "triton_") {
			return fmt.Errorf("parameters starting with triton_ are reserved")
		}
		p, err := backendParameter(name, v)
		if err != nil {
			return err
		}
		ir.Parameters = append(ir.Parameters, p)
	}
	return nil
}

func unsigned(v Value) (uint64, error) {
	switch v.Kind {
	case KindInt:
		if v.Int < 0 {
			return 0, fmt.Errorf("must not be negative")
		}
		return uint64(v.Int), nil
	case KindUint:
		return v.Uint, nil
	}
	return 0, fmt.Errorf("must be an integer")
}

func backendParameter(name string, v Value) (core.Parameter, error) {
	switch v.Kind {
	case KindBool:
		return core.BoolParam(name, v.Bool), nil
	case KindInt:
		return core.IntParam(name, v.Int), nil
	case KindUint:
		if v.Uint > math.MaxInt64 {
			return core.Parameter{}, fmt.Errorf("%d does not fit in an int64", v.Uint)
		}
		return core.IntParam(name, int64(v.Uint)), nil
	case KindString:
		return core.StringParam(name, v.String), nil
	case KindDouble:
		return core.DoubleParam(name, v.Double), nil
	}
	return core.Parameter{}, fmt.Errorf("has no value")
}
