package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/server"
)

// flagAliases are the serve flags that set another flag's field.
var flagAliases = map[string]string{
	"model-store":         "Models.Repositories",        // --model-repository
	"strict-model-config": "Models.DisableAutoComplete", // --disable-auto-complete-config
}

// notFlags are the fields of server.Config that no serve flag sets: what
// the command sets itself, and what embedding programs set.
var notFlags = []string{"Version", "Models.PollOnRequest", "Plugins.CacheJSON", "Isolation.WorkerCommand", "Isolation.NoWorkers",
	"Metrics.Listen", "GC.Unmanaged", "Lifecycle.ShutdownStarted"}

// otherValue returns a value for a flag other than its default.
func otherValue(t *testing.T, f *pflag.Flag) string {
	t.Helper()
	switch f.Value.Type() {
	case "bool":
		return strconv.FormatBool(f.DefValue != "true")
	case "int", "int64":
		n, err := strconv.ParseInt(f.DefValue, 10, 64)
		if err != nil {
			t.Fatalf("--%s: default %q: %v", f.Name, f.DefValue, err)
		}
		return strconv.FormatInt(n+1, 10)
	case "float64":
		n, err := strconv.ParseFloat(f.DefValue, 64)
		if err != nil {
			t.Fatalf("--%s: default %q: %v", f.Name, f.DefValue, err)
		}
		return strconv.FormatFloat(n+0.5, 'g', -1, 64)
	case "string", "stringArray":
		return "other"
	}
	t.Fatalf("--%s: a flag of type %s", f.Name, f.Value.Type())
	return ""
}

// changedFields returns the paths (GRPC.Port) of the fields where a and b
// differ.
func changedFields(a, b reflect.Value, path string) []string {
	if a.Kind() == reflect.Struct {
		var out []string
		for i := range a.NumField() {
			name := a.Type().Field(i).Name
			if path != "" {
				name = path + "." + name
			}
			out = append(out, changedFields(a.Field(i), b.Field(i), name)...)
		}
		return out
	}
	if a.Kind() == reflect.Func {
		if a.IsNil() != b.IsNil() {
			return []string{path}
		}
		return nil
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return []string{path}
	}
	return nil
}

// leafFields returns the paths of every field of a struct type that is not
// a struct itself.
func leafFields(t reflect.Type, path string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Name
		if path != "" {
			name = path + "." + name
		}
		if f.Type.Kind() == reflect.Struct {
			out = append(out, leafFields(f.Type, name)...)
		} else {
			out = append(out, name)
		}
	}
	return out
}

// fieldDocs returns the doc comment of every field of the struct types of
// server/config.go, by type and field (GRPCConfig.Port); a field declared
// in a group under one comment gets the group's.
func fieldDocs(t *testing.T) map[string]string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(testenv.RepoRoot(t), "server", "config.go"), nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	ast.Inspect(file, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return false
		}
		last := ""
		for _, f := range st.Fields.List {
			doc := f.Doc.Text() + f.Comment.Text()
			if doc == "" {
				doc = last
			}
			last = doc
			for _, name := range f.Names {
				docs[ts.Name.Name+"."+name.Name] = doc
			}
		}
		return false
	})
	return docs
}

// docOf returns the doc comment of the field at path in server.Config.
func docOf(docs map[string]string, path string) string {
	typ := reflect.TypeFor[server.Config]()
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		f, _ := typ.FieldByName(p)
		typ = f.Type
	}
	return docs[typ.Name()+"."+parts[len(parts)-1]]
}

// TestEveryServeFlagSetsItsConfigField: each flag of serve, set to a
// value other than its default, changes one field of the server.Config
// the command runs the server with, a field of its own whose doc comment
// names the flag; and every field of server.Config is set by a flag but
// those notFlags lists.
func TestEveryServeFlagSetsItsConfigField(t *testing.T) {
	t.Parallel()
	docs := fieldDocs(t)
	defaults := func() (*serveFlags, *pflag.FlagSet) {
		var s serveFlags
		f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		s.bind(f)
		return &s, f
	}
	s, _ := defaults()
	base, err := s.config()
	if err != nil {
		t.Fatal(err)
	}
	byField := map[string]string{}
	var names []string
	newServeCommand().Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if len(names) < 150 {
		t.Fatalf("serve has %d flags", len(names))
	}
	for _, name := range names {
		s, f := defaults()
		fl := f.Lookup(name)
		if fl == nil {
			t.Errorf("--%s: a flag of serve that serveFlags does not bind", name)
			continue
		}
		if err := f.Set(name, otherValue(t, fl)); err != nil {
			t.Fatalf("--%s: %v", name, err)
		}
		c, err := s.config()
		if err != nil {
			t.Fatalf("--%s: %v", name, err)
		}
		changed := changedFields(reflect.ValueOf(c), reflect.ValueOf(base), "")
		if len(changed) != 1 {
			t.Errorf("--%s changes the fields %q, want one", name, changed)
			continue
		}
		field := changed[0]
		if alias, ok := flagAliases[name]; ok {
			if field != alias {
				t.Errorf("--%s changes %s, want %s", name, field, alias)
			}
			continue
		}
		if other, dup := byField[field]; dup {
			t.Errorf("--%s and --%s both change %s", name, other, field)
		}
		byField[field] = name
		doc := docOf(docs, field)
		listener := strings.Contains(field, ".SSL.") && strings.Contains(doc, "--<listener>-"+strings.SplitN(name, "-", 2)[1])
		if !strings.Contains(doc, "--"+name) && !listener {
			t.Errorf("--%s changes %s, whose doc comment does not name it: %q", name, field, doc)
		}
	}
	for _, field := range leafFields(reflect.TypeFor[server.Config](), "") {
		if _, ok := byField[field]; !ok && !slices.Contains(notFlags, field) {
			t.Errorf("server.Config.%s: no serve flag sets it", field)
		}
	}
}
