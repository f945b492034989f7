package releasetest

import (
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

func TestDebVersionOfGitDescribe(t *testing.T) {
	root := testenv.RepoRoot(t)
	tests := []struct{ describe, deb string }{
		{"v0.1.0", "0.1.0"},
		{"v0.1.0-dirty", "0.1.0+dirty"},
		{"v0.1.0-3-g1a2b3c4", "0.1.0+git3.g1a2b3c4"},
		{"v0.1.0-3-g1a2b3c4-dirty", "0.1.0+git3.g1a2b3c4.dirty"},
		{"v0.2.0-rc.1", "0.2.0~rc.1"},
		{"v0.2.0-rc.1-2-gabcdef0", "0.2.0~rc.1+git2.gabcdef0"},
		{"v1.10.0", "1.10.0"},
		{"1a2b3c4", "0.0.0~git.1a2b3c4"},
		{"1a2b3c4-dirty", "0.0.0~git.1a2b3c4+dirty"},
		{"dev", "0.0.0~dev"},
		{"my build/7", "0.0.0~my.build.7"},
	}
	for _, tc := range tests {
		if got := strings.TrimSpace(run(t, root, nil, "bash", "mk/debversion.sh", tc.describe)); got != tc.deb {
			t.Errorf("debversion.sh %q = %q, want %q", tc.describe, got, tc.deb)
		}
	}
}

// Each version sorts before the next, for dpkg as for git describe's
// history: untagged builds, a pre-release and builds after it, the release,
// builds after it, the next release.
func TestDebVersionsSortAsReleases(t *testing.T) {
	requireTools(t, "dpkg")
	root := testenv.RepoRoot(t)
	order := []string{
		"1a2b3c4", "v0.1.0-rc.1", "v0.1.0-rc.1-dirty", "v0.1.0-rc.1-4-gabcdef0",
		"v0.1.0", "v0.1.0-dirty", "v0.1.0-2-g1a2b3c4", "v0.1.0-10-g1a2b3c4", "v0.1.1", "v0.10.0",
	}
	deb := make([]string, len(order))
	for i, v := range order {
		deb[i] = strings.TrimSpace(run(t, root, nil, "bash", "mk/debversion.sh", v))
	}
	for i := 1; i < len(deb); i++ {
		if _, err := runErr("", nil, "dpkg", "--compare-versions", deb[i-1], "lt", deb[i]); err != nil {
			t.Errorf("dpkg does not order %s (%s) before %s (%s)", deb[i-1], order[i-1], deb[i], order[i])
		}
	}
}
