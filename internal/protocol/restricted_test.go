package protocol_test

import (
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/protocol"
)

// TestRestrictionsParseTritonsSyntax: "<categories>:<key>=<value>", one
// group per flag value, gRPC keys behind Triton's prefix and lowercase;
// every mistake is refused with a message naming it.
func TestRestrictionsParseTritonsSyntax(t *testing.T) {
	var rs protocol.Restrictions
	if !rs.Empty() {
		t.Fatal("the zero value restricts something")
	}
	for _, arg := range []string{"health,metadata:Admin-Key=s3cret:x=y", "inference:infer-key=v"} {
		if err := rs.Add("grpc-restricted-protocol", "protocol", protocol.GRPCRestrictedHeaderPrefix, true, arg); err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
	}
	for c, want := range map[protocol.Category]protocol.Restriction{
		protocol.CategoryHealth:    {"triton-grpc-protocol-admin-key", "s3cret:x=y"},
		protocol.CategoryMetadata:  {"triton-grpc-protocol-admin-key", "s3cret:x=y"},
		protocol.CategoryInference: {"triton-grpc-protocol-infer-key", "v"},
	} {
		if got, ok := rs.For(c); !ok || got != want {
			t.Errorf("%s: %+v %v, want %+v", c, got, ok, want)
		}
	}
	for _, c := range []protocol.Category{protocol.CategorySharedMemory, protocol.CategoryModelConfig, protocol.CategoryModelRepository, protocol.CategoryStatistics, protocol.CategoryTrace, protocol.CategoryLogging} {
		if _, ok := rs.For(c); ok {
			t.Errorf("%s is restricted", c)
		}
	}

	for arg, msg := range map[string]string{
		"health":                    "option format is '<apis>:<key>=<value>'. Got health",
		"health:key":                "option format",
		":key=value":                "option format",
		"health:=value":             "option format",
		"health:key=":               "option format",
		"healthy:key=value":         "unknown restricted api 'healthy'",
		"health,,logging:key=value": "unknown restricted api ''",
		"health,health:key=value":   "restricted api 'health' can not be specified in multiple config groups",
		"trace:the key=value":       "may hold letters, digits",
		"trace:key-bin=value":       "may not end in -bin",
		"trace:key=two words ":      "may not begin or end with a space",
		"trace:key=tab\there":       "printable ASCII",
	} {
		var rs protocol.Restrictions
		err := rs.Add("http-restricted-api", "api", "", false, arg)
		if err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), "--http-restricted-api") {
			t.Errorf("%q: %v, want an error with %q", arg, err, msg)
		}
	}
	var twice protocol.Restrictions
	_ = twice.Add("http-restricted-api", "api", "", false, "logging:a=b")
	if err := twice.Add("http-restricted-api", "api", "", false, "statistics,logging:c=d"); err == nil || !strings.Contains(err.Error(), "'logging' can not be specified in multiple") {
		t.Errorf("a category in two flag values: %v", err)
	}
	var http protocol.Restrictions
	_ = http.Add("http-restricted-api", "api", "", false, "model-repository,shared-memory:Admin-Key=k")
	if r, _ := http.For(protocol.CategorySharedMemory); r.Header != "Admin-Key" {
		t.Errorf("HTTP header %q, want the key as given", r.Header)
	}
}

func TestRestrictionAllowsTheExactValueOnly(t *testing.T) {
	r := protocol.Restriction{Header: "k", Value: "secret"}
	for _, c := range []struct {
		values []string
		want   bool
	}{{nil, false}, {[]string{""}, false}, {[]string{"secre"}, false}, {[]string{"secrets"}, false}, {[]string{"Secret"}, false},
		{[]string{"secret"}, true}, {[]string{"secret", "other"}, true}, {[]string{"other", "secret"}, false}} {
		if got := r.Allows(c.values); got != c.want {
			t.Errorf("%q: %v, want %v", c.values, got, c.want)
		}
	}
}

func TestCategoriesAreTritonsNine(t *testing.T) {
	var names []string
	for _, c := range protocol.Categories() {
		names = append(names, c.String())
	}
	if got := strings.Join(names, ","); got != "health,metadata,inference,shared-memory,model-config,model-repository,statistics,trace,logging" {
		t.Errorf("categories %s", got)
	}
}
