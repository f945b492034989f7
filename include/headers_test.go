package include

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
)

// enumValues is the numeric value of every enum constant the headers must
// define, taken from Triton's headers. Values are ABI: backends compiled
// against Triton's header pass them to the host.
var enumValues = map[string]int64{
	// TRITONSERVER_DataType
	"TRITONSERVER_TYPE_INVALID": 0, "TRITONSERVER_TYPE_BOOL": 1,
	"TRITONSERVER_TYPE_UINT8": 2, "TRITONSERVER_TYPE_UINT16": 3,
	"TRITONSERVER_TYPE_UINT32": 4, "TRITONSERVER_TYPE_UINT64": 5,
	"TRITONSERVER_TYPE_INT8": 6, "TRITONSERVER_TYPE_INT16": 7,
	"TRITONSERVER_TYPE_INT32": 8, "TRITONSERVER_TYPE_INT64": 9,
	"TRITONSERVER_TYPE_FP16": 10, "TRITONSERVER_TYPE_FP32": 11,
	"TRITONSERVER_TYPE_FP64": 12, "TRITONSERVER_TYPE_BYTES": 13,
	"TRITONSERVER_TYPE_BF16": 14,
	// TRITONSERVER_MemoryType
	"TRITONSERVER_MEMORY_CPU": 0, "TRITONSERVER_MEMORY_CPU_PINNED": 1,
	"TRITONSERVER_MEMORY_GPU": 2,
	// TRITONSERVER_ParameterType
	"TRITONSERVER_PARAMETER_STRING": 0, "TRITONSERVER_PARAMETER_INT": 1,
	"TRITONSERVER_PARAMETER_BOOL": 2, "TRITONSERVER_PARAMETER_DOUBLE": 3,
	"TRITONSERVER_PARAMETER_BYTES": 4,
	// TRITONSERVER_InstanceGroupKind
	"TRITONSERVER_INSTANCEGROUPKIND_AUTO": 0, "TRITONSERVER_INSTANCEGROUPKIND_CPU": 1,
	"TRITONSERVER_INSTANCEGROUPKIND_GPU": 2, "TRITONSERVER_INSTANCEGROUPKIND_MODEL": 3,
	// TRITONSERVER_LogLevel
	"TRITONSERVER_LOG_INFO": 0, "TRITONSERVER_LOG_WARN": 1,
	"TRITONSERVER_LOG_ERROR": 2, "TRITONSERVER_LOG_VERBOSE": 3,
	// TRITONSERVER_LogFormat
	"TRITONSERVER_LOG_DEFAULT": 0, "TRITONSERVER_LOG_ISO8601": 1,
	// TRITONSERVER_Error_Code
	"TRITONSERVER_ERROR_UNKNOWN": 0, "TRITONSERVER_ERROR_INTERNAL": 1,
	"TRITONSERVER_ERROR_NOT_FOUND": 2, "TRITONSERVER_ERROR_INVALID_ARG": 3,
	"TRITONSERVER_ERROR_UNAVAILABLE": 4, "TRITONSERVER_ERROR_UNSUPPORTED": 5,
	"TRITONSERVER_ERROR_ALREADY_EXISTS": 6, "TRITONSERVER_ERROR_CANCELLED": 7,
	// TRITONSERVER_MetricFormat
	"TRITONSERVER_METRIC_PROMETHEUS": 0,
	// TRITONSERVER_InferenceTraceLevel
	"TRITONSERVER_TRACE_LEVEL_DISABLED": 0, "TRITONSERVER_TRACE_LEVEL_MIN": 1,
	"TRITONSERVER_TRACE_LEVEL_MAX": 2, "TRITONSERVER_TRACE_LEVEL_TIMESTAMPS": 4,
	"TRITONSERVER_TRACE_LEVEL_TENSORS": 8,
	// TRITONSERVER_InferenceTraceActivity
	"TRITONSERVER_TRACE_REQUEST_START": 0, "TRITONSERVER_TRACE_QUEUE_START": 1,
	"TRITONSERVER_TRACE_COMPUTE_START": 2, "TRITONSERVER_TRACE_COMPUTE_INPUT_END": 3,
	"TRITONSERVER_TRACE_COMPUTE_OUTPUT_START": 4, "TRITONSERVER_TRACE_COMPUTE_END": 5,
	"TRITONSERVER_TRACE_REQUEST_END": 6, "TRITONSERVER_TRACE_TENSOR_QUEUE_INPUT": 7,
	"TRITONSERVER_TRACE_TENSOR_BACKEND_INPUT": 8, "TRITONSERVER_TRACE_TENSOR_BACKEND_OUTPUT": 9,
	"TRITONSERVER_TRACE_CUSTOM_ACTIVITY": 10,
	// TRITONSERVER_RequestFlag
	"TRITONSERVER_REQUEST_FLAG_SEQUENCE_START": 1, "TRITONSERVER_REQUEST_FLAG_SEQUENCE_END": 2,
	// TRITONSERVER_RequestReleaseFlag
	"TRITONSERVER_REQUEST_RELEASE_ALL": 1, "TRITONSERVER_REQUEST_RELEASE_RESCHEDULE": 2,
	// TRITONSERVER_ResponseCompleteFlag
	"TRITONSERVER_RESPONSE_COMPLETE_FINAL": 1,
	// TRITONSERVER_ModelControlMode
	"TRITONSERVER_MODEL_CONTROL_NONE": 0, "TRITONSERVER_MODEL_CONTROL_POLL": 1,
	"TRITONSERVER_MODEL_CONTROL_EXPLICIT": 2,
	// TRITONSERVER_RateLimitMode
	"TRITONSERVER_RATE_LIMIT_OFF": 0, "TRITONSERVER_RATE_LIMIT_EXEC_COUNT": 1,
	// TRITONSERVER_ModelBatchFlag
	"TRITONSERVER_BATCH_UNKNOWN": 1, "TRITONSERVER_BATCH_FIRST_DIM": 2,
	// TRITONSERVER_ModelIndexFlag
	"TRITONSERVER_INDEX_FLAG_READY": 1,
	// TRITONSERVER_ModelTxnPropertyFlag
	"TRITONSERVER_TXN_ONE_TO_ONE": 1, "TRITONSERVER_TXN_DECOUPLED": 2,
	// TRITONSERVER_MetricKind
	"TRITONSERVER_METRIC_KIND_COUNTER": 0, "TRITONSERVER_METRIC_KIND_GAUGE": 1,
	"TRITONSERVER_METRIC_KIND_HISTOGRAM": 2,
	// TRITONBACKEND_ArtifactType
	"TRITONBACKEND_ARTIFACT_FILESYSTEM": 0,
	// TRITONBACKEND_ExecutionPolicy
	"TRITONBACKEND_EXECUTION_BLOCKING": 0, "TRITONBACKEND_EXECUTION_DEVICE_BLOCKING": 1,
}

