package httpserver

import (
	"strconv"

	"tritonhost/core"
)

// The statistics as Triton's HTTP endpoint writes them: the fields of
// ModelStatistics in grpc_service.proto, snake_case, numbers as numbers.

type durationJSON struct {
	Count uint64 `json:"count"`
	Ns    uint64 `json:"ns"`
}

type inferStatsJSON struct {
	Success       durationJSON `json:"success"`
	Fail          durationJSON `json:"fail"`
	Queue         durationJSON `json:"queue"`
	ComputeInput  durationJSON `json:"compute_input"`
	ComputeInfer  durationJSON `json:"compute_infer"`
	ComputeOutput durationJSON `json:"compute_output"`
	CacheHit      durationJSON `json:"cache_hit"`
	CacheMiss     durationJSON `json:"cache_miss"`
}

type batchStatsJSON struct {
	BatchSize     uint64       `json:"batch_size"`
	ComputeInput  durationJSON `json:"compute_input"`
	ComputeInfer  durationJSON `json:"compute_infer"`
	ComputeOutput durationJSON `json:"compute_output"`
}

type responseStatsJSON struct {
	ComputeInfer  durationJSON `json:"compute_infer"`
	ComputeOutput durationJSON `json:"compute_output"`
	Success       durationJSON `json:"success"`
	Fail          durationJSON `json:"fail"`
	EmptyResponse durationJSON `json:"empty_response"`
	Cancel        durationJSON `json:"cancel"`
}

type memoryUsageJSON struct {
	Type     string `json:"type"`
	ID       int64  `json:"id"`
	ByteSize uint64 `json:"byte_size"`
}

type modelStatsJSON struct {
	Name           string                       `json:"name"`
	Version        string                       `json:"version"`
	LastInference  uint64                       `json:"last_inference"`
	InferenceCount uint64                       `json:"inference_count"`
	ExecutionCount uint64                       `json:"execution_count"`
	InferenceStats inferStatsJSON               `json:"inference_stats"`
	ResponseStats  map[string]responseStatsJSON `json:"response_stats"`
	BatchStats     []batchStatsJSON             `json:"batch_stats"`
	MemoryUsage    []memoryUsageJSON            `json:"memory_usage"`
}

func dur(d core.Duration) durationJSON { return durationJSON{Count: d.Count, Ns: d.Ns} }

func encodeStatistics(stats []core.ModelStatistics) any {
	out := make([]modelStatsJSON, 0, len(stats))
	for _, st := range stats {
		inf := st.Inference
		m := modelStatsJSON{
			Name: st.Name, Version: strconv.FormatInt(st.Version, 10), LastInference: st.LastInference,
			InferenceCount: st.InferenceCount, ExecutionCount: st.ExecutionCount,
			InferenceStats: inferStatsJSON{Success: dur(inf.Success), Fail: dur(inf.Fail), Queue: dur(inf.Queue),
				ComputeInput: dur(inf.ComputeInput), ComputeInfer: dur(inf.ComputeInfer), ComputeOutput: dur(inf.ComputeOutput),
				CacheHit: dur(inf.CacheHit), CacheMiss: dur(inf.CacheMiss)},
			ResponseStats: make(map[string]responseStatsJSON, len(st.Responses)),
			BatchStats:    make([]batchStatsJSON, 0, len(st.Batches)),
			MemoryUsage:   make([]memoryUsageJSON, 0, len(st.MemoryUsage)),
		}
		for _, b := range st.Batches {
			m.BatchStats = append(m.BatchStats, batchStatsJSON{BatchSize: b.BatchSize,
				ComputeInput: dur(b.ComputeInput), ComputeInfer: dur(b.ComputeInfer), ComputeOutput: dur(b.ComputeOutput)})
		}
		for k, r := range st.Responses {
			m.ResponseStats[k] = responseStatsJSON{ComputeInfer: dur(r.ComputeInfer), ComputeOutput: dur(r.ComputeOutput),
				Success: dur(r.Success), Fail: dur(r.Fail), EmptyResponse: dur(r.EmptyResponse), Cancel: dur(r.Cancel)}
		}
		for _, u := range st.MemoryUsage {
			m.MemoryUsage = append(m.MemoryUsage, memoryUsageJSON{Type: u.Type.String(), ID: u.ID, ByteSize: u.ByteSize})
		}
		out = append(out, m)
	}
	return struct {
		ModelStats []modelStatsJSON `json:"model_stats"`
	}{out}
}
