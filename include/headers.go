// Package include holds tritonhost's C ABI headers, triton/core/tritonserver.h
// and triton/core/tritonbackend.h, and those of the two other plugin kinds,
// triton/core/tritoncache.h (response caches) and
// triton/core/tritonrepoagent.h (repository agents), and reads the function
// declarations out of them, so that tests elsewhere can compare what the headers promise with what
// the host binary exports and what backends import, without a second list
// that could drift.
//
// The parser understands the headers' own layout, not C in general: every
// function declaration starts with one of the export macros
// TRITONSERVER_DECLSPEC, TRITONBACKEND_DECLSPEC or TRITONBACKEND_ISPEC (or
// the TRITONCACHE_ and TRITONREPOAGENT_ pairs) and ends at the next
// semicolon.
package include

import (
	"embed"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
)

//go:embed triton/core/tritonserver.h triton/core/tritonbackend.h
//go:embed triton/core/tritoncache.h triton/core/tritonrepoagent.h
var headers embed.FS

// headerFiles lists the headers in the order Functions reports them:
// tritonbackend.h includes tritonserver.h, so the server header comes first.
var headerFiles = []string{
	"triton/core/tritonserver.h",
	"triton/core/tritonbackend.h",
	"triton/core/tritoncache.h",
	"triton/core/tritonrepoagent.h",
}

// The export macros that open a declaration.
const (
	macroServer     = "TRITONSERVER_DECLSPEC"
	macroBackend    = "TRITONBACKEND_DECLSPEC"
	macroEntryPoint = "TRITONBACKEND_ISPEC"
)

// The export macros of the cache and repository agent headers: a DECLSPEC
// opens a host function, an ISPEC an entry point the plugin implements.
const (
	macroCache           = "TRITONCACHE_DECLSPEC"
	macroCacheEntryPoint = "TRITONCACHE_ISPEC"
	macroAgent           = "TRITONREPOAGENT_DECLSPEC"
	macroAgentEntryPoint = "TRITONREPOAGENT_ISPEC"
)

// declarationMacros are every macro that opens a declaration.
var declarationMacros = []string{macroServer, macroBackend, macroEntryPoint,
	macroCache, macroCacheEntryPoint, macroAgent, macroAgentEntryPoint}

// entryPointMacros are the macros that open a plugin-implemented function.
var entryPointMacros = map[string]bool{macroEntryPoint: true, macroCacheEntryPoint: true, macroAgentEntryPoint: true}

// Function is one function declared by the ABI headers.
type Function struct {
	Name       string // e.g. "TRITONBACKEND_RequestInput"
	Header     string // "tritonserver.h", "tritonbackend.h", "tritoncache.h" or "tritonrepoagent.h"
	EntryPoint bool   // true for *_ISPEC functions, which plugins (backends, caches, agents) implement and the host looks up with dlsym
	// Decl is the declaration without its export macro and without the
	// trailing semicolon, on one line with single spaces, e.g.
	// "TRITONSERVER_Error* TRITONBACKEND_RequestId(TRITONBACKEND_Request* request, const char** id)".
	Decl string
}

// Functions returns every function the headers declare, in header order:
// tritonserver.h, tritonbackend.h, tritoncache.h, tritonrepoagent.h. The
// slice is a fresh copy the caller may modify.
func Functions() ([]Function, error) {
	fns, err := parsedFunctions()
	if err != nil {
		return nil, err
	}
	return append([]Function(nil), fns...), nil
}

// HostFunctions returns the functions the host must implement and export
// (EntryPoint == false), in header order.
func HostFunctions() ([]Function, error) {
	fns, err := parsedFunctions()
	if err != nil {
		return nil, err
	}
	var host []Function
	for _, f := range fns {
		if !f.EntryPoint {
			host = append(host, f)
		}
	}
	return host, nil
}

