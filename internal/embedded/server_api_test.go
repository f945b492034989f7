package embedded_test

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// testdata/server_api.c, linked with libtritonserver.so (`make lib`), calls
// each function an application embedding a server uses with good and bad
// arguments (null pointers, unknown models, wrong versions, deleted
// objects) and reports the codes; the table is what each must answer.
// Bad pointers that Triton would follow (and crash on) are refused with
// INVALID_ARG; otherwise the codes are Triton's.

var serverAPIChecks = map[string]string{
	"TRITONSERVER_InferenceRequestNew for_trace":                          "OK",
	"TRITONSERVER_ServerInferAsync refused_with_trace":                    "INVALID_ARG",
	"TRITONSERVER_InferenceTraceDelete after_refusal":                     "OK",
	"TRITONSERVER_ServerOptionsNew null_out":                              "INVALID_ARG",
	"TRITONSERVER_ServerOptionsNew good":                                  "OK",
	"TRITONSERVER_ServerOptionsSetServerId good":                          "OK",
	"TRITONSERVER_ServerOptionsSetModelRepositoryPath good":               "OK",
	"TRITONSERVER_ServerOptionsSetModelControlMode good":                  "OK",
	"TRITONSERVER_ServerOptionsSetStartupModel good":                      "OK",
	"TRITONSERVER_ServerOptionsSetStrictModelConfig good":                 "OK",
	"TRITONSERVER_ServerOptionsSetModelConfigName default":                "OK",
	"TRITONSERVER_ServerOptionsSetRateLimiterMode exec_count":             "OK",
	"TRITONSERVER_ServerOptionsAddRateLimiterResource good":               "OK",
	"TRITONSERVER_ServerOptionsAddRateLimiterResource every_device":       "OK",
	"TRITONSERVER_ServerOptionsSetRateLimiterMode off":                    "OK",
	"TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize good":          "OK",
	"TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize good":            "OK",
	"TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize zero":            "OK",
	"TRITONSERVER_ServerOptionsSetResponseCacheByteSize zero":             "OK",
	"TRITONSERVER_ServerOptionsSetCacheDirectory good":                    "OK",
	"TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability good":     "OK",
	"TRITONSERVER_ServerOptionsSetExitOnError good":                       "OK",
	"TRITONSERVER_ServerOptionsSetStrictReadiness good":                   "OK",
	"TRITONSERVER_ServerOptionsSetExitTimeout good":                       "OK",
	"TRITONSERVER_ServerOptionsSetBufferManagerThreadCount zero":          "OK",
	"TRITONSERVER_ServerOptionsSetModelLoadThreadCount good":              "OK",
	"TRITONSERVER_ServerOptionsSetModelLoadRetryCount zero":               "OK",
	"TRITONSERVER_ServerOptionsSetModelNamespacing off":                   "OK",
	"TRITONSERVER_ServerOptionsSetEnablePeerAccess good":                  "OK",
	"TRITONSERVER_ServerOptionsSetLogFile stderr":                         "OK",
	"TRITONSERVER_ServerOptionsSetLogInfo good":                           "OK",
	"TRITONSERVER_ServerOptionsSetLogWarn good":                           "OK",
	"TRITONSERVER_ServerOptionsSetLogError good":                          "OK",
	"TRITONSERVER_ServerOptionsSetLogFormat good":                         "OK",
	"TRITONSERVER_ServerOptionsSetLogVerbose good":                        "OK",
	"TRITONSERVER_ServerOptionsSetMetrics good":                           "OK",
	"TRITONSERVER_ServerOptionsSetGpuMetrics good":                        "OK",
	"TRITONSERVER_ServerOptionsSetCpuMetrics good":                        "OK",
	"TRITONSERVER_ServerOptionsSetMetricsInterval good":                   "OK",
	"TRITONSERVER_ServerOptionsSetBackendDirectory good":                  "OK",
	"TRITONSERVER_ServerOptionsSetRepoAgentDirectory good":                "OK",
	"TRITONSERVER_ServerOptionsSetBackendConfig good":                     "OK",
	"TRITONSERVER_ServerOptionsSetModelControlMode unknown_mode":          "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetModelConfigName custom":                 "OK",
	"TRITONSERVER_ServerOptionsSetRateLimiterMode unknown_mode":           "INVALID_ARG",
	"TRITONSERVER_ServerOptionsAddRateLimiterResource null_name":          "INVALID_ARG",
	"TRITONSERVER_ServerOptionsAddRateLimiterResource bad_device":         "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize negative_device": "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize some":            "OK",
	"TRITONSERVER_ServerOptionsSetResponseCacheByteSize some":             "OK",
	"TRITONSERVER_ServerOptionsSetCacheConfig good":                       "OK",
	"TRITONSERVER_ServerOptionsSetCacheConfig not_json":                   "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetResponseCacheByteSize clear":            "OK",
	"TRITONSERVER_ServerOptionsSetCacheConfig null_config":                "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability negative": "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetBufferManagerThreadCount some":          "OK",
	"TRITONSERVER_ServerOptionsSetModelLoadRetryCount some":               "OK",
	"TRITONSERVER_ServerOptionsSetModelNamespacing on":                    "OK",
	"TRITONSERVER_ServerOptionsSetModelNamespacing reset":                 "OK",
	"TRITONSERVER_ServerOptionsSetLogFormat unknown_format":               "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetMetricsInterval zero":                   "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit gpu":               "OK",
	"TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit negative_device":   "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit fraction_above_1":  "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit cpu":               "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetHostPolicy numa_node":                   "OK",
	"TRITONSERVER_ServerOptionsSetHostPolicy unknown_setting":             "UNSUPPORTED",
	"TRITONSERVER_ServerOptionsSetMetricsConfig good":                     "OK",
	"TRITONSERVER_ServerOptionsSetServerId null_id":                       "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetModelRepositoryPath null_path":          "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetStartupModel null_name":                 "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetLogFile null_file":                      "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetBackendDirectory null_dir":              "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetRepoAgentDirectory null_dir":            "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetCacheDirectory null_dir":                "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetBackendConfig null_setting":             "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetHostPolicy null_value":                  "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetMetricsConfig null_name":                "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetExitOnError null_options":               "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetLogVerbose made_up_options":             "INVALID_ARG",
	"TRITONSERVER_ServerOptionsDelete good":                               "OK",
	"TRITONSERVER_ServerOptionsDelete twice":                              "INVALID_ARG",
	"TRITONSERVER_ServerOptionsSetStrictReadiness deleted_options":        "INVALID_ARG",
	"TRITONSERVER_ServerOptionsDelete null_options":                       "OK", // deleting NULL is nothing, as in Triton

	"TRITONSERVER_ServerNew null_out":              "INVALID_ARG",
	"TRITONSERVER_ServerNew null_options":          "INVALID_ARG",
	"TRITONSERVER_ServerNew exit_on_error":         "INTERNAL", // Triton: "failed to load all models"
	"TRITONSERVER_ServerNew log_file_unwritable":   "INTERNAL",
	"TRITONSERVER_ServerNew without_exit_on_error": "OK",
	"TRITONSERVER_ServerIsReady not_strict":        "OK",
	"TRITONSERVER_ServerStop good":                 "OK",
	"TRITONSERVER_ServerStop twice":                "OK",
	"TRITONSERVER_ServerIsLive stopped":            "OK",
	"TRITONSERVER_ServerDelete good":               "OK",
	"TRITONSERVER_ServerDelete twice":              "INVALID_ARG",
	"TRITONSERVER_ServerIsLive deleted_server":     "INVALID_ARG",
	"TRITONSERVER_ServerNew deleted_options":       "INVALID_ARG",
	"TRITONSERVER_ServerDelete null_server":        "OK", // deleting NULL is nothing, as in Triton
	"TRITONSERVER_ServerStop made_up_server":       "INVALID_ARG",

	"TRITONSERVER_InferenceTraceNew null_out":                  "INVALID_ARG",
	"TRITONSERVER_InferenceTraceNew null_release_fn":           "INVALID_ARG",
	"TRITONSERVER_InferenceTraceTensorNew null_out":            "INVALID_ARG",
	"TRITONSERVER_InferenceTraceTensorNew good":                "OK",
	"TRITONSERVER_InferenceTraceDelete tensor_trace":           "OK",
	"TRITONSERVER_InferenceTraceNew good":                      "OK",
	"TRITONSERVER_InferenceTraceParentId new":                  "OK",
	"TRITONSERVER_InferenceTraceContext empty":                 "OK",
	"TRITONSERVER_InferenceTraceSetContext good":               "OK",
	"TRITONSERVER_InferenceTraceSetContext null_context":       "INVALID_ARG",
	"TRITONSERVER_InferenceTraceContext good":                  "OK",
	"TRITONSERVER_InferenceTraceContext null_out":              "INVALID_ARG",
	"TRITONSERVER_InferenceTraceSpawnChildTrace null_trace":    "OK", // Triton: a NULL child, success
	"TRITONSERVER_InferenceTraceSpawnChildTrace null_out":      "INVALID_ARG",
	"TRITONSERVER_InferenceTraceSpawnChildTrace made_up_trace": "INVALID_ARG",
	"TRITONSERVER_InferenceTraceSpawnChildTrace good":          "OK",
	"TRITONSERVER_InferenceTraceDelete child":                  "OK",
	"TRITONSERVER_InferenceTraceDelete good":                   "OK",
	"TRITONSERVER_InferenceTraceDelete twice":                  "INVALID_ARG",
	"TRITONSERVER_InferenceTraceSetContext deleted_trace":      "INVALID_ARG",
	"TRITONSERVER_InferenceTraceDelete null_trace":             "OK", // deleting NULL is nothing, as in Triton

	"TRITONSERVER_ServerNew none":                               "OK",
	"TRITONSERVER_ServerIsLive good":                            "OK",
	"TRITONSERVER_ServerIsLive null_out":                        "INVALID_ARG",
	"TRITONSERVER_ServerIsReady good":                           "OK",
	"TRITONSERVER_ServerIsReady null_server":                    "INVALID_ARG",
	"TRITONSERVER_ServerMetadata good":                          "OK",
	"TRITONSERVER_ServerMetadata null_out":                      "INVALID_ARG",
	"TRITONSERVER_ServerModelIndex all":                         "OK",
	"TRITONSERVER_ServerModelIndex ready":                       "OK",
	"TRITONSERVER_ServerModelIndex null_out":                    "INVALID_ARG",
	"TRITONSERVER_ServerModelBatchProperties good":              "OK",
	"TRITONSERVER_ServerModelBatchProperties unknown_model":     "NOT_FOUND",
	"TRITONSERVER_ServerModelBatchProperties unknown_version":   "NOT_FOUND",
	"TRITONSERVER_ServerModelBatchProperties null_flags":        "INVALID_ARG",
	"TRITONSERVER_ServerModelStatistics good":                   "OK",
	"TRITONSERVER_ServerModelStatistics every_model":            "OK",
	"TRITONSERVER_ServerModelStatistics unknown_model":          "INVALID_ARG", // Triton: "requested model 'nope' is not available"
	"TRITONSERVER_ServerModelStatistics failed_model":           "INVALID_ARG",
	"TRITONSERVER_ServerModelStatistics unknown_version":        "INVALID_ARG",
	"TRITONSERVER_ServerModelStatistics null_name":              "INVALID_ARG",
	"TRITONSERVER_ServerMetrics null_out":                       "INVALID_ARG",
	"TRITONSERVER_ServerMetrics good":                           "OK",
	"TRITONSERVER_MetricsFormatted prometheus":                  "OK",
	"TRITONSERVER_MetricsFormatted unknown_format":              "INVALID_ARG",
	"TRITONSERVER_MetricsFormatted null_base":                   "INVALID_ARG",
	"TRITONSERVER_MetricsDelete good":                           "OK",
	"TRITONSERVER_MetricsDelete twice":                          "INVALID_ARG",
	"TRITONSERVER_MetricsFormatted deleted_metrics":             "INVALID_ARG",
	"TRITONSERVER_MetricsDelete null_metrics":                   "OK", // deleting NULL is nothing, as in Triton
	"TRITONSERVER_ServerLoadModel not_explicit":                 "UNAVAILABLE",
	"TRITONSERVER_ServerRegisterModelRepository not_explicit":   "UNSUPPORTED",
	"TRITONSERVER_ServerUnregisterModelRepository not_explicit": "UNSUPPORTED",
	"TRITONSERVER_ServerPollModelRepository not_poll":           "UNAVAILABLE",
	"TRITONSERVER_ServerSetExitTimeout good":                    "OK",
	"TRITONSERVER_ServerSetExitTimeout null_server":             "INVALID_ARG",

	"TRITONSERVER_ServerNew poll":                        "OK",
	"TRITONSERVER_ServerPollModelRepository good":        "OK",
	"TRITONSERVER_ServerPollModelRepository null_server": "INVALID_ARG",
	"TRITONSERVER_ServerLoadModel poll":                  "UNAVAILABLE",

	"TRITONSERVER_ServerNew explicit":                               "OK",
	"TRITONSERVER_ServerLoadModel good":                             "OK",
	"TRITONSERVER_ServerLoadModel unknown_model":                    "INTERNAL",
	"TRITONSERVER_ServerLoadModel null_name":                        "INVALID_ARG",
	"TRITONSERVER_ServerLoadModel null_server":                      "INVALID_ARG",
	"TRITONSERVER_ServerRegisterModelRepository no_such_dir":        "INVALID_ARG",
	"TRITONSERVER_ServerRegisterModelRepository null_mapping":       "INVALID_ARG",
	"TRITONSERVER_ServerRegisterModelRepository mapping_not_string": "INVALID_ARG",
	"TRITONSERVER_ServerRegisterModelRepository mapping_twice":      "INVALID_ARG",
	"TRITONSERVER_ServerRegisterModelRepository null_path":          "INVALID_ARG",
	"TRITONSERVER_ServerRegisterModelRepository good":               "OK",
	"TRITONSERVER_ServerRegisterModelRepository twice":              "ALREADY_EXISTS",
	"TRITONSERVER_ServerLoadModel mapped":                           "OK",
	"TRITONSERVER_ServerModelIsReady mapped":                        "OK",
	"TRITONSERVER_ServerUnregisterModelRepository good":             "OK",
	"TRITONSERVER_ServerUnregisterModelRepository twice":            "INVALID_ARG",
	"TRITONSERVER_ServerUnregisterModelRepository null_path":        "INVALID_ARG",
	"TRITONSERVER_ServerPollModelRepository not_poll (explicit)":    "UNAVAILABLE",
}

