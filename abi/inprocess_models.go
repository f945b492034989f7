package abi

import (
	"encoding/json"
	"strconv"

	"tritonhost/core"
)

// tensorMetadata and modelMetadata are the model metadata JSON Triton's
// TRITONSERVER_ServerModelMetadata returns, members in its order.
type tensorMetadata struct {
	Name     string  `json:"name"`
	DataType string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

type modelMetadata struct {
	Name     string           `json:"name"`
	Versions []string         `json:"versions"`
	Platform string           `json:"platform"`
	Inputs   []tensorMetadata `json:"inputs"`
	Outputs  []tensorMetadata `json:"outputs"`
}

// modelMetadataJSON describes m as Triton does: the version asked for, or
// every ready version when asked for the newest (a version below 1); the
// platform, or the backend when the configuration names no platform (as
// the gRPC ModelMetadata answers); and each tensor with -1 for the batch
// dimension of a batching model.
func modelMetadataJSON(srv *core.Server, m *core.Model, version int64) ([]byte, error) {
	cfg := m.Config()
	md := modelMetadata{Name: m.Name(), Platform: cfg.GetPlatform(), Versions: []string{},
		Inputs: []tensorMetadata{}, Outputs: []tensorMetadata{}}
	if md.Platform == "" {
		md.Platform = cfg.GetBackend()
	}
	if version > 0 {
		md.Versions = append(md.Versions, strconv.FormatInt(version, 10))
	} else {
		for _, v := range srv.Versions(m.Name()) {
			md.Versions = append(md.Versions, strconv.FormatInt(v, 10))
		}
	}
	shape := func(dims []int64) []int64 {
		if cfg.GetMaxBatchSize() > 0 {
			return append([]int64{-1}, dims...)
		}
		return append([]int64{}, dims...)
	}
	for _, in := range cfg.GetInput() {
		md.Inputs = append(md.Inputs, tensorMetadata{in.GetName(), core.DataType(in.GetDataType()).String(), shape(in.GetDims())})
	}
	for _, out := range cfg.GetOutput() {
		md.Outputs = append(md.Outputs, tensorMetadata{out.GetName(), core.DataType(out.GetDataType()).String(), shape(out.GetDims())})
	}
	return json.Marshal(md)
}
