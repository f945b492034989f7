package include

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// What the cache and repository agent headers must define, from Triton's
// tritoncache.h and tritonrepoagent.h (API 0.1). init adds them to the
// tables headers_test.go checks every header against.
var (
	pluginEnumValues = map[string]int64{
		// TRITONREPOAGENT_ArtifactType
		"TRITONREPOAGENT_ARTIFACT_FILESYSTEM": 0, "TRITONREPOAGENT_ARTIFACT_REMOTE_FILESYSTEM": 1,
		// TRITONREPOAGENT_ActionType
		"TRITONREPOAGENT_ACTION_LOAD": 0, "TRITONREPOAGENT_ACTION_LOAD_COMPLETE": 1,
		"TRITONREPOAGENT_ACTION_LOAD_FAIL": 2, "TRITONREPOAGENT_ACTION_UNLOAD": 3,
		"TRITONREPOAGENT_ACTION_UNLOAD_COMPLETE": 4,
	}
	pluginEnumTags = map[string]map[string]string{
		"tritoncache.h": {},
		"tritonrepoagent.h": {
			"TRITONREPOAGENT_artifacttype_enum": "TRITONREPOAGENT_ArtifactType",
			"TRITONREPOAGENT_actiontype_enum":   "TRITONREPOAGENT_ActionType",
		},
	}
	pluginHandleTypes = map[string][]string{
		"tritoncache.h":     {"TRITONCACHE_Cache", "TRITONCACHE_CacheEntry", "TRITONCACHE_Allocator"},
		"tritonrepoagent.h": {"TRITONREPOAGENT_Agent", "TRITONREPOAGENT_AgentModel"},
	}
	pluginVersionMacros = map[string]map[string]int{
		"tritoncache.h":     {"TRITONCACHE_API_VERSION_MAJOR": 0, "TRITONCACHE_API_VERSION_MINOR": 1},
		"tritonrepoagent.h": {"TRITONREPOAGENT_API_VERSION_MAJOR": 0, "TRITONREPOAGENT_API_VERSION_MINOR": 1},
	}
)

func init() {
	maps.Copy(enumValues, pluginEnumValues)
	maps.Copy(enumTags, pluginEnumTags)
	maps.Copy(handleTypes, pluginHandleTypes)
	maps.Copy(versionMacros, pluginVersionMacros)
}

func TestPluginEntryPointsAreExactlyTritons(t *testing.T) {
	tests := []struct {
		header string
		want   []string
	}{
		{"tritoncache.h", []string{"TRITONCACHE_CacheFinalize", "TRITONCACHE_CacheInitialize",
			"TRITONCACHE_CacheInsert", "TRITONCACHE_CacheLookup"}},
		{"tritonrepoagent.h", []string{"TRITONREPOAGENT_Finalize", "TRITONREPOAGENT_Initialize",
			"TRITONREPOAGENT_ModelAction", "TRITONREPOAGENT_ModelFinalize", "TRITONREPOAGENT_ModelInitialize"}},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			if got := entryPointsOf(t, tt.header); !slices.Equal(got, tt.want) {
				t.Errorf("entry points:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestPluginHeadersDeclareOnlyTheirOwnPrefix: each plugin header declares
// functions of its own prefix only, so a function of tritonserver.h is
// never declared twice and the exports test knows what each header adds.
func TestPluginHeadersDeclareOnlyTheirOwnPrefix(t *testing.T) {
	prefix := map[string]string{"tritoncache.h": "TRITONCACHE_", "tritonrepoagent.h": "TRITONREPOAGENT_"}
	seen := map[string]int{}
	for _, f := range mustFunctions(t) {
		p, ok := prefix[f.Header]
		if !ok {
			continue
		}
		seen[f.Header]++
		if !strings.HasPrefix(f.Name, p) {
			t.Errorf("%s declares %s, outside its prefix %s", f.Header, f.Name, p)
		}
	}
	for h := range prefix {
		if seen[h] == 0 {
			t.Errorf("%s declares nothing", h)
		}
	}
}

func TestSourceReturnsPluginHeaders(t *testing.T) {
	for name, want := range map[string]string{
		"tritoncache.h":                 "#define TRITONCACHE_API_VERSION_MINOR 1",
		"triton/core/tritonrepoagent.h": `#include "triton/core/tritonserver.h"`,
	} {
		src, err := Source(name)
		if err != nil {
			t.Fatalf("Source(%q): %v", name, err)
		}
		if !strings.Contains(src, want) {
			t.Errorf("Source(%q) does not contain %q", name, want)
		}
	}
}
