package protocol

import (
	"slices"
	"strconv"

	"tritonhost/core"
)

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

// TensorMetadata is one input or output of a model's metadata.
type TensorMetadata struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

// ModelMetadata is what the model metadata call reports.
type ModelMetadata struct {
	Name     string           `json:"name"`
	Versions []string         `json:"versions"`
	Platform string           `json:"platform"`
	Inputs   []TensorMetadata `json:"inputs"`
	Outputs  []TensorMetadata `json:"outputs"`
}

// Metadata returns a model's metadata: its loaded versions, its platform
// (the backend when no platform is set) and its tensors, with a -1 batch
// dimension in front when the model batches.
func Metadata(srv *core.Server, m *core.Model) ModelMetadata {
	cfg := m.Config()
	md := ModelMetadata{Name: m.Name(), Platform: cfg.GetPlatform(), Versions: []string{},
		Inputs: []TensorMetadata{}, Outputs: []TensorMetadata{}}
	if md.Platform == "" {
		md.Platform = cfg.GetBackend()
	}
	for _, v := range srv.Versions(m.Name()) {
		md.Versions = append(md.Versions, strconv.FormatInt(v, 10))
	}
	shape := func(dims []int64) []int64 {
		if cfg.GetMaxBatchSize() > 0 {
			return append([]int64{-1}, dims...)
		}
		return append([]int64{}, dims...)
	}
	for _, in := range cfg.GetInput() {
		md.Inputs = append(md.Inputs, TensorMetadata{Name: in.GetName(), Datatype: core.DataType(in.GetDataType()).String(), Shape: shape(in.GetDims())})
	}
	for _, out := range cfg.GetOutput() {
		md.Outputs = append(md.Outputs, TensorMetadata{Name: out.GetName(), Datatype: core.DataType(out.GetDataType()).String(), Shape: shape(out.GetDims())})
	}
	return md
}

// InputType returns the data type of m's input name, and whether m has it.
func InputType(m *core.Model, name string) (core.DataType, bool) {
	for _, in := range m.Config().GetInput() {
		if in.GetName() == name {
			return core.DataType(in.GetDataType()), true
		}
	}
	return core.TypeInvalid, false
}