// enumTags maps each enum tag, which appears in C++ mangled names, to its
// typedef name, per header.
var enumTags = map[string]map[string]string{
	"tritonserver.h": {
		"TRITONSERVER_datatype_enum":             "TRITONSERVER_DataType",
		"TRITONSERVER_memorytype_enum":           "TRITONSERVER_MemoryType",
		"TRITONSERVER_parametertype_enum":        "TRITONSERVER_ParameterType",
		"TRITONSERVER_instancegroupkind_enum":    "TRITONSERVER_InstanceGroupKind",
		"TRITONSERVER_loglevel_enum":             "TRITONSERVER_LogLevel",
		"TRITONSERVER_logformat_enum":            "TRITONSERVER_LogFormat",
		"TRITONSERVER_errorcode_enum":            "TRITONSERVER_Error_Code",
		"tritonserver_metricformat_enum":         "TRITONSERVER_MetricFormat",
		"tritonserver_tracelevel_enum":           "TRITONSERVER_InferenceTraceLevel",
		"tritonserver_traceactivity_enum":        "TRITONSERVER_InferenceTraceActivity",
		"tritonserver_requestflag_enum":          "TRITONSERVER_RequestFlag",
		"tritonserver_requestreleaseflag_enum":   "TRITONSERVER_RequestReleaseFlag",
		"tritonserver_responsecompleteflag_enum": "TRITONSERVER_ResponseCompleteFlag",
		"tritonserver_modelcontrolmode_enum":     "TRITONSERVER_ModelControlMode",
		"tritonserver_ratelimitmode_enum":        "TRITONSERVER_RateLimitMode",
		"tritonserver_batchflag_enum":            "TRITONSERVER_ModelBatchFlag",
		"tritonserver_modelindexflag_enum":       "TRITONSERVER_ModelIndexFlag",
		"tritonserver_txn_property_flag_enum":    "TRITONSERVER_ModelTxnPropertyFlag",
		"TRITONSERVER_metrickind_enum":           "TRITONSERVER_MetricKind",
	},
	"tritonbackend.h": {
		"TRITONBACKEND_artifacttype_enum": "TRITONBACKEND_ArtifactType",
		"TRITONBACKEND_execpolicy_enum":   "TRITONBACKEND_ExecutionPolicy",
	},
}

