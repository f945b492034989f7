package modelconfig

import (
	"fmt"
	"strconv"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// validateInstanceGroups is Triton's ValidateInstanceGroup without the GPU
// availability checks, which Normalize performs. It also requires count >= 1,
// which Triton guarantees by normalizing.
func validateInstanceGroups(cfg *configpb.ModelConfig) error {
	model := cfg.Name
	if cfg.GetEnsembleScheduling() != nil {
		return nil // ensembles have none (validateEnsembleScheduling)
	}
	if len(cfg.InstanceGroup) == 0 {
		return invalidf(model, "instance_group", "must have at least one group (Normalize adds a default)")
	}
	for i, g := range cfg.InstanceGroup {
		where := fmt.Sprintf("instance_group %q:", g.GetName())
		if g.GetName() == "" {
			where = fmt.Sprintf("instance_group[%d]:", i)
		}
		switch g.GetKind() {
		case configpb.ModelInstanceGroup_KIND_CPU, configpb.ModelInstanceGroup_KIND_MODEL:
			if len(g.GetGpus()) > 0 {
				return invalidf(model, where+" gpus", "must be empty for kind %s", g.GetKind())
			}
		case configpb.ModelInstanceGroup_KIND_GPU:
			if len(g.GetGpus()) == 0 {
				return invalidf(model, where+" gpus", "must list at least one GPU for kind KIND_GPU")
			}
			for _, id := range g.GetGpus() {
				if id < 0 {
					return invalidf(model, where+" gpus", "holds %d, which is not a valid GPU id", id)
				}
			}
		case configpb.ModelInstanceGroup_KIND_AUTO:
			return invalidf(model, where+" kind", "is KIND_AUTO; it must be resolved to KIND_CPU or KIND_GPU (Normalize does this)")
		default:
			return invalidf(model, where+" kind", "is %d, not a known instance group kind", g.GetKind())
		}
		if g.GetCount() < 1 {
			return invalidf(model, where+" count", "must be >= 1, got %d", g.GetCount())
		}
		if len(g.GetProfile()) > 0 && cfg.Platform != platformTensorRT {
			return invalidf(model, where+" profile", "is only supported on the %s platform", platformTensorRT)
		}
		for _, p := range g.GetProfile() {
			if n, err := strconv.Atoi(p); err != nil || n < 0 {
				return invalidf(model, where+" profile", "holds %q, which is not a non-negative integer", p)
			}
		}
	}
	return nil
}
