package modelconfig

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// Validate checks a normalized config; errors name the model and the
// offending field.
//
// It applies the checks of Triton's ValidateModelConfig,
// ValidateModelIOConfig (ValidateModelInput, ValidateModelOutput,
// ValidateBatchIO) and ValidateInstanceGroup, and for ensembles
// ValidateEnsembleSchedulingConfig (see validate_ensemble.go); then it
// refuses the fields the server does not honour (unsupported.go). GPU
// availability is checked by Normalize, which knows the server's GPUs.
// Validate returns the first problem found.
func Validate(cfg *configpb.ModelConfig) error {
	if cfg == nil {
		return invalidf("", "", "configuration is missing")
	}
	if cfg.Name == "" {
		return invalidf("", "name", "must be set")
	}
	checks := []func(*configpb.ModelConfig) error{
		validateModel,
		validateDynamicBatching,
		validateSequenceBatching,
		validateEnsembleScheduling,
		validateModelMetrics,
		validateInputs,
		validateOutputs,
		validateBatchInputs,
		validateBatchOutputs,
		validateInstanceGroups,
		validateUnsupported,
	}
	for _, check := range checks {
		if err := check(cfg); err != nil {
			return err
		}
	}
	return nil
}

// backendPlatforms lists, for the framework backends Triton knows, the
// platforms that may accompany them (Triton's GetBackendType and
// GetBackendTypeFromPlatform). Other backends accept any platform.
var backendPlatforms = map[string][]string{
	backendTensorFlow: {platformTFGraphDef, platformTFSavedModel},
	backendTensorRT:   {platformTensorRT},
	backendONNX:       {platformONNX},
	backendPyTorch:    {platformLibTorch, platformTorchAOTI},
}

// validateModel checks the model-level fields of ValidateModelConfig.
func validateModel(cfg *configpb.ModelConfig) error {
	name := cfg.Name
	if cfg.Platform == platformEnsemble {
		if err := validateEnsembleModel(cfg); err != nil {
			return err
		}
	} else if cfg.Backend == "" {
		return invalidf(name, "backend", "must be set")
	}
	if platforms, known := backendPlatforms[cfg.Backend]; known && !slices.Contains(platforms, cfg.Platform) {
		return invalidf(name, "platform", "%q does not go with backend %q (want one of %q)", cfg.Platform, cfg.Backend, platforms)
	}
	if cfg.MaxBatchSize < 0 {
		return invalidf(name, "max_batch_size", "must be >= 0, got %d", cfg.MaxBatchSize)
	}
	if cfg.VersionPolicy == nil || cfg.VersionPolicy.PolicyChoice == nil {
		return invalidf(name, "version_policy", "must be set (Normalize sets the default)")
	}
	if cfg.GetModelTransactionPolicy().GetDecoupled() && cfg.GetResponseCache().GetEnable() {
		return invalidf(name, "response_cache", "is enabled, but the response cache does not currently support models with a 'decoupled' transaction policy; disable it")
	}
	return nil
}

// validateDynamicBatching checks preferred sizes, priority levels and the
// preserve_ordering restrictions.
func validateDynamicBatching(cfg *configpb.ModelConfig) error {
	db := cfg.GetDynamicBatching()
	if db == nil {
		return nil
	}
	name := cfg.Name
	for _, size := range db.PreferredBatchSize {
		if size <= 0 {
			return invalidf(name, "dynamic_batching.preferred_batch_size", "must be positive, got %d", size)
		}
		if size > cfg.MaxBatchSize {
			return invalidf(name, "dynamic_batching.preferred_batch_size", "holds %d, which exceeds max_batch_size %d", size, cfg.MaxBatchSize)
		}
	}
	levels := db.PriorityLevels
	if levels != 0 {
		if db.DefaultPriorityLevel == 0 || db.DefaultPriorityLevel > levels {
			return invalidf(name, "dynamic_batching.default_priority_level", "must be in [1, %d], got %d", levels, db.DefaultPriorityLevel)
		}
		for _, level := range sortedKeys(db.PriorityQueuePolicy) {
			if level == 0 || level > levels {
				return invalidf(name, "dynamic_batching.priority_queue_policy", "has priority level %d, outside [1, %d]", level, levels)
			}
		}
	}
	if db.PreserveOrdering {
		if levels > 1 {
			return invalidf(name, "dynamic_batching.priority_levels", "must be at most 1 when preserve_ordering is true, got %d", levels)
		}
		if delays(db.DefaultQueuePolicy) {
			return invalidf(name, "dynamic_batching.default_queue_policy.timeout_action", "cannot be DELAY when preserve_ordering is true")
		}
		for _, level := range sortedKeys(db.PriorityQueuePolicy) {
			if delays(db.PriorityQueuePolicy[level]) {
				return invalidf(name, fmt.Sprintf("dynamic_batching.priority_queue_policy[%d].timeout_action", level), "cannot be DELAY when preserve_ordering is true")
			}
		}
	}
	return nil
}

// delays reports whether a queue policy delays timed-out requests.
func delays(p *configpb.ModelQueuePolicy) bool {
	return p.GetDefaultTimeoutMicroseconds() != 0 && p.GetTimeoutAction() == configpb.ModelQueuePolicy_DELAY
}

// validateModelMetrics is Triton's ValidateModelMetrics.
func validateModelMetrics(cfg *configpb.ModelConfig) error {
	for i, mc := range cfg.GetModelMetrics().GetMetricControl() {
		where := fmt.Sprintf("model_metrics.metric_control[%d]", i)
		switch {
		case mc.GetMetricIdentifier() == nil:
			return invalidf(cfg.Name, where+".metric_identifier", "must be set")
		case mc.GetMetricIdentifier().GetFamily() == "":
			return invalidf(cfg.Name, where+".metric_identifier.family", "must be set")
		case mc.GetHistogramOptions() == nil:
			return invalidf(cfg.Name, where+".histogram_options", "must be set")
		case len(mc.GetHistogramOptions().GetBuckets()) == 0:
			return invalidf(cfg.Name, where+".histogram_options.buckets", "must not be empty")
		}
	}
	return nil
}

// sortedKeys returns the keys of m in ascending order, so that errors are
// deterministic.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}
