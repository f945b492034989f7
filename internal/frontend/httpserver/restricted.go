package httpserver

import (
	"fmt"
	"net/http"

	"github.com/tritonhost/tritonhost/internal/protocol"
)

// routeCategories puts every route pattern of routes() in Triton's
// restricted-API category. A test checks every route against it.
func routeCategories() map[string]protocol.Category {
	m := map[string]protocol.Category{
		"GET /v2/health/live":                       protocol.CategoryHealth,
		"GET /v2/health/ready":                      protocol.CategoryHealth,
		"GET /v2":                                   protocol.CategoryMetadata,
		"GET /v2/models/stats":                      protocol.CategoryStatistics,
		"GET /v2/logging":                           protocol.CategoryLogging,
		"POST /v2/logging":                          protocol.CategoryLogging,
		"/v2/trace/setting":                         protocol.CategoryTrace,
		"POST /v2/repository/index":                 protocol.CategoryModelRepository,
		"POST /v2/repository/models/{model}/load":   protocol.CategoryModelRepository,
		"POST /v2/repository/models/{model}/unload": protocol.CategoryModelRepository,
		"POST /v2/repository/{repository}/index":    protocol.CategoryModelRepository,
		"POST /v2/repository/{repository}/models/{model}/{action}": protocol.CategoryModelRepository,
	}
	for _, base := range []string{"/v2/models/{model}", "/v2/models/{model}/versions/{version}"} {
		m["GET "+base] = protocol.CategoryMetadata
		m["GET "+base+"/ready"] = protocol.CategoryHealth
		m["GET "+base+"/config"] = protocol.CategoryModelConfig
		m["GET "+base+"/stats"] = protocol.CategoryStatistics
		m["POST "+base+"/infer"] = protocol.CategoryInference
		m["POST "+base+"/generate"] = protocol.CategoryInference
		m["POST "+base+"/generate_stream"] = protocol.CategoryInference
		m[base+"/trace/setting"] = protocol.CategoryTrace
	}
	for _, base := range []string{"/v2/systemsharedmemory", "/v2/systemsharedmemory/region/{region}",
		"/v2/cudasharedmemory", "/v2/cudasharedmemory/region/{region}"} {
		m["GET "+base+"/status"] = protocol.CategorySharedMemory
		m["POST "+base+"/register"] = protocol.CategorySharedMemory
		m["POST "+base+"/unregister"] = protocol.CategorySharedMemory
	}
	return m
}

// restricted wraps next, which serves the routes of mux, so that a
// request to a route of a restricted category without the header and
// value that category requires is answered 403 {"error": "This API is
// restricted, expecting header '<header>'"}, Triton's answer, before its
// handler runs (and before its body is read). The route is the pattern mux
// itself would serve the request with, so escaped paths cannot slip past.
// A route that has no category is refused while anything is restricted: a
// route added without one fails closed. With nothing restricted, next is
// returned as it is.
func restricted(mux *http.ServeMux, next http.Handler, rs *protocol.Restrictions) http.Handler {
	if rs.Empty() {
		return next
	}
	cats := routeCategories()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := mux.Handler(r)
		switch c, ok := cats[pattern]; {
		case pattern == "" || pattern == "/": // no route: 404 or 405
		case !ok:
			writeJSON(w, http.StatusForbidden, errorBody{Error: fmt.Sprintf("This API is restricted: route %q has no restricted-API category", pattern)})
			return
		default:
			if res, ok := rs.For(c); ok && !res.Allows(r.Header.Values(res.Header)) {
				writeJSON(w, http.StatusForbidden, errorBody{Error: fmt.Sprintf("This API is restricted, expecting header '%s'", res.Header)})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
