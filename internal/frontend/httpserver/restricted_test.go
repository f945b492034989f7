package httpserver

import (
	"net/http/httptest"
	"testing"

	"github.com/tritonhost/tritonhost/internal/protocol"
)

// TestEveryRouteHasItsTritonCategory: each route the server maps, asked
// the way a client asks it, is served by a pattern of the category Triton
// puts that endpoint in.
func TestEveryRouteHasItsTritonCategory(t *testing.T) {
	mux := (&Server{}).routes()
	cats := routeCategories()
	for _, c := range []struct {
		method, path string
		want         protocol.Category
	}{
		{"GET", "/v2/health/live", protocol.CategoryHealth},
		{"GET", "/v2/health/ready", protocol.CategoryHealth},
		{"GET", "/v2/models/m/ready", protocol.CategoryHealth},
		{"GET", "/v2/models/m/versions/2/ready", protocol.CategoryHealth},
		{"GET", "/v2", protocol.CategoryMetadata},
		{"GET", "/v2/models/m", protocol.CategoryMetadata},
		{"GET", "/v2/models/m/versions/2", protocol.CategoryMetadata},
		{"POST", "/v2/models/m/infer", protocol.CategoryInference},
		{"POST", "/v2/models/m/versions/2/infer", protocol.CategoryInference},
		{"POST", "/v2/models/a%2Fb/infer", protocol.CategoryInference},
		{"POST", "/v2/models/m/generate", protocol.CategoryInference},
		{"POST", "/v2/models/m/versions/2/generate", protocol.CategoryInference},
		{"POST", "/v2/models/m/generate_stream", protocol.CategoryInference},
		{"POST", "/v2/models/m/versions/2/generate_stream", protocol.CategoryInference},
		{"GET", "/v2/systemsharedmemory/status", protocol.CategorySharedMemory},
		{"GET", "/v2/systemsharedmemory/region/r/status", protocol.CategorySharedMemory},
		{"POST", "/v2/systemsharedmemory/region/r/register", protocol.CategorySharedMemory},
		{"POST", "/v2/systemsharedmemory/unregister", protocol.CategorySharedMemory},
		{"POST", "/v2/systemsharedmemory/region/r/unregister", protocol.CategorySharedMemory},
		{"GET", "/v2/cudasharedmemory/status", protocol.CategorySharedMemory},
		{"GET", "/v2/cudasharedmemory/region/r/status", protocol.CategorySharedMemory},
		{"POST", "/v2/cudasharedmemory/region/r/register", protocol.CategorySharedMemory},
		{"POST", "/v2/cudasharedmemory/unregister", protocol.CategorySharedMemory},
		{"POST", "/v2/cudasharedmemory/region/r/unregister", protocol.CategorySharedMemory},
		{"GET", "/v2/models/m/config", protocol.CategoryModelConfig},
		{"GET", "/v2/models/m/versions/2/config", protocol.CategoryModelConfig},
		{"POST", "/v2/repository/index", protocol.CategoryModelRepository},
		{"POST", "/v2/repository/models/m/load", protocol.CategoryModelRepository},
		{"POST", "/v2/repository/models/m/unload", protocol.CategoryModelRepository},
		{"POST", "/v2/repository/repo/index", protocol.CategoryModelRepository},
		{"POST", "/v2/repository/repo/models/m/load", protocol.CategoryModelRepository},
		{"GET", "/v2/models/stats", protocol.CategoryStatistics},
		{"GET", "/v2/models/m/stats", protocol.CategoryStatistics},
		{"GET", "/v2/models/m/versions/2/stats", protocol.CategoryStatistics},
		{"GET", "/v2/trace/setting", protocol.CategoryTrace},
		{"POST", "/v2/models/m/trace/setting", protocol.CategoryTrace},
		{"GET", "/v2/models/m/versions/2/trace/setting", protocol.CategoryTrace},
		{"GET", "/v2/logging", protocol.CategoryLogging},
		{"POST", "/v2/logging", protocol.CategoryLogging},
	} {
		_, pattern := mux.Handler(httptest.NewRequest(c.method, c.path, nil))
		if got, ok := cats[pattern]; !ok || got != c.want {
			t.Errorf("%s %s: pattern %q, category %v (%v), want %v", c.method, c.path, pattern, got, ok, c.want)
		}
	}
}
