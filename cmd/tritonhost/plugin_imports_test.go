package main

import (
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// The host functions Triton's own plugins import, read from their sources
// (triton-inference-server/local_cache src/cache_api.cc, local_cache.cc,
// local_cache.h, the buffer-attribute setters of its earlier versions
// included; triton-inference-server/checksum_repository_agent
// src/checksum.cc). Both link Triton's libtritonserver.so stub, which the
// server provides (abi's stub), so they load when the binary exports every
// one of these.
var tritonPluginImports = map[string][]string{
	"local cache": {
		"TRITONCACHE_CacheEntryAddBuffer", "TRITONCACHE_CacheEntryBufferCount",
		"TRITONCACHE_CacheEntryGetBuffer", "TRITONCACHE_CacheEntrySetBuffer", "TRITONCACHE_Copy",
		"TRITONSERVER_BufferAttributesByteSize", "TRITONSERVER_BufferAttributesDelete",
		"TRITONSERVER_BufferAttributesMemoryType", "TRITONSERVER_BufferAttributesMemoryTypeId",
		"TRITONSERVER_BufferAttributesNew", "TRITONSERVER_BufferAttributesSetByteSize",
		"TRITONSERVER_BufferAttributesSetMemoryType", "TRITONSERVER_BufferAttributesSetMemoryTypeId",
		"TRITONSERVER_ErrorDelete", "TRITONSERVER_ErrorMessage", "TRITONSERVER_ErrorNew",
		"TRITONSERVER_MetricDelete", "TRITONSERVER_MetricFamilyDelete", "TRITONSERVER_MetricFamilyNew",
		"TRITONSERVER_MetricNew", "TRITONSERVER_MetricSet",
	},
	"checksum agent": {
		"TRITONREPOAGENT_ModelParameter", "TRITONREPOAGENT_ModelParameterCount",
		"TRITONREPOAGENT_ModelRepositoryLocation", "TRITONSERVER_ErrorNew",
	},
}

func TestTritonsLocalCacheAndChecksumAgentFindTheirImports(t *testing.T) {
	t.Parallel()
	exported := testenv.ReadDynamicSymbols(t, serverBinary).Defined
	for plugin, imports := range tritonPluginImports {
		for _, name := range imports {
			if isFunc, ok := exported[name]; !ok || !isFunc {
				t.Errorf("Triton's %s imports %s, which the binary does not export as a function", plugin, name)
			}
		}
	}
	// Ours: every TRITON* function they import is exported too.
	caches, agents := testenv.PluginDirs(t)
	for _, lib := range []string{caches + "/local/libtritoncache_local.so", agents + "/checksum/libtritonrepoagent_checksum.so"} {
		for _, name := range testenv.ReadDynamicSymbols(t, lib).Undefined {
			if _, ok := exported[name]; strings.HasPrefix(name, "TRITON") && !ok {
				t.Errorf("%s imports %s, which the binary does not export", lib, name)
			}
		}
	}
}
