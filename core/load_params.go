package core

import (
	"slices"
	"strings"
)

// MaxLoadParameters bounds the parameters (a configuration and model
// files) of one load request; their bytes are bounded by the size of the
// request.
const MaxLoadParameters = 1024

// ParseLoadParameters reads the parameters of a load request, in the order
// of their names, by Triton's rules and in its words: "config", a JSON
// model configuration used instead of the repository's, and "file:<path>",
// a model file sent in the request (see LoadOptions); any other name is
// refused. config and file decode one parameter's value the caller's way
// (a gRPC message, JSON, a C parameter), and say, in its words, what is
// wrong with its type.
func ParseLoadParameters[P any](params map[string]P, config func(name string, p P) (string, error), file func(name string, p P) ([]byte, error)) (LoadOptions, error) {
	var opts LoadOptions
	if len(params) > MaxLoadParameters {
		return opts, Errorf(CodeInvalidArg, "the load request has %d parameters, more than the %d the server accepts", len(params), MaxLoadParameters)
	}
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		switch {
		case name == "config":
			v, err := config(name, params[name])
			if err != nil {
				return opts, err
			}
			opts.Config = []byte(v)
		case strings.HasPrefix(name, "file:"):
			v, err := file(name, params[name])
			if err != nil {
				return opts, err
			}
			if opts.Files == nil {
				opts.Files = map[string][]byte{}
			}
			opts.Files[strings.TrimPrefix(name, "file:")] = v
		default:
			return opts, Errorf(CodeInvalidArg, "unrecognized load parameter '%s'.", name)
		}
	}
	return opts, nil
}
