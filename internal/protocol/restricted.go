package protocol

import (
	"crypto/subtle"
	"fmt"
	"strings"
)

// Restricted APIs, as Triton's --http-restricted-api and
// --grpc-restricted-protocol: the operator names groups of endpoints
// (categories) and a header that clients must send, with a value, to use
// them; endpoints of the other categories stay open to everyone.

// Category is a group of endpoints that may be restricted as one.
type Category int

// Triton's categories, in its order.
const (
	CategoryHealth          Category = iota // liveness, readiness (server and model)
	CategoryMetadata                        // server and model metadata
	CategoryInference                       // infer, streaming infer, generate
	CategorySharedMemory                    // system and CUDA shared-memory regions
	CategoryModelConfig                     // model configuration
	CategoryModelRepository                 // repository index, model load and unload
	CategoryStatistics                      // model statistics
	CategoryTrace                           // trace settings
	CategoryLogging                         // log settings
	categoryCount
)

// categoryNames are the categories as flags name them (Triton's names).
var categoryNames = [categoryCount]string{"health", "metadata", "inference", "shared-memory", "model-config",
	"model-repository", "statistics", "trace", "logging"}

// String returns the category's name as flags write it.
func (c Category) String() string {
	if c < 0 || c >= categoryCount {
		return fmt.Sprintf("Category(%d)", int(c))
	}
	return categoryNames[c]
}

// Categories returns every category, in Triton's order.
func Categories() []Category {
	out := make([]Category, categoryCount)
	for i := range out {
		out[i] = Category(i)
	}
	return out
}

// GRPCRestrictedHeaderPrefix is what Triton puts before the key an
// operator names for gRPC: the metadata a client sends is
// "triton-grpc-protocol-<key>".
const GRPCRestrictedHeaderPrefix = "triton-grpc-protocol-"

// Restriction is the header a client must send to use a restricted
// category, and the value it must have.
type Restriction struct {
	Header string
	Value  string
}

// Allows reports whether values, a request's values of the header in the
// order they came, grant access: the first must equal the expected value
// (compared in constant time, so that the answer's timing does not reveal
// how much of a guess was right).
func (r Restriction) Allows(values []string) bool {
	return len(values) > 0 && subtle.ConstantTimeCompare([]byte(values[0]), []byte(r.Value)) == 1
}

// Restrictions says which categories are restricted and how. The zero
// value restricts nothing. Fill it with Add before serving; it is read-only
// afterwards, and then safe for concurrent use.
type Restrictions struct {
	by [categoryCount]*Restriction
}

// Add parses one flag value, "<category>[,<category>...]:<key>=<value>",
// and restricts those categories to clients sending header prefix+key with
// that value. flag names the flag in messages, and kind what a category is
// called there ("api" for HTTP, "protocol" for gRPC, as Triton's messages
// say). A category may be restricted by one flag value only. gRPC header
// names are lowercase: pass lower to fold the key to lowercase.
func (rs *Restrictions) Add(flag, kind, prefix string, lower bool, arg string) error {
	cats, setting, ok := strings.Cut(arg, ":")
	key, value, ok2 := strings.Cut(setting, "=")
	if !ok || !ok2 || cats == "" || key == "" || value == "" {
		return fmt.Errorf("--%s option format is '<%ss>:<key>=<value>'. Got %s", flag, kind, arg)
	}
	if lower {
		key = strings.ToLower(key)
	}
	if err := checkHeaderName(key); err != nil {
		return fmt.Errorf("--%s %q: the key %q %v", flag, arg, key, err)
	}
	if err := checkHeaderValue(value); err != nil {
		return fmt.Errorf("--%s: the value for key %q %v", flag, key, err)
	}
	r := &Restriction{Header: prefix + key, Value: value}
	for _, name := range strings.Split(cats, ",") {
		c, ok := categoryByName(name)
		if !ok {
			return fmt.Errorf("--%s: unknown restricted %s '%s' (want one of %s)", flag, kind, name, strings.Join(categoryNames[:], ", "))
		}
		if rs.by[c] != nil {
			return fmt.Errorf("--%s: restricted %s '%s' can not be specified in multiple config groups", flag, kind, name)
		}
		rs.by[c] = r
	}
	return nil
}

func categoryByName(name string) (Category, bool) {
	for i, n := range categoryNames {
		if n == name {
			return Category(i), true
		}
	}
	return 0, false
}

// For returns the restriction of c; ok is false when c is open to all.
func (rs *Restrictions) For(c Category) (r Restriction, ok bool) {
	if rs == nil || c < 0 || c >= categoryCount || rs.by[c] == nil {
		return Restriction{}, false
	}
	return *rs.by[c], true
}

// Empty reports whether no category is restricted.
func (rs *Restrictions) Empty() bool {
	if rs == nil {
		return true
	}
	for _, r := range rs.by {
		if r != nil {
			return false
		}
	}
	return true
}

// checkHeaderName accepts a key that HTTP and gRPC can carry as a header
// name: letters, digits and -_. only.
func checkHeaderName(key string) error {
	for _, c := range key {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("may hold letters, digits, '-', '_' and '.' only")
		}
	}
	if strings.HasSuffix(strings.ToLower(key), "-bin") {
		return fmt.Errorf("may not end in -bin (gRPC's binary headers)")
	}
	return nil
}

// checkHeaderValue accepts a value a client can send as it is: printable
// ASCII, without spaces at either end (HTTP drops those).
func checkHeaderValue(v string) error {
	for i := 0; i < len(v); i++ {
		if v[i] < ' ' || v[i] > '~' {
			return fmt.Errorf("may hold printable ASCII only")
		}
	}
	if strings.TrimSpace(v) != v {
		return fmt.Errorf("may not begin or end with a space")
	}
	return nil
}
