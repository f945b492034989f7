package modelconfig

import (
	"fmt"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// validateUnsupported refuses the fields of Triton's model configuration
// that the server does not honour and that would change what a client or
// a backend sees: a model that sets one fails to load, with an error
// naming the field, rather than run without it. docs/model-config.md
// lists every field and what becomes of it.
func validateUnsupported(cfg *configpb.ModelConfig) error {
	name := cfg.Name
	if cfg.GetDynamicBatching().GetPreserveOrdering() {
		return invalidf(name, "dynamic_batching.preserve_ordering",
			"is not supported: responses are delivered as each request completes, not held back into the order the requests arrived; remove it (or set it false)")
	}
	if cfg.GetSequenceBatching().GetOldest().GetPreserveOrdering() {
		return invalidf(name, "sequence_batching.oldest.preserve_ordering",
			"is not supported: responses are delivered as each request completes, not held back into the order the requests arrived; remove it (or set it false)")
	}
	for i, g := range cfg.GetInstanceGroup() {
		if len(g.GetSecondaryDevices()) > 0 {
			return invalidf(name, fmt.Sprintf("instance_group[%d].secondary_devices", i),
				"is not supported: instances are given no secondary device (TRITONBACKEND_ModelInstanceSecondaryDeviceCount reports 0); remove it")
		}
	}
	if len(cfg.GetMetricTags()) > 0 {
		return invalidf(name, "metric_tags",
			"is not supported: a model's metrics carry its model and version labels only; remove it")
	}
	return nil
}