// Source returns the embedded text of a header by base name,
// "tritonserver.h", "tritonbackend.h", "tritoncache.h" or "tritonrepoagent.h".
// A path ending in one of those names, such as "triton/core/tritonbackend.h",
// is accepted too.
func Source(name string) (string, error) {
	base := path.Base(name)
	for _, file := range headerFiles {
		if path.Base(file) == base {
			b, err := headers.ReadFile(file)
			if err != nil {
				return "", fmt.Errorf("read embedded header %q: %w", file, err)
			}
			return string(b), nil
		}
	}
	return "", fmt.Errorf("no ABI header named %q (want tritonserver.h, tritonbackend.h, tritoncache.h or tritonrepoagent.h)", name)
}

// parsedFunctions parses the embedded headers once; they cannot change while
// the program runs.
var parsedFunctions = sync.OnceValues(func() ([]Function, error) {
	var all []Function
	for _, file := range headerFiles {
		src, err := Source(file)
		if err != nil {
			return nil, err
		}
		fns, err := parseHeader(path.Base(file), src)
		if err != nil {
			return nil, err
		}
		all = append(all, fns...)
	}
	return all, nil
})

var (
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	lineComment  = regexp.MustCompile(`//[^\n]*`)
	macroToken   = regexp.MustCompile(`\b(` + strings.Join(declarationMacros, "|") + `)\b`)
	spaceRun     = regexp.MustCompile(`\s+`)
	// declShape matches a normalised declaration: return type, name, parameters.
	declShape = regexp.MustCompile(`^(.+?[\s*])([A-Za-z_][A-Za-z0-9_]*)\((.*)\)$`)
)

// parseHeader returns the functions declared in one header's source text.
func parseHeader(header, src string) ([]Function, error) {
	code := stripPreprocessor(stripComments(src))
	var fns []Function
	seen := map[string]bool{}
	for _, loc := range macroToken.FindAllStringSubmatchIndex(code, -1) {
		macro := code[loc[2]:loc[3]]
		end := strings.IndexByte(code[loc[1]:], ';')
		if end < 0 {
			return nil, fmt.Errorf("%s: declaration after %s has no terminating ';'", header, macro)
		}
		decl := normalise(code[loc[1] : loc[1]+end])
		_, name, _, err := splitDecl(decl)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", header, err)
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: %s declared twice", header, name)
		}
		seen[name] = true
		fns = append(fns, Function{
			Name:       name,
			Header:     header,
			EntryPoint: entryPointMacros[macro],
			Decl:       decl,
		})
	}
	if len(fns) == 0 {
		return nil, fmt.Errorf("%s: no function declarations found", header)
	}
	return fns, nil
}

// stripComments removes C and C++ comments. The headers contain no string
// literals with comment markers, other than in preprocessor lines, which are
// dropped afterwards anyway.
func stripComments(src string) string {
	src = blockComment.ReplaceAllString(src, " ")
	return lineComment.ReplaceAllString(src, "")
}

// stripPreprocessor drops preprocessor directives, including their
// continuation lines, so that the macro definitions themselves are not taken
// for declarations.
func stripPreprocessor(src string) string {
	var out strings.Builder
	continued := false
	for _, line := range strings.Split(src, "\n") {
		directive := continued || strings.HasPrefix(strings.TrimSpace(line), "#")
		continued = directive && strings.HasSuffix(strings.TrimRight(line, " \t\r"), `\`)
		if !directive {
			out.WriteString(line)
		}
		out.WriteByte('\n')
	}
	return out.String()
}

// normalise puts a declaration on one line with single spaces and no space
// just inside parentheses or before commas.
func normalise(decl string) string {
	s := strings.TrimSpace(spaceRun.ReplaceAllString(decl, " "))
	s = strings.ReplaceAll(s, "( ", "(")
	s = strings.ReplaceAll(s, " )", ")")
	s = strings.ReplaceAll(s, " ,", ",")
	s = strings.ReplaceAll(s, " (", "(")
	return s
}

// splitDecl splits a normalised declaration into its return type, function
// name and parameter list (the text between the parentheses).
func splitDecl(decl string) (ret, name, params string, err error) {
	m := declShape.FindStringSubmatch(decl)
	if m == nil || strings.ContainsAny(m[1], "()") {
		return "", "", "", fmt.Errorf("cannot read function declaration %q", decl)
	}
	return strings.TrimSpace(m[1]), m[2], m[3], nil
}