// handleTypes lists the opaque handle types of each header; each must be
// usable without the struct keyword in C.
var handleTypes = map[string][]string{
	"tritonserver.h": {
		"TRITONSERVER_BufferAttributes", "TRITONSERVER_Error",
		"TRITONSERVER_InferenceRequest", "TRITONSERVER_InferenceResponse",
		"TRITONSERVER_InferenceTrace", "TRITONSERVER_Message",
		"TRITONSERVER_Metrics", "TRITONSERVER_Parameter",
		"TRITONSERVER_ResponseAllocator", "TRITONSERVER_Server",
		"TRITONSERVER_ServerOptions", "TRITONSERVER_Metric",
		"TRITONSERVER_MetricFamily", "TRITONSERVER_MetricArgs",
	},
	"tritonbackend.h": {
		"TRITONBACKEND_MemoryManager", "TRITONBACKEND_Input",
		"TRITONBACKEND_Output", "TRITONBACKEND_State", "TRITONBACKEND_Request",
		"TRITONBACKEND_ResponseFactory", "TRITONBACKEND_Response",
		"TRITONBACKEND_Backend", "TRITONBACKEND_Model",
		"TRITONBACKEND_ModelInstance",
		"TRITONBACKEND_ModelInstanceResponseStatistics",
		"TRITONBACKEND_BackendAttribute", "TRITONBACKEND_Batcher",
	},
}

// versionMacros are the API version macros and their values, per header.
var versionMacros = map[string]map[string]int{
	"tritonserver.h": {
		"TRITONSERVER_API_VERSION_MAJOR": 1, "TRITONSERVER_API_VERSION_MINOR": 34,
	},
	"tritonbackend.h": {
		"TRITONBACKEND_API_VERSION_MAJOR": 1, "TRITONBACKEND_API_VERSION_MINOR": 19,
	},
}

// hostDefines are the defines the host compiles its implementation of the
// headers with: each header's DECLSPEC then exports.
var hostDefines = []string{"-D_COMPILING_TRITONSERVER", "-D_COMPILING_TRITONBACKEND",
	"-D_COMPILING_TRITONCACHE", "-D_COMPILING_TRITONREPOAGENT"}

func mustFunctions(t *testing.T) []Function {
	t.Helper()
	fns, err := Functions()
	if err != nil {
		t.Fatalf("Functions: %v", err)
	}
	return fns
}

func TestFunctionCountsPerHeaderAndKind(t *testing.T) {
	fns := mustFunctions(t)
	tests := []struct {
		header     string
		entryPoint bool
		want       int
	}{
		{"tritonserver.h", false, 172},
		{"tritonserver.h", true, 0},
		{"tritonbackend.h", false, 91},
		{"tritonbackend.h", true, 14},
		{"tritoncache.h", false, 6},
		{"tritoncache.h", true, 4},
		{"tritonrepoagent.h", false, 12},
		{"tritonrepoagent.h", true, 5},
	}
	wantHost := 0
	for _, tt := range tests {
		if !tt.entryPoint {
			wantHost += tt.want
		}
		t.Run(fmt.Sprintf("%s/entrypoint=%v", tt.header, tt.entryPoint), func(t *testing.T) {
			got := 0
			for _, f := range fns {
				if f.Header == tt.header && f.EntryPoint == tt.entryPoint {
					got++
				}
			}
			if got != tt.want {
				t.Errorf("got %d functions, want %d", got, tt.want)
			}
		})
	}
	host, err := HostFunctions()
	if err != nil {
		t.Fatalf("HostFunctions: %v", err)
	}
	if len(host) != wantHost {
		t.Errorf("HostFunctions returned %d functions, want %d", len(host), wantHost)
	}
	for _, f := range host {
		if f.EntryPoint {
			t.Errorf("HostFunctions returned entry point %s", f.Name)
		}
	}
}

