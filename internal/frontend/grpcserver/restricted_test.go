package grpcserver

import (
	"testing"

	"google.golang.org/grpc/health"
)

// TestEveryRegisteredMethodHasARestrictedCategory: each method the gRPC
// server serves (the inference service, health checking, reflection) falls
// in a category, so none escapes a restriction.
func TestEveryRegisteredMethodHasARestrictedCategory(t *testing.T) {
	s := &Service{health: health.NewServer()}
	g := s.NewGRPCServer()
	defer g.Stop()
	n := 0
	for service, info := range g.GetServiceInfo() {
		for _, m := range info.Methods {
			name := "/" + service + "/" + m.Name
			if _, ok := methodCategories[name]; !ok {
				t.Errorf("%s has no restricted category", name)
			}
			n++
		}
	}
	if n < 20 {
		t.Errorf("only %d methods registered", n)
	}
}