// serverAPIValues are what the calls handed back.
var serverAPIValues = map[string]string{
	"trace.released_by_refusal":    "0",
	"not_strict.ready":             "true",
	"stopped.live":                 "false",
	"trace.parent_id":              "42",
	"trace.empty_context":          `""`,
	"trace.context":                `{"k":1}`,
	"trace.null_child":             "NULL",
	"trace.child_parent_is_parent": "true",
	"trace.child_context":          `""`,
	"live":                         "true",
	"ready":                        "false", // "broken" did not load, and readiness is strict by default
	"batch.flags":                  "2 voidp=NULL",
	"metrics.counts_identity":      "true",
	"mapped.ready":                 "true",
	"index.ready":                  `[{"name":"identity","version":"1","state":"READY"}]`,
	"error.TRITONSERVER_ServerNew.exit_on_error":                          "failed to load all models",
	"error.TRITONSERVER_ServerModelStatistics.unknown_model":              "requested model 'nope' is not available",
	"error.TRITONSERVER_ServerModelStatistics.unknown_version":            "requested model version is not available for model 'identity'",
	"error.TRITONSERVER_ServerPollModelRepository.not_poll":               "polling is disabled",
	"error.TRITONSERVER_ServerRegisterModelRepository.not_explicit":       "repository registration is not allowed if model control mode is not EXPLICIT",
	"error.TRITONSERVER_ServerRegisterModelRepository.mapping_not_string": "Mapped model name must be a string, found another type for spare",
	"error.TRITONSERVER_ServerOptionsSetHostPolicy.unknown_setting":       "Unsupported host policy setting 'nope' is specified, supported settings are 'numa-node', 'cpu-cores'",
	"error.TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit.cpu":         "given device kind is not supported, got: CPU",
	"error.TRITONSERVER_ServerLoadModel.not_explicit":                     "explicit model load / unload is not allowed if polling is enabled (the server does not run with explicit model control)",
}