func TestKnownFunctionsAreDeclaredWhereExpected(t *testing.T) {
	byName := map[string]Function{}
	for _, f := range mustFunctions(t) {
		byName[f.Name] = f
	}
	tests := []struct {
		name       string
		header     string
		entryPoint bool
	}{
		{"TRITONSERVER_ApiVersion", "tritonserver.h", false},
		{"TRITONSERVER_ErrorNew", "tritonserver.h", false},
		{"TRITONSERVER_LogMessage", "tritonserver.h", false},
		{"TRITONSERVER_MessageSerializeToJson", "tritonserver.h", false},
		{"TRITONSERVER_MetricObserve", "tritonserver.h", false},
		{"TRITONSERVER_BufferAttributesCudaIpcHandle", "tritonserver.h", false},
		{"TRITONSERVER_InferenceTraceRequestId", "tritonserver.h", false},
		{"TRITONBACKEND_ApiVersion", "tritonbackend.h", false},
		{"TRITONBACKEND_RequestInput", "tritonbackend.h", false},
		{"TRITONBACKEND_ResponseSend", "tritonbackend.h", false},
		{"TRITONBACKEND_ResponseFactorySendFlags", "tritonbackend.h", false},
		{"TRITONBACKEND_ModelInstanceResponseStatisticsSetError", "tritonbackend.h", false},
		{"TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading", "tritonbackend.h", false},
		{"TRITONBACKEND_InferenceResponseOutputByName", "tritonbackend.h", false},
		{"TRITONBACKEND_ModelInstanceExecute", "tritonbackend.h", true},
		{"TRITONBACKEND_GetBackendAttribute", "tritonbackend.h", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := byName[tt.name]
			if !ok {
				t.Fatalf("%s is not declared", tt.name)
			}
			if f.Header != tt.header || f.EntryPoint != tt.entryPoint {
				t.Errorf("got header %q, entry point %v; want %q, %v", f.Header, f.EntryPoint, tt.header, tt.entryPoint)
			}
		})
	}
	// The whole in-process server API is declared, for backends and for
	// applications that embed a server: requests, responses, allocators,
	// model queries and control, server options and the server object.
	for _, name := range []string{
		"TRITONSERVER_InferenceRequestNew", "TRITONSERVER_InferenceRequestSetResponseCallback",
		"TRITONSERVER_InferenceResponseOutput", "TRITONSERVER_ResponseAllocatorNew",
		"TRITONSERVER_ServerInferAsync", "TRITONSERVER_ServerModelIsReady",
		"TRITONSERVER_ServerModelConfig", "TRITONSERVER_ServerModelMetadata",
		"TRITONSERVER_ServerNew", "TRITONSERVER_ServerOptionsNew", "TRITONSERVER_ServerStop",
		"TRITONSERVER_MetricsFormatted", "TRITONSERVER_InferenceTraceNew",
		"TRITONSERVER_ServerLoadModel", "TRITONSERVER_ServerModelStatistics",
		"TRITONSERVER_ServerOptionsSetEnablePeerAccess", "TRITONSERVER_ServerPollModelRepository",
	} {
		if f, ok := byName[name]; !ok || f.Header != "tritonserver.h" || f.EntryPoint {
			t.Errorf("%s: want a host function of tritonserver.h, got %+v (declared %v)", name, f, ok)
		}
	}
}

func TestEntryPointsAreExactlyTheBackendImplementedSet(t *testing.T) {
	want := []string{
		"TRITONBACKEND_Finalize",
		"TRITONBACKEND_GetBackendAttribute",
		"TRITONBACKEND_Initialize",
		"TRITONBACKEND_ModelBatchFinalize",
		"TRITONBACKEND_ModelBatchIncludeRequest",
		"TRITONBACKEND_ModelBatchInitialize",
		"TRITONBACKEND_ModelBatcherFinalize",
		"TRITONBACKEND_ModelBatcherInitialize",
		"TRITONBACKEND_ModelFinalize",
		"TRITONBACKEND_ModelInitialize",
		"TRITONBACKEND_ModelInstanceExecute",
		"TRITONBACKEND_ModelInstanceFinalize",
		"TRITONBACKEND_ModelInstanceInitialize",
		"TRITONBACKEND_ModelInstanceReady",
	}
	if got := entryPointsOf(t, "tritonbackend.h"); !slices.Equal(got, want) {
		t.Errorf("entry points:\n got %q\nwant %q", got, want)
	}
}

// entryPointsOf returns the sorted names of the entry points header
// declares.
func entryPointsOf(t *testing.T, header string) []string {
	t.Helper()
	var got []string
	for _, f := range mustFunctions(t) {
		if f.EntryPoint && f.Header == header {
			got = append(got, f.Name)
		}
	}
	sort.Strings(got)
	return got
}

