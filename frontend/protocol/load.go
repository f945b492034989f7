package protocol

import (
	"slices"
	"strings"

	"tritonhost/core"
)

// MaxLoadParameters bounds the parameters (a configuration and model
// files) of one load request; their bytes are bounded by the size of the
// request.
const MaxLoadParameters = 1024

// NoRepositoryName is Triton's answer to a repository request that names a
// repository.
func NoRepositoryName() error {
	return core.Errorf(core.CodeUnsupported, "'repository_name' specification is not supported")
}

// LoadOptions reads the parameters of a load request, in the order of
// their names, by Triton's rules and in its words: "config", a JSON model
// configuration used instead of the repository's, and "file:<path>", a
// model file sent in the request (see core.LoadOptions); any other name
// is refused. config and file decode one parameter's value the frontend's
// way, and say, in its words, what is wrong with its type.
func LoadOptions[P any](params map[string]P, config func(name string, p P) (string, error), file func(name string, p P) ([]byte, error)) (core.LoadOptions, error) {
	var opts core.LoadOptions
	if len(params) > MaxLoadParameters {
		return opts, TooMany("the load request", len(params), "parameters", MaxLoadParameters)
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
			return opts, core.Errorf(core.CodeInvalidArg, "unrecognized load parameter '%s'.", name)
		}
	}
	return opts, nil
}
