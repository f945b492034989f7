package modelconfig

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// normalizeInstanceGroups is Triton's NormalizeInstanceGroup plus the part
// of ValidateInstanceGroup that needs the server's GPU list:
//
//   - no instance_group: one group named after the model, seeded from the
//     first usable preferred group of the backend (a KIND_GPU preference is
//     skipped on a CPU-only server); otherwise kind KIND_AUTO, resolved below.
//   - unnamed groups are named "<model>_<index>".
//   - KIND_AUTO becomes KIND_CPU when the server has no GPUs or the group
//     lists a GPU the server lacks, otherwise KIND_GPU.
//   - preferred groups of the same kind supply missing GPUs and counts.
//   - a count below 1 becomes 1 (2 for CPU groups of the tensorflow and
//     onnxruntime backends, as in Triton's SetDefaultInstanceCount).
//   - a KIND_GPU group without gpus gets every available GPU, ascending.
//   - a KIND_GPU group on a server without GPUs, or naming a GPU the server
//     lacks, is an error.
func normalizeInstanceGroups(cfg *configpb.ModelConfig, d Defaults) error {
	if cfg.GetEnsembleScheduling() != nil {
		return nil // instance groups do not apply to ensembles
	}
	gpus := uniqueSorted(d.GPUs)
	available := func(id int32) bool {
		_, found := slices.BinarySearch(gpus, int(id))
		return found
	}

	if len(cfg.InstanceGroup) == 0 {
		cfg.InstanceGroup = append(cfg.InstanceGroup, defaultGroup(cfg.Name, d.PreferredGroups, len(gpus) > 0, available))
	}

	for i, g := range cfg.InstanceGroup {
		if g == nil {
			g = &configpb.ModelInstanceGroup{}
			cfg.InstanceGroup[i] = g
		}
		if g.Name == "" {
			g.Name = cfg.Name + "_" + strconv.Itoa(i)
		}
		if g.Kind == configpb.ModelInstanceGroup_KIND_AUTO {
			g.Kind = configpb.ModelInstanceGroup_KIND_GPU
			if len(gpus) == 0 || slices.ContainsFunc(g.Gpus, func(id int32) bool { return !available(id) }) {
				g.Kind = configpb.ModelInstanceGroup_KIND_CPU
			}
		}
		applyPreferred(g, d.PreferredGroups, available)
		if g.Count < 1 {
			g.Count = defaultInstanceCount(g.Kind, cfg.Backend)
		}
		if g.Kind == configpb.ModelInstanceGroup_KIND_GPU && len(g.Gpus) == 0 {
			for _, id := range gpus {
				g.Gpus = append(g.Gpus, int32(id))
			}
		}
		if err := checkGPUsAvailable(cfg.Name, g, gpus, available); err != nil {
			return err
		}
	}
	return nil
}

// defaultGroup builds the group Triton adds when a config has none.
func defaultGroup(model string, preferred []*configpb.ModelInstanceGroup, haveGPUs bool, available func(int32) bool) *configpb.ModelInstanceGroup {
	g := &configpb.ModelInstanceGroup{Name: model}
	for _, pg := range preferred {
		if pg == nil {
			continue
		}
		switch pg.Kind {
		case configpb.ModelInstanceGroup_KIND_GPU:
			if !haveGPUs {
				continue
			}
			for _, id := range pg.Gpus {
				if available(id) {
					g.Gpus = append(g.Gpus, id)
				}
			}
		case configpb.ModelInstanceGroup_KIND_AUTO:
			g.Gpus = append(g.Gpus, pg.Gpus...)
		}
		g.Kind = pg.Kind
		g.Count = pg.Count
		break
	}
	return g
}

// applyPreferred lets preferred groups of the same (resolved) kind supply a
// GPU list and a count the group does not set itself.
func applyPreferred(g *configpb.ModelInstanceGroup, preferred []*configpb.ModelInstanceGroup, available func(int32) bool) {
	for _, pg := range preferred {
		if pg == nil || pg.Kind != g.Kind {
			continue
		}
		if g.Kind == configpb.ModelInstanceGroup_KIND_GPU && len(g.Gpus) == 0 && len(pg.Gpus) > 0 {
			for _, id := range pg.Gpus {
				if available(id) {
					g.Gpus = append(g.Gpus, id)
				}
			}
			if len(g.Gpus) == 0 {
				continue
			}
		}
		if g.Count < 1 && pg.Count > 0 {
			g.Count = pg.Count
		}
	}
}

// defaultInstanceCount is Triton's SetDefaultInstanceCount.
func defaultInstanceCount(kind configpb.ModelInstanceGroup_Kind, backend string) int32 {
	if kind == configpb.ModelInstanceGroup_KIND_CPU && (backend == backendTensorFlow || backend == backendONNX) {
		return 2
	}
	return 1
}

// checkGPUsAvailable rejects GPU groups the server cannot host.
func checkGPUsAvailable(model string, g *configpb.ModelInstanceGroup, gpus []int, available func(int32) bool) error {
	if g.Kind != configpb.ModelInstanceGroup_KIND_GPU {
		return nil
	}
	where := fmt.Sprintf("instance_group %q: ", g.Name)
	if len(g.Gpus) == 0 {
		return invalidf(model, where+"kind", "is KIND_GPU but the server has no GPUs available")
	}
	for _, id := range g.Gpus {
		if !available(id) {
			return invalidf(model, where+"gpus", "lists GPU %d, which is not available (available GPUs: %s)", id, listInts(gpus))
		}
	}
	return nil
}

// uniqueSorted returns the distinct values of ids in ascending order.
func uniqueSorted(ids []int) []int {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// listInts renders ids as "0, 1, 2", or "none".
func listInts(ids []int) string {
	if len(ids) == 0 {
		return "none"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(id)
	}
	return strings.Join(parts, ", ")
}