func TestReturnTypeIsErrorExceptForKnownHelpers(t *testing.T) {
	exceptions := map[string]string{
		"TRITONSERVER_DataTypeString":               "const char*",
		"TRITONSERVER_StringToDataType":             "TRITONSERVER_DataType",
		"TRITONSERVER_DataTypeByteSize":             "uint32_t",
		"TRITONSERVER_MemoryTypeString":             "const char*",
		"TRITONSERVER_ParameterTypeString":          "const char*",
		"TRITONSERVER_ParameterNew":                 "TRITONSERVER_Parameter*",
		"TRITONSERVER_ParameterBytesNew":            "TRITONSERVER_Parameter*",
		"TRITONSERVER_ParameterDelete":              "void",
		"TRITONSERVER_InstanceGroupKindString":      "const char*",
		"TRITONSERVER_LogIsEnabled":                 "bool",
		"TRITONSERVER_ErrorDelete":                  "void",
		"TRITONSERVER_ErrorCode":                    "TRITONSERVER_Error_Code",
		"TRITONSERVER_ErrorCodeString":              "const char*",
		"TRITONSERVER_ErrorMessage":                 "const char*",
		"TRITONSERVER_InferenceTraceLevelString":    "const char*",
		"TRITONSERVER_InferenceTraceActivityString": "const char*",
	}
	seen := map[string]bool{}
	for _, f := range mustFunctions(t) {
		ret, _, _, err := splitDecl(f.Decl)
		if err != nil {
			t.Fatal(err)
		}
		ret = dropStruct(ret)
		want, isException := exceptions[f.Name]
		if !isException {
			want = "TRITONSERVER_Error*"
		}
		seen[f.Name] = true
		if ret != want {
			t.Errorf("%s returns %q, want %q", f.Name, ret, want)
		}
	}
	for name := range exceptions {
		if !seen[name] {
			t.Errorf("exception %s is not declared", name)
		}
	}
}

func TestHeadersMatchUpstreamSignatures(t *testing.T) {
	want := readSignatureFixture(t, filepath.Join("testdata", "upstream_signatures.txt"))
	got := map[string]fixtureEntry{}
	for _, f := range mustFunctions(t) {
		sig, err := typeSignature(f.Decl)
		if err != nil {
			t.Fatal(err)
		}
		got[f.Name] = fixtureEntry{header: f.Header, entryPoint: f.EntryPoint, signature: sig}
	}
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: in the fixture but not declared", name)
		case g != w:
			t.Errorf("%s:\n header  %+v\n fixture %+v", name, g, w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: declared but missing from the fixture", name)
		}
	}
}

func TestDeclIsOneNormalisedLineWithoutMacro(t *testing.T) {
	for _, f := range mustFunctions(t) {
		switch {
		case strings.ContainsAny(f.Decl, "\n\t;"):
			t.Errorf("%s: Decl %q has a newline, tab or semicolon", f.Name, f.Decl)
		case strings.Contains(f.Decl, "  "):
			t.Errorf("%s: Decl %q has a double space", f.Name, f.Decl)
		case strings.Contains(f.Decl, "DECLSPEC") || strings.Contains(f.Decl, "ISPEC"):
			t.Errorf("%s: Decl %q still has its export macro", f.Name, f.Decl)
		case !strings.Contains(f.Decl, " "+f.Name+"("):
			t.Errorf("%s: Decl %q does not name the function", f.Name, f.Decl)
		}
	}
}

func TestEnumsMatchUpstreamTagsAndConstants(t *testing.T) {
	var allConstants []string
	for header, wantTags := range enumTags {
		src, err := Source(header)
		if err != nil {
			t.Fatal(err)
		}
		enums := parseEnums(src)
		gotTags := map[string]string{}
		for _, e := range enums {
			gotTags[e.tag] = e.typedef
			allConstants = append(allConstants, e.constants...)
		}
		if fmt.Sprint(gotTags) != fmt.Sprint(wantTags) {
			t.Errorf("%s enum tags:\n got %v\nwant %v", header, gotTags, wantTags)
		}
	}
	sort.Strings(allConstants)
	var want []string
	for name := range enumValues {
		want = append(want, name)
	}
	sort.Strings(want)
	if !slices.Equal(allConstants, want) {
		t.Errorf("enum constants in the headers differ from the value table:\n got %q\nwant %q", allConstants, want)
	}
}

