package modelconfig

import (
	"slices"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// SelectVersions applies a version policy to the version numbers found on
// disk and returns those to load, ascending.
//
//   - latest{num_versions: n}: the n highest versions; n = 0 counts as 1,
//     and so does a nil policy or one with no choice set.
//   - all{}: every version.
//   - specific{versions: [...]}: the listed versions that exist on disk.
//
// Duplicates in available are ignored. The result may be empty; Triton then
// refuses to load the model ("at least one version must be available").
func SelectVersions(policy *configpb.ModelVersionPolicy, available []int64) []int64 {
	versions := slices.Clone(available)
	slices.Sort(versions)
	versions = slices.Compact(versions)

	switch {
	case policy.GetAll() != nil:
		return versions
	case policy.GetSpecific() != nil:
		var out []int64
		for _, v := range versions {
			if slices.Contains(policy.GetSpecific().GetVersions(), v) {
				out = append(out, v)
			}
		}
		return out
	default:
		n := int(policy.GetLatest().GetNumVersions())
		if n == 0 {
			n = 1
		}
		if n > len(versions) {
			n = len(versions)
		}
		return versions[len(versions)-n:]
	}
}