// buildServerAPI compiles testdata/server_api.c against libtritonserver.so.
func buildServerAPI(t *testing.T) string {
	t.Helper()
	testenv.Make(t, "lib")
	root := testenv.RepoRoot(t)
	lib := filepath.Join(root, "lib")
	out := filepath.Join(t.TempDir(), "server_api")
	cc := exec.Command("gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", filepath.Join(root, "include"),
		"-I", filepath.Join(root, "backends_c"), "-o", out, filepath.Join("testdata", "server_api.c"), "-L", lib, "-ltritonserver", "-Wl,-rpath,"+lib)
	if msg, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("build server_api.c: %v\n%s", err, msg)
	}
	return out
}

func TestServerAPIAnswersGoodAndBadArguments(t *testing.T) {
	backends := testenv.BackendDir(t)
	prog := buildServerAPI(t)
	repo := testenv.Repository(t,
		testenv.Model{Name: "identity", Config: identityConfig},
		testenv.Model{Name: "broken", Config: `backend: "no_such_backend"`})
	spare := testenv.Repository(t, testenv.Model{Name: "spare", Config: identityConfig})
	cmd := exec.Command(prog, repo, backends, spare)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("server_api: %v\n%s\n%s", err, stdout, stderr.String())
	}
	checks, values := map[string]string{}, map[string]string{}
	seen := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(string(stdout)))
	for sc.Scan() {
		l := sc.Text()
		if kv, ok := strings.CutPrefix(l, "value "); ok {
			k, v, _ := strings.Cut(kv, "=")
			values[k] = v
			continue
		}
		f := strings.Fields(l)
		if len(f) != 3 {
			continue
		}
		key := f[0] + " " + f[1]
		if seen[key]++; seen[key] > 1 {
			key += " (explicit)" // the explicit server's case of a name checked before
		}
		checks[key] = f[2]
	}
	if !strings.HasSuffix(strings.TrimSpace(string(stdout)), "done") {
		t.Errorf("server_api did not finish:\n%s", stdout)
	}
	for key, want := range serverAPIChecks {
		got, ok := checks[key]
		if !ok {
			t.Errorf("%s: not reported", key)
		} else if got != want {
			fn, kase, _ := strings.Cut(key, " ")
			t.Errorf("%s = %s (%s), want %s", key, got, values["error."+fn+"."+kase], want)
		}
	}
	for key := range checks {
		if _, ok := serverAPIChecks[key]; !ok {
			t.Errorf("%s: reported, but not in the table", key)
		}
	}
	for key, want := range serverAPIValues {
		if got := values[key]; got != want {
			t.Errorf("value %s = %q, want %q", key, got, want)
		}
	}
	if md := values["metadata"]; !strings.HasPrefix(md, `{"name":"triton","version":"`) ||
		!strings.HasSuffix(md, `"extensions":["sequence","model_repository","model_repository(unload_dependents)","schedule_policy","model_configuration",`+
			`"system_shared_memory","binary_tensor_data","parameters","statistics","trace","logging"]}`) {
		t.Errorf("server metadata %s", md)
	}
	if strings.Contains(stderr.String(), "still live at exit") {
		t.Errorf("a server left objects of the API behind:\n%s", stderr.String())
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr.String())
	}
}