// TestHeadersCompileAndHoldUpstreamValues compiles generated sources that
// include the headers alone and together, in both orders, as C11 and C++17,
// with and without the host's _COMPILING_* defines. Each source takes the
// address of every declared function, redeclares each function from its
// Decl (a mismatch is a compile error), uses every handle typedef and
// static-asserts every enum value, enum size and version macro.
func TestHeadersCompileAndHoldUpstreamValues(t *testing.T) {
	cc := compiler(t, "CC", "gcc")
	cxx := compiler(t, "CXX", "g++")
	fns := mustFunctions(t)
	incDir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	defines := map[string][]string{
		"plain": nil,
		"host":  hostDefines,
	}
	languages := []struct {
		name string
		cmd  []string
		ext  string
		std  string
	}{
		{"c11", cc, ".c", "-std=c11"},
		{"cxx17", cxx, ".cc", "-std=c++17"},
	}
	for _, includes := range [][]string{
		{"tritonserver.h"},
		{"tritonbackend.h"},
		{"tritonserver.h", "tritonbackend.h"},
		{"tritonbackend.h", "tritonserver.h"},
		{"tritoncache.h"},
		{"tritonrepoagent.h"},
		{"tritonrepoagent.h", "tritoncache.h", "tritonbackend.h", "tritonserver.h"},
	} {
		src := checkSource(t, includes, fns)
		for _, lang := range languages {
			for defName, defs := range defines {
				name := strings.Join(includes, "+") + "/" + lang.name + "/" + defName
				t.Run(name, func(t *testing.T) {
					file := filepath.Join(dir, strings.NewReplacer("/", "_", "+", "_", ".", "_").Replace(name)+lang.ext)
					if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
						t.Fatal(err)
					}
					args := append(append([]string{}, lang.cmd[1:]...), lang.std,
						"-Wall", "-Wextra", "-Werror", "-pedantic", "-I", incDir)
					args = append(append(args, defs...), "-c", file, "-o", file+".o")
					runCompiler(t, lang.cmd[0], args)
				})
			}
		}
	}
}

// TestInProcessCallbacksTakeTritonsSignatures compiles
// testdata/inprocess_callbacks.c, which defines every callback of the
// in-process server API with Triton's parameter lists and passes each to the
// function that takes it, as C11 and C++17 with -Wall -Wextra -Werror
// -pedantic: a callback type that differs from Triton's is a compile error.
func TestInProcessCallbacksTakeTritonsSignatures(t *testing.T) {
	incDir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	src, err := filepath.Abs(filepath.Join("testdata", "inprocess_callbacks.c"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, lang := range []struct {
		name string
		cmd  []string
		args []string
	}{
		{"c11", compiler(t, "CC", "gcc"), []string{"-std=c11", "-x", "c"}},
		{"cxx17", compiler(t, "CXX", "g++"), []string{"-std=c++17", "-x", "c++"}},
	} {
		t.Run(lang.name, func(t *testing.T) {
			args := append(append([]string{}, lang.cmd[1:]...), lang.args...)
			args = append(args, "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", incDir,
				"-c", src, "-o", filepath.Join(dir, lang.name+".o"))
			runCompiler(t, lang.cmd[0], args)
		})
	}
}

// TestExportMacrosExportExactlyTheHostFunctions builds a shared library the
// way the host builds its implementation (-fvisibility=hidden plus the
// _COMPILING_* defines), defining every declared function, and checks that
// the dynamic symbol table holds exactly the host functions: the export
// macros must export them and the entry-point macro must not export the
// backend-implemented ones.
func TestExportMacrosExportExactlyTheHostFunctions(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ELF visibility check runs on Linux only")
	}
	cc := compiler(t, "CC", "gcc")
	fns := mustFunctions(t)
	incDir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, h := range headerFiles {
		fmt.Fprintf(&src, "#include %q\n", h)
	}
	src.WriteString("\n")
	for _, f := range fns {
		ret, _, _, err := splitDecl(f.Decl)
		if err != nil {
			t.Fatal(err)
		}
		if ret == "void" {
			fmt.Fprintf(&src, "%s {}\n", f.Decl)
		} else {
			fmt.Fprintf(&src, "%s { return (%s)0; }\n", f.Decl, ret)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "exports.c")
	lib := filepath.Join(dir, "libexports.so")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, cc[1:]...), "-std=c11", "-Wall", "-Werror",
		"-fPIC", "-shared", "-fvisibility=hidden")
	args = append(append(args, hostDefines...), "-I", incDir, file, "-o", lib)
	runCompiler(t, cc[0], args)

	ef, err := elf.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	syms, err := ef.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF && strings.HasPrefix(s.Name, "TRITON") {
			got = append(got, s.Name)
		}
	}
	var want []string
	for _, f := range fns {
		if !f.EntryPoint {
			want = append(want, f.Name)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("exported functions differ from the host functions:\n got %q\nwant %q", got, want)
	}
}

