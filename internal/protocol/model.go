package protocol

import "slices"

// DefaultServerName is the server id that server metadata reports by
// default: Triton's default --id, which clients check.
const DefaultServerName = "triton"

// Extensions are the protocol extensions the server implements, as server
// metadata lists them over either protocol (Triton's names, in Triton's
// order; like Triton, the list leaves out "generate", which the HTTP
// endpoint serves all the same).
var Extensions = []string{
	"sequence",
	"model_repository",
	"model_repository(unload_dependents)",
	"schedule_policy",
	"model_configuration",
	"system_shared_memory",
	"binary_tensor_data",
	"parameters",
	"statistics",
	"trace",
	"logging",
}

// ServerExtensions returns the extensions server metadata lists:
// Extensions, with cuda_shared_memory where Triton lists it (after
// system_shared_memory) when cuda says the server can open CUDA regions.
func ServerExtensions(cuda bool) []string {
	out := slices.Clone(Extensions)
	if cuda {
		at := slices.Index(out, "system_shared_memory") + 1
		out = slices.Insert(out, at, "cuda_shared_memory")
	}
	return out
}
