package protocol

import (
	"github.com/tritonhost/tritonhost/core"
)

// MaxLoadParameters bounds the parameters (a configuration and model
// files) of one load request: core.MaxLoadParameters.
const MaxLoadParameters = core.MaxLoadParameters

// NoRepositoryName is Triton's answer to a repository request that names a
// repository.
func NoRepositoryName() error {
	return core.Errorf(core.CodeUnsupported, "'repository_name' specification is not supported")
}

// LoadOptions reads the parameters of a load request by Triton's rules
// (core.ParseLoadParameters); config and file decode one parameter's value
// the frontend's way, and say, in its words, what is wrong with its type.
func LoadOptions[P any](params map[string]P, config func(name string, p P) (string, error), file func(name string, p P) ([]byte, error)) (core.LoadOptions, error) {
	if len(params) > MaxLoadParameters {
		return core.LoadOptions{}, TooMany("the load request", len(params), "parameters", MaxLoadParameters)
	}
	return core.ParseLoadParameters(params, config, file)
}