func TestSourceReturnsEmbeddedHeaders(t *testing.T) {
	tests := []struct {
		name    string
		want    string // a line the header must contain; empty when an error is expected
		wantErr bool
	}{
		{"tritonserver.h", "#define TRITONSERVER_API_VERSION_MINOR 34", false},
		{"tritonbackend.h", "#define TRITONBACKEND_API_VERSION_MINOR 19", false},
		{"triton/core/tritonbackend.h", `#include "triton/core/tritonserver.h"`, false},
		{"tritonfoo.h", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := Source(tt.name)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Source(%q) error = %v, want error %v", tt.name, err, tt.wantErr)
			}
			if !strings.Contains(src, tt.want) {
				t.Errorf("Source(%q) does not contain %q", tt.name, tt.want)
			}
		})
	}
	// The embedded text is what is on disk, so tests that compile the
	// on-disk headers check the embedded ones.
	for _, file := range headerFiles {
		disk, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		emb, err := Source(file)
		if err != nil {
			t.Fatal(err)
		}
		if emb != string(disk) {
			t.Errorf("embedded %s differs from the file on disk", file)
		}
	}
}

func TestParseHeaderHandlesLayoutAndRejectsBrokenInput(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    []string // "name|entrypoint|decl"
		wantErr string
	}{
		{
			name: "multi-line declaration with comments",
			src: "// TRITONSERVER_DECLSPEC in a comment is ignored\n" +
				"TRITONSERVER_DECLSPEC struct TRITONSERVER_Error*\nTRITONSERVER_Foo(\n" +
				"    int a, /* inline */ const char** b);\n",
			want: []string{"TRITONSERVER_Foo|false|struct TRITONSERVER_Error* TRITONSERVER_Foo(int a, const char** b)"},
		},
		{
			name: "macro definitions are not declarations",
			src: "#ifdef X\n#define TRITONBACKEND_DECLSPEC \\\n  __attribute__((x))\n#define TRITONBACKEND_ISPEC\n#endif\n" +
				"TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_Init(void* p);\n" +
				"TRITONBACKEND_DECLSPEC void TRITONBACKEND_Bar(int x);\n",
			want: []string{
				"TRITONBACKEND_Init|true|TRITONSERVER_Error* TRITONBACKEND_Init(void* p)",
				"TRITONBACKEND_Bar|false|void TRITONBACKEND_Bar(int x)",
			},
		},
		{
			name:    "missing semicolon",
			src:     "TRITONSERVER_DECLSPEC void TRITONSERVER_Foo(int a)\n",
			wantErr: "no terminating ';'",
		},
		{
			name:    "duplicate declaration",
			src:     "TRITONSERVER_DECLSPEC void TRITONSERVER_Foo(int a);\nTRITONSERVER_DECLSPEC void TRITONSERVER_Foo(int a);\n",
			wantErr: "declared twice",
		},
		{
			name:    "not a function",
			src:     "TRITONSERVER_DECLSPEC int TRITONSERVER_Foo;\n",
			wantErr: "cannot read function declaration",
		},
		{
			name:    "no declarations",
			src:     "#pragma once\nstruct X;\n",
			wantErr: "no function declarations",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fns, err := parseHeader("test.h", tt.src)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range fns {
				if f.Header != "test.h" {
					t.Errorf("%s: header %q, want test.h", f.Name, f.Header)
				}
				got = append(got, fmt.Sprintf("%s|%v|%s", f.Name, f.EntryPoint, f.Decl))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// fixtureEntry is one function of testdata/upstream_signatures.txt.
type fixtureEntry struct {
	header     string
	entryPoint bool
	signature  string
}

// readSignatureFixture reads the upstream signature list, keyed by name.
func readSignatureFixture(t *testing.T, file string) map[string]fixtureEntry {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries := map[string]fixtureEntry{}
	var header string
	var entryPoint bool
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(text, "## "):
			section := strings.TrimPrefix(text, "## ")
			header = strings.Fields(section)[0]
			header = strings.TrimSuffix(header, ":")
			entryPoint = strings.Contains(section, "entry points")
			continue
		case text == "" || strings.HasPrefix(text, "#"):
			continue
		}
		_, name, _, err := splitDecl(text)
		if err != nil {
			t.Fatalf("%s:%d: %v", file, line, err)
		}
		if _, dup := entries[name]; dup {
			t.Fatalf("%s:%d: %s listed twice", file, line, name)
		}
		entries[name] = fixtureEntry{header: header, entryPoint: entryPoint, signature: text}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return entries
}

var paramName = regexp.MustCompile(`\s*\b[A-Za-z_][A-Za-z0-9_]*$`)

// typeSignature turns a Decl into the fixture's form: "struct " dropped and
// parameter names removed.
func typeSignature(decl string) (string, error) {
	ret, name, params, err := splitDecl(decl)
	if err != nil {
		return "", err
	}
	var types []string
	for _, p := range strings.Split(params, ",") {
		p = strings.TrimSpace(p)
		stripped := paramName.ReplaceAllString(p, "")
		if stripped == "" || strings.HasSuffix(stripped, "const") {
			return "", fmt.Errorf("%s: parameter %q has no name", name, p)
		}
		types = append(types, dropStruct(stripped))
	}
	return fmt.Sprintf("%s %s(%s)", dropStruct(ret), name, strings.Join(types, ", ")), nil
}

func dropStruct(s string) string {
	return strings.ReplaceAll(s, "struct ", "")
}

// enumDecl is one "typedef enum tag { ... } typedef;" of a header.
type enumDecl struct {
	tag, typedef string
	constants    []string
}

var (
	enumBlock = regexp.MustCompile(`typedef\s+enum\s+(\w+)\s*\{([^}]*)\}\s*(\w+)\s*;`)
	enumConst = regexp.MustCompile(`^\s*([A-Za-z_]\w*)`)
)

func parseEnums(src string) []enumDecl {
	code := stripPreprocessor(stripComments(src))
	var out []enumDecl
	for _, m := range enumBlock.FindAllStringSubmatch(code, -1) {
		e := enumDecl{tag: m[1], typedef: m[3]}
		for _, item := range strings.Split(m[2], ",") {
			if c := enumConst.FindStringSubmatch(item); c != nil {
				e.constants = append(e.constants, c[1])
			}
		}
		out = append(out, e)
	}
	return out
}

// checkSource generates a translation unit that includes 'includes' in that
// order and checks everything those headers must provide.
func checkSource(t *testing.T, includes []string, fns []Function) string {
	t.Helper()
	// Every other header includes tritonserver.h.
	covered := map[string]bool{}
	for _, h := range includes {
		covered[h] = true
		if h != "tritonserver.h" {
			covered["tritonserver.h"] = true
		}
	}
	var b strings.Builder
	for _, h := range includes {
		fmt.Fprintf(&b, "#include \"triton/core/%s\"\n", h)
	}
	b.WriteString(`
#ifdef __cplusplus
#define ABI_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define ABI_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

typedef void (*abi_fn)(void);
`)
	var names []string
	for _, h := range headerFiles {
		base := filepath.Base(h)
		if !covered[base] {
			continue
		}
		src, err := Source(base)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "\n/* %s */\n", base)
		macros := versionMacros[base]
		for _, m := range sortedKeys(macros) {
			fmt.Fprintf(&b, "ABI_ASSERT(%s == %d, \"%s\");\n", m, macros[m], m)
		}
		for _, e := range parseEnums(src) {
			fmt.Fprintf(&b, "ABI_ASSERT(sizeof(%s) == 4, \"size of %s\");\n", e.typedef, e.typedef)
			fmt.Fprintf(&b, "ABI_ASSERT(sizeof(enum %s) == 4, \"size of enum %s\");\n", e.tag, e.tag)
			for _, c := range e.constants {
				v, ok := enumValues[c]
				if !ok {
					t.Fatalf("%s: enum constant %s has no expected value", base, c)
				}
				fmt.Fprintf(&b, "ABI_ASSERT(%s == %d, \"%s\");\n", c, v, c)
			}
		}
		var handles []string
		for i, h := range handleTypes[base] {
			handles = append(handles, fmt.Sprintf("  struct %s* h%d = (%s*)0;\n  (void)h%d;\n", h, i, h, i))
		}
		fn := strings.TrimSuffix(base, ".h") + "_handles"
		fmt.Fprintf(&b, "void %s(void);\nvoid %s(void) {\n%s}\n", fn, fn, strings.Join(handles, ""))
		for _, f := range fns {
			if f.Header == base {
				fmt.Fprintf(&b, "%s;\n", f.Decl)
				names = append(names, f.Name)
			}
		}
	}
	b.WriteString("\nconst abi_fn abi_functions[] = {\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  (abi_fn)&%s,\n", n)
	}
	b.WriteString("};\n")
	b.WriteString("size_t abi_function_count(void);\n")
	b.WriteString("size_t abi_function_count(void) { return sizeof abi_functions / sizeof abi_functions[0]; }\n")
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// compiler returns the command for the C or C++ compiler named by 'go env
// envVar', falling back to 'fallback', and skips the test if none exists.
func compiler(t *testing.T, envVar, fallback string) []string {
	t.Helper()
	cmd := []string{fallback}
	if out, err := exec.Command("go", "env", envVar).Output(); err == nil {
		if f := strings.Fields(string(out)); len(f) > 0 {
			cmd = f
		}
	}
	if _, err := exec.LookPath(cmd[0]); err != nil {
		t.Skipf("no %s compiler %q found (%v): skipping the compile checks", envVar, cmd[0], err)
	}
	return cmd
}

func runCompiler(t *testing.T, name string, args []string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
