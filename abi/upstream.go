package abi

import (
	"context"
	"encoding/json"
	"io"
	"slices"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/core/modelconfig"
)

// Upstream is the server that answers a host's in-process API about
// models, when that server lives in another process: the worker process
// of an isolated backend holds only the version it executes, and the
// server that started it schedules every request and holds every model.
// With HostOptions.Upstream set, the backend's model queries, its requests
// (TRITONSERVER_ServerInferAsync), its model loads and unloads, statistics
// and index go to the upstream; the host's own server only runs what the
// upstream forwards to it. Implementations are safe for concurrent use;
// each call may block on the other process for as long as the operation
// takes there.
type Upstream interface {
	// Model describes version (0: the newest ready) of model name, with
	// the errors core.Server.Model gives.
	Model(name string, version int64) (*UpstreamModel, error)
	// Submit submits req to m, as core.Server.Submit does: a validation
	// error comes back at once and fn is never called; otherwise fn
	// receives every response, the last final, and req.Finished runs once
	// the upstream is done with the request (and with its inputs'
	// buffers). Cancelling ctx cancels the request.
	Submit(ctx context.Context, m *UpstreamModel, req *core.Submission, fn core.ResponseFunc) error
	// LoadModel and UnloadModel are core.Server.LoadModelWith and
	// StartUnload.
	LoadModel(name string, opts core.LoadOptions) error
	UnloadModel(name string, dependents bool) error
	// Statistics and Index return the JSON of
	// TRITONSERVER_ServerModelStatistics and TRITONSERVER_ServerModelIndex
	// (StatisticsJSON, IndexJSON).
	Statistics(name string, version int64) ([]byte, error)
	Index(readyOnly bool) ([]byte, error)
	// ServerMetadata and MetricsText return the JSON of
	// TRITONSERVER_ServerMetadata (ServerMetadataJSON) and the text of
	// TRITONSERVER_MetricsFormatted (MetricsText).
	ServerMetadata() ([]byte, error)
	MetricsText() ([]byte, error)
}

// ServerMetadataJSON returns TRITONSERVER_ServerMetadata's JSON for a
// server described by info.
func ServerMetadataJSON(info ServerInfo) ([]byte, error) {
	js, err := json.Marshal(core.ServerMetadata{Name: info.Name, Version: info.Version, Extensions: append([]string{}, info.Extensions...)})
	if err != nil {
		return nil, core.Errorf(core.CodeInternal, "server metadata: %v", err)
	}
	return js, nil
}

// MetricsText writes the metrics of a server described by info in
// Prometheus' text format (nothing when it keeps none).
func MetricsText(info ServerInfo, w io.Writer) error {
	if info.Metrics == nil {
		return nil
	}
	return info.Metrics(w)
}

// UpstreamModel is one model version as an Upstream describes it.
type UpstreamModel struct {
	Name    string
	Version int64
	Ready   bool
	// ConfigJSON is the version's configuration as the server completed
	// it (TRITONSERVER_ServerModelConfig), MetadataJSON its metadata
	// (TRITONSERVER_ServerModelMetadata).
	ConfigJSON   []byte
	MetadataJSON []byte

	config *configpb.ModelConfig // parsed from ConfigJSON on first use
}

// DescribeModel returns what an Upstream answers for version (0: newest
// ready) of model name of srv: for the process that serves a host's
// upstream.
func DescribeModel(srv *core.Server, name string, version int64) (*UpstreamModel, error) {
	m, err := srv.Model(name, version)
	if err != nil {
		return nil, err
	}
	md, err := json.Marshal(srv.Metadata(m, version))
	if err != nil {
		return nil, core.Errorf(core.CodeInternal, "model %q: metadata: %v", name, err)
	}
	return &UpstreamModel{Name: m.Name(), Version: m.Version(), Ready: m.Readiness() == core.ModelReady,
		ConfigJSON: m.ConfigJSON(), MetadataJSON: md, config: m.Config()}, nil
}

// Config returns the model's configuration.
func (m *UpstreamModel) Config() (*configpb.ModelConfig, error) {
	if m.config == nil {
		cfg, err := modelconfig.FromJSON(m.ConfigJSON)
		if err != nil {
			return nil, core.Errorf(core.CodeInternal, "model %q: the configuration its server sent: %v", m.Name, err)
		}
		m.config = cfg
	}
	return m.config, nil
}

// StatisticsJSON returns the statistics of the ready versions of model
// name of srv ("" for every model, a negative version for every version)
// as TRITONSERVER_ServerModelStatistics writes them, with Triton's errors
// for a model or version not ready.
func StatisticsJSON(srv *core.Server, name string, version int64) ([]byte, error) {
	stats, err := modelStatistics(srv, name, version)
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(core.NewStatisticsReport(stats))
	if err != nil {
		return nil, core.Errorf(core.CodeInternal, "statistics: %v", err)
	}
	return js, nil
}

// modelStatistics returns the statistics of the ready versions of a model
// ("" for every model, a negative version for every version), with
// Triton's errors for a model or version not ready.
func modelStatistics(srv *core.Server, name string, version int64) ([]core.ModelStatistics, error) {
	if name == "" {
		return srv.Statistics("", 0)
	}
	ready := srv.Versions(name)
	if len(ready) == 0 {
		return nil, core.Errorf(core.CodeInvalidArg, "requested model '%s' is not available", name)
	}
	if version >= 0 && !slices.Contains(ready, version) {
		return nil, core.Errorf(core.CodeInvalidArg, "requested model version is not available for model '%s'", name)
	}
	return srv.Statistics(name, max(version, 0))
}

// indexEntry is one model version of TRITONSERVER_ServerModelIndex, as
// Triton writes it: no version when none is known, no reason when empty.
type indexEntry struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	State   string `json:"state"`
	Reason  string `json:"reason,omitempty"`
}

// IndexJSON returns srv's repository index as
// TRITONSERVER_ServerModelIndex writes it (only ready versions when
// readyOnly).
func IndexJSON(srv *core.Server, readyOnly bool) ([]byte, error) {
	index := []indexEntry{}
	for _, st := range srv.RepositoryIndex() {
		if readyOnly && st.Readiness != core.ModelReady {
			continue
		}
		index = append(index, indexEntry{Name: st.Name, Version: st.Version, State: st.Readiness.String(), Reason: st.Reason})
	}
	js, err := json.Marshal(index)
	if err != nil {
		return nil, core.Errorf(core.CodeInternal, "model index: %v", err)
	}
	return js, nil
}
