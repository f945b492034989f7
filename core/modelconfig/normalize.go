package modelconfig

import (
	"github.com/tritonhost/tritonhost/core/configpb"
)

// Defaults is what Normalize needs to know about the server.
type Defaults struct {
	ModelName string // the model's directory name; used when config has no name
	GPUs      []int  // CUDA device ids available to the server (empty: CPU-only)

	// PreferredGroups are the instance groups the backend asked for through
	// TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup, in the order
	// it added them. Only kind, count and gpus are read. Optional.
	PreferredGroups []*configpb.ModelInstanceGroup
}

// sequenceIdleDefaultMicroseconds is Triton's default for
// sequence_batching.max_sequence_idle_microseconds (one second).
const sequenceIdleDefaultMicroseconds = 1000000

// Normalize fills in what Triton fills in before a model loads, in Triton's
// order (core src/model_config_utils.cc):
//
//   - name: taken from d.ModelName when empty; a name that differs from a
//     non-empty d.ModelName is an error, as Triton requires the directory and
//     the model to have the same name.
//   - backend, platform and default_model_filename: the parts of
//     AutoCompleteBackendFields that need no look at the model directory
//     (known platform/file names, and `<model>.<backend>` directory names).
//   - NormalizeModelConfig: version_policy defaults to latest{num_versions:
//     1}; an empty dynamic_batching.preferred_batch_size (and
//     sequence_batching.oldest.preferred_batch_size) becomes
//     [max_batch_size] when max_batch_size > 0; a zero
//     sequence_batching.max_sequence_idle_microseconds becomes 1000000;
//     optimization.input_pinned_memory and output_pinned_memory default to
//     {enable: true}, which also creates optimization.
//   - NormalizeInstanceGroup: see normalizeInstanceGroups. Groups that need
//     GPUs the server lacks are errors here, since Validate has no GPU list.
//
// Normalize is idempotent. Errors wrap ErrInvalid and name the model and the
// field.
func Normalize(cfg *configpb.ModelConfig, d Defaults) error {
	if cfg == nil {
		return invalidf(d.ModelName, "", "configuration is missing")
	}
	if err := normalizeName(cfg, d.ModelName); err != nil {
		return err
	}
	if err := autofillBackendFields(cfg); err != nil {
		return err
	}
	normalizeModel(cfg)
	return normalizeInstanceGroups(cfg, d)
}

// normalizeName applies the name default and Triton's rule that the model
// name must equal its directory name.
func normalizeName(cfg *configpb.ModelConfig, dirName string) error {
	if cfg.Name == "" {
		cfg.Name = dirName
	}
	if cfg.Name == "" {
		return invalidf("", "name", "must be set: the configuration has none and no model directory name was given")
	}
	if dirName != "" && cfg.Name != dirName {
		return invalidf(cfg.Name, "name", "must equal the model directory name %q", dirName)
	}
	return nil
}

// normalizeModel is Triton's NormalizeModelConfig.
func normalizeModel(cfg *configpb.ModelConfig) {
	if cfg.VersionPolicy == nil || cfg.VersionPolicy.PolicyChoice == nil {
		cfg.VersionPolicy = &configpb.ModelVersionPolicy{
			PolicyChoice: &configpb.ModelVersionPolicy_Latest_{
				Latest: &configpb.ModelVersionPolicy_Latest{NumVersions: 1},
			},
		}
	}

	switch s := cfg.SchedulingChoice.(type) {
	case *configpb.ModelConfig_DynamicBatching:
		if s.DynamicBatching == nil {
			s.DynamicBatching = &configpb.ModelDynamicBatching{}
		}
		db := s.DynamicBatching
		if len(db.PreferredBatchSize) == 0 && cfg.MaxBatchSize > 0 {
			db.PreferredBatchSize = []int32{cfg.MaxBatchSize}
		}
	case *configpb.ModelConfig_SequenceBatching:
		if s.SequenceBatching == nil {
			s.SequenceBatching = &configpb.ModelSequenceBatching{}
		}
		sb := s.SequenceBatching
		if sb.MaxSequenceIdleMicroseconds == 0 {
			sb.MaxSequenceIdleMicroseconds = sequenceIdleDefaultMicroseconds
		}
		if o, ok := sb.StrategyChoice.(*configpb.ModelSequenceBatching_Oldest); ok {
			if o.Oldest == nil {
				o.Oldest = &configpb.ModelSequenceBatching_StrategyOldest{}
			}
			if len(o.Oldest.PreferredBatchSize) == 0 && cfg.MaxBatchSize > 0 {
				o.Oldest.PreferredBatchSize = []int32{cfg.MaxBatchSize}
			}
		}
	case *configpb.ModelConfig_EnsembleScheduling:
		// Triton leaves ensembles' optimization and instance groups alone.
		return
	}

	if cfg.Optimization == nil {
		cfg.Optimization = &configpb.ModelOptimizationPolicy{}
	}
	if cfg.Optimization.InputPinnedMemory == nil {
		cfg.Optimization.InputPinnedMemory = &configpb.ModelOptimizationPolicy_PinnedMemoryBuffer{Enable: true}
	}
	if cfg.Optimization.OutputPinnedMemory == nil {
		cfg.Optimization.OutputPinnedMemory = &configpb.ModelOptimizationPolicy_PinnedMemoryBuffer{Enable: true}
	}
}
