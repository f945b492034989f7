package core

import "strconv"

// The JSON documents Triton's protocols and its in-process API describe
// models with (TRITONSERVER_ServerModelMetadata and ServerModelStatistics,
// HTTP's model metadata and statistics routes, gRPC's ModelMetadata), in
// one definition each, so that every frontend and the C API say the same.

// TensorMetadata is one input or output of a model's metadata.
type TensorMetadata struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

// ModelMetadata is a model's metadata, members in Triton's order.
type ModelMetadata struct {
	Name     string           `json:"name"`
	Versions []string         `json:"versions"`
	Platform string           `json:"platform"`
	Inputs   []TensorMetadata `json:"inputs"`
	Outputs  []TensorMetadata `json:"outputs"`
}

// Metadata returns the metadata of m: the version asked for (version > 0),
// or every ready version of the model; its platform, or its backend when
// the configuration names no platform; and its tensors, with a -1 batch
// dimension in front when the model batches.
func (s *Server) Metadata(m *Model, version int64) ModelMetadata {
	cfg := m.Config()
	md := ModelMetadata{Name: m.Name(), Platform: cfg.GetPlatform(), Versions: []string{},
		Inputs: []TensorMetadata{}, Outputs: []TensorMetadata{}}
	if md.Platform == "" {
		md.Platform = cfg.GetBackend()
	}
	if version > 0 {
		md.Versions = append(md.Versions, strconv.FormatInt(version, 10))
	} else {
		for _, v := range s.Versions(m.Name()) {
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
		md.Inputs = append(md.Inputs, TensorMetadata{Name: in.GetName(), Datatype: DataType(in.GetDataType()).String(), Shape: shape(in.GetDims())})
	}
	for _, out := range cfg.GetOutput() {
		md.Outputs = append(md.Outputs, TensorMetadata{Name: out.GetName(), Datatype: DataType(out.GetDataType()).String(), Shape: shape(out.GetDims())})
	}
	return md
}

// StatisticsReport is the statistics of model versions as Triton's JSON
// has them: the fields of ModelStatistics in grpc_service.proto,
// snake_case, numbers as numbers.
type StatisticsReport struct {
	ModelStats []ModelStatisticsReport `json:"model_stats"`
}

// DurationReport is a count and its total duration in nanoseconds.
type DurationReport struct {
	Count uint64 `json:"count"`
	Ns    uint64 `json:"ns"`
}

// InferStatisticsReport is InferStatistics in JSON.
type InferStatisticsReport struct {
	Success       DurationReport `json:"success"`
	Fail          DurationReport `json:"fail"`
	Queue         DurationReport `json:"queue"`
	ComputeInput  DurationReport `json:"compute_input"`
	ComputeInfer  DurationReport `json:"compute_infer"`
	ComputeOutput DurationReport `json:"compute_output"`
	CacheHit      DurationReport `json:"cache_hit"`
	CacheMiss     DurationReport `json:"cache_miss"`
}

// BatchStatisticsReport is BatchStatistics in JSON.
type BatchStatisticsReport struct {
	BatchSize     uint64         `json:"batch_size"`
	ComputeInput  DurationReport `json:"compute_input"`
	ComputeInfer  DurationReport `json:"compute_infer"`
	ComputeOutput DurationReport `json:"compute_output"`
}

// ResponseStatisticsReport is ResponseStatistics in JSON.
type ResponseStatisticsReport struct {
	ComputeInfer  DurationReport `json:"compute_infer"`
	ComputeOutput DurationReport `json:"compute_output"`
	Success       DurationReport `json:"success"`
	Fail          DurationReport `json:"fail"`
	EmptyResponse DurationReport `json:"empty_response"`
	Cancel        DurationReport `json:"cancel"`
}

// MemoryUsageReport is MemoryUsage in JSON.
type MemoryUsageReport struct {
	Type     string `json:"type"`
	ID       int64  `json:"id"`
	ByteSize uint64 `json:"byte_size"`
}

// ModelStatisticsReport is ModelStatistics in JSON.
type ModelStatisticsReport struct {
	Name           string                              `json:"name"`
	Version        string                              `json:"version"`
	LastInference  uint64                              `json:"last_inference"`
	InferenceCount uint64                              `json:"inference_count"`
	ExecutionCount uint64                              `json:"execution_count"`
	InferenceStats InferStatisticsReport               `json:"inference_stats"`
	ResponseStats  map[string]ResponseStatisticsReport `json:"response_stats"`
	BatchStats     []BatchStatisticsReport             `json:"batch_stats"`
	MemoryUsage    []MemoryUsageReport                 `json:"memory_usage"`
}

func durationReport(d Duration) DurationReport { return DurationReport(d) }

// NewStatisticsReport returns stats as Triton's JSON has them.
func NewStatisticsReport(stats []ModelStatistics) StatisticsReport {
	out := make([]ModelStatisticsReport, 0, len(stats))
	for _, st := range stats {
		inf := st.Inference
		m := ModelStatisticsReport{
			Name: st.Name, Version: strconv.FormatInt(st.Version, 10), LastInference: st.LastInference,
			InferenceCount: st.InferenceCount, ExecutionCount: st.ExecutionCount,
			InferenceStats: InferStatisticsReport{Success: durationReport(inf.Success), Fail: durationReport(inf.Fail),
				Queue: durationReport(inf.Queue), ComputeInput: durationReport(inf.ComputeInput),
				ComputeInfer: durationReport(inf.ComputeInfer), ComputeOutput: durationReport(inf.ComputeOutput),
				CacheHit: durationReport(inf.CacheHit), CacheMiss: durationReport(inf.CacheMiss)},
			ResponseStats: make(map[string]ResponseStatisticsReport, len(st.Responses)),
			BatchStats:    make([]BatchStatisticsReport, 0, len(st.Batches)),
			MemoryUsage:   make([]MemoryUsageReport, 0, len(st.MemoryUsage)),
		}
		for _, b := range st.Batches {
			m.BatchStats = append(m.BatchStats, BatchStatisticsReport{BatchSize: b.BatchSize,
				ComputeInput: durationReport(b.ComputeInput), ComputeInfer: durationReport(b.ComputeInfer),
				ComputeOutput: durationReport(b.ComputeOutput)})
		}
		for k, r := range st.Responses {
			m.ResponseStats[k] = ResponseStatisticsReport{ComputeInfer: durationReport(r.ComputeInfer),
				ComputeOutput: durationReport(r.ComputeOutput), Success: durationReport(r.Success),
				Fail: durationReport(r.Fail), EmptyResponse: durationReport(r.EmptyResponse), Cancel: durationReport(r.Cancel)}
		}
		for _, u := range st.MemoryUsage {
			m.MemoryUsage = append(m.MemoryUsage, MemoryUsageReport{Type: u.Type.String(), ID: u.ID, ByteSize: u.ByteSize})
		}
		out = append(out, m)
	}
	return StatisticsReport{ModelStats: out}
}
