package abi_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/include"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// Expectations for the conformance backend; conformance_run_test.go runs it.
//
// Results follow Triton's core (backend_model.cc, backend_model_instance.cc,
// backend_memory_manager.cc, tritonserver.cc, infer_request.cc,
// model_config_utils.cc) wherever Triton defines them. Where it does not,
// tritonhost's own rule applies, and the row's last field says what Triton
// does instead. Two rules cover many rows and are not repeated there:
//
//   - Triton checks no handle and no out-pointer. Every null_* case, and
//     every use of a handle already deleted, sent or released (twice,
//     after_send, deleted_factory, released_request), is undefined
//     behaviour in Triton, usually a crash. tritonhost answers INVALID_ARG:
//     a handle is a generation-checked value, not an address
//     (abi/handle_table.h), so a dead one matches nothing however long
//     after (handles_test.go checks 10,000 frees later).
//   - Triton's MessageDelete of a host-owned message (backend config, host
//     policy) frees memory it does not own; tritonhost refuses it.

const (
	tritonNoCheck    = "Triton: OK (no check)"
	tritonNullBuffer = "Triton: OK with a NULL buffer and size 0 (MemoryReference::BufferAt)"
	tritonAfterFinal = "Triton: OK, handed to the frontend after the final flag (core does not check); tritonhost's core refuses with NOT_FOUND"
	tritonReschedule = "Triton: rescheduling needs sequence_batching { iterative_sequence: true }, elsewhere RequestRelease fails; tritonhost re-queues the request in any scheduler, until its final response"
	tritonTakesIt    = "Triton: no check, the configuration of the loaded model changes"
	tritonInFlight   = "Triton: no check; the request belongs to the server until its release callback, and touching it is undefined"
)

// conformanceCheck is one line the backend must report:
// "<fn> <kase> <want>".
type conformanceCheck struct {
	fn, kase, want string
	triton         string // how Triton differs; "" when it agrees
}

// conformanceChecks are the rows of hostChecks (the backend API) and of
// inprocessChecks (the in-process server API, conformance_inprocess_test.go).
var conformanceChecks = slices.Concat(hostChecks, inprocessChecks)

var hostChecks = []conformanceCheck{
	{"TRITONBACKEND_ApiVersion", "good", "OK", ""},
	{"TRITONBACKEND_ApiVersion", "null_major", "INVALID_ARG", ""},
	{"TRITONBACKEND_ApiVersion", "null_minor", "INVALID_ARG", ""},

	{"TRITONBACKEND_BackendArtifacts", "good", "OK", ""},
	{"TRITONBACKEND_BackendArtifacts", "null_backend", "INVALID_ARG", ""},
	{"TRITONBACKEND_BackendArtifacts", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup", "cpu", "OK", ""},
	{"TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup", "gpu_with_devices", "OK", ""},
	{"TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup", "null_attributes", "INVALID_ARG", ""},
	{"TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup", "null_device_ids", "INVALID_ARG", "Triton: OK, the devices are skipped"},
	{"TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup", "unknown_kind", "INVALID_ARG", tritonNoCheck},

	{"TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading", "good", "OK", ""},
	{"TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading", "null_attributes", "INVALID_ARG", ""},

	{"TRITONBACKEND_BackendConfig", "good", "OK", ""},
	{"TRITONBACKEND_BackendConfig", "null_backend", "INVALID_ARG", ""},
	{"TRITONBACKEND_BackendConfig", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_BackendExecutionPolicy", "after_set", "OK", ""},
	{"TRITONBACKEND_BackendExecutionPolicy", "default", "OK", ""},
	{"TRITONBACKEND_BackendExecutionPolicy", "null_backend", "INVALID_ARG", ""},
	{"TRITONBACKEND_BackendExecutionPolicy", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_BackendMemoryManager", "good", "OK", ""},
	{"TRITONBACKEND_BackendMemoryManager", "null_backend", "INVALID_ARG", ""},
	{"TRITONBACKEND_BackendMemoryManager", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_BackendName", "good", "OK", ""},
	{"TRITONBACKEND_BackendName", "null_backend", "INVALID_ARG", ""},
	{"TRITONBACKEND_BackendName", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_BackendSetExecutionPolicy", "blocking", "OK", ""},
	{"TRITONBACKEND_BackendSetExecutionPolicy", "device_blocking", "OK", ""},
	{"TRITONBACKEND_BackendSetExecutionPolicy", "null_backend", "INVALID_ARG", ""},
	{"TRITONBACKEND_BackendSetExecutionPolicy", "unknown_policy", "INVALID_ARG", tritonNoCheck},

	{"TRITONBACKEND_BackendSetState", "good", "OK", ""},
	{"TRITONBACKEND_BackendSetState", "null_backend", "INVALID_ARG", ""},

	{"TRITONBACKEND_BackendState", "good", "OK", ""},
	{"TRITONBACKEND_BackendState", "null_backend", "INVALID_ARG", ""},
	{"TRITONBACKEND_BackendState", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_InferenceRequestTimeoutMicroseconds", "good", "OK", ""},
	{"TRITONBACKEND_InferenceRequestTimeoutMicroseconds", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_InferenceRequestTimeoutMicroseconds", "null_request", "INVALID_ARG", ""},

	{"TRITONBACKEND_InferenceResponseOutput", "good", "OK", ""},
	{"TRITONBACKEND_InferenceResponseOutput", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_InferenceResponseOutput", "null_response", "INVALID_ARG", ""},
	{"TRITONBACKEND_InferenceResponseOutput", "out_of_range", "INVALID_ARG", ""},

	{"TRITONBACKEND_InferenceResponseOutputByName", "good", "OK", ""},
	{"TRITONBACKEND_InferenceResponseOutputByName", "null_name", "INVALID_ARG", ""},
	{"TRITONBACKEND_InferenceResponseOutputByName", "null_response", "INVALID_ARG", ""},
	{"TRITONBACKEND_InferenceResponseOutputByName", "unknown_name", "NOT_FOUND", ""},

	{"TRITONBACKEND_InputBuffer", "index_0", "OK", ""},
	{"TRITONBACKEND_InputBuffer", "index_1", "OK", ""},
	{"TRITONBACKEND_InputBuffer", "index_2", "OK", ""},
	{"TRITONBACKEND_InputBuffer", "null_input", "INVALID_ARG", ""},
	{"TRITONBACKEND_InputBuffer", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_InputBuffer", "out_of_range", "INVALID_ARG", tritonNullBuffer},

	{"TRITONBACKEND_InputBufferAttributes", "index_0", "OK", ""},
	{"TRITONBACKEND_InputBufferAttributes", "index_1", "OK", ""},
	{"TRITONBACKEND_InputBufferAttributes", "index_2", "OK", ""},
	{"TRITONBACKEND_InputBufferAttributes", "null_input", "INVALID_ARG", ""},
	{"TRITONBACKEND_InputBufferAttributes", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_InputBufferAttributes", "out_of_range", "INVALID_ARG", tritonNullBuffer},

	{"TRITONBACKEND_InputBufferForHostPolicy", "cpu", "OK", ""},
	{"TRITONBACKEND_InputBufferForHostPolicy", "null_policy", "OK", ""},
	{"TRITONBACKEND_InputBufferForHostPolicy", "out_of_range", "INVALID_ARG", tritonNullBuffer},

	{"TRITONBACKEND_InputProperties", "all_out_null", "OK", ""},
	{"TRITONBACKEND_InputProperties", "good", "OK", ""},
	{"TRITONBACKEND_InputProperties", "null_input", "INVALID_ARG", ""},

	{"TRITONBACKEND_InputPropertiesForHostPolicy", "cpu", "OK", ""},
	{"TRITONBACKEND_InputPropertiesForHostPolicy", "null_input", "INVALID_ARG", ""},
	{"TRITONBACKEND_InputPropertiesForHostPolicy", "null_policy", "OK", ""},

	{"TRITONBACKEND_MemoryManagerAllocate", "cpu", "OK", ""},
	{"TRITONBACKEND_MemoryManagerAllocate", "cpu_nonzero_id", "INVALID_ARG", "Triton: OK (the id of CPU memory is ignored)"},
	{"TRITONBACKEND_MemoryManagerAllocate", "cpu_pinned", "OK", ""},
	{"TRITONBACKEND_MemoryManagerAllocate", "gpu", "UNAVAILABLE", "Triton: UNSUPPORTED in a CPU-only build, UNAVAILABLE in a GPU build without a CUDA memory pool"},
	{"TRITONBACKEND_MemoryManagerAllocate", "null_buffer", "INVALID_ARG", ""},
	{"TRITONBACKEND_MemoryManagerAllocate", "null_manager", "INVALID_ARG", ""},
	{"TRITONBACKEND_MemoryManagerAllocate", "unknown_type", "INVALID_ARG", "Triton: OK without allocating (no default case)"},
	{"TRITONBACKEND_MemoryManagerAllocate", "zero_bytes", "OK", ""},

	{"TRITONBACKEND_MemoryManagerFree", "cpu", "OK", ""},
	{"TRITONBACKEND_MemoryManagerFree", "cpu_null_buffer", "OK", ""},
	{"TRITONBACKEND_MemoryManagerFree", "cpu_pinned", "OK", ""},
	{"TRITONBACKEND_MemoryManagerFree", "gpu", "UNAVAILABLE", "Triton: OK in a CPU-only build"},
	{"TRITONBACKEND_MemoryManagerFree", "null_manager", "INVALID_ARG", ""},
	{"TRITONBACKEND_MemoryManagerFree", "unknown_type", "INVALID_ARG", "Triton: OK (no default case)"},
	{"TRITONBACKEND_MemoryManagerFree", "zero_bytes", "OK", ""},

	{"TRITONBACKEND_ModelAutoCompleteConfig", "good", "OK", ""},
	{"TRITONBACKEND_ModelAutoCompleteConfig", "null_model", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelAutoCompleteConfig", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelBackend", "good", "OK", ""},
	{"TRITONBACKEND_ModelBackend", "null_model", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelBackend", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelConfig", "after_load", "OK", ""},
	{"TRITONBACKEND_ModelConfig", "after_set_config", "OK", ""},
	{"TRITONBACKEND_ModelConfig", "good", "OK", ""},
	{"TRITONBACKEND_ModelConfig", "null_model", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelConfig", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelConfig", "version_2", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceDeviceId", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceDeviceId", "null_instance", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceDeviceId", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceHostPolicy", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceHostPolicy", "null_instance", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceHostPolicy", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceIsPassive", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceIsPassive", "null_instance", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceIsPassive", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceKind", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceKind", "null_instance", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceKind", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceModel", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceModel", "null_instance", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceModel", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceName", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceName", "null_instance", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceName", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceProfileCount", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceProfileCount", "null_instance", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceProfileCount", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceProfileName", "null_instance", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceProfileName", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceProfileName", "out_of_range", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceReportBatchStatistics", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceReportBatchStatistics", "null_instance", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceReportMemoryUsage", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceReportMemoryUsage", "null_entry", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceReportMemoryUsage", "null_instance", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceReportResponseStatistics", "from_thread", "OK", ""},
	{"TRITONBACKEND_ModelInstanceReportResponseStatistics", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceReportResponseStatistics", "no_factory", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceReportResponseStatistics", "no_instance", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceReportResponseStatistics", "null_statistics", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceReportResponseStatistics", "with_error", "OK", ""},

	{"TRITONBACKEND_ModelInstanceReportStatistics", "failure", "OK", ""},
	{"TRITONBACKEND_ModelInstanceReportStatistics", "null_instance", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceReportStatistics", "null_request", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceReportStatistics", "released_request", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceReportStatistics", "success", "OK", ""},

	{"TRITONBACKEND_ModelInstanceResponseStatisticsDelete", "from_thread", "OK", ""},
	{"TRITONBACKEND_ModelInstanceResponseStatisticsDelete", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceResponseStatisticsDelete", "null", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceResponseStatisticsDelete", "twice", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceResponseStatisticsNew", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceResponseStatisticsNew", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart", "null_statistics", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetError", "null_error", "OK", ""},
	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetError", "null_statistics", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetError", "with_error", "OK", ""},

	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance", "null_instance", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance", "null_statistics", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd", "null_statistics", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory", "null_factory", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory", "null_statistics", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart", "null_statistics", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceSecondaryDeviceCount", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceSecondaryDeviceCount", "null_instance", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceSecondaryDeviceCount", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceSecondaryDeviceProperties", "null_instance", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceSecondaryDeviceProperties", "out_of_range", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceSetState", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceSetState", "null_instance", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelInstanceState", "good", "OK", ""},
	{"TRITONBACKEND_ModelInstanceState", "null_instance", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelInstanceState", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelName", "good", "OK", ""},
	{"TRITONBACKEND_ModelName", "null_model", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelName", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelReportMemoryUsage", "empty", "OK", ""},
	{"TRITONBACKEND_ModelReportMemoryUsage", "good", "OK", ""},
	{"TRITONBACKEND_ModelReportMemoryUsage", "null_entry", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelReportMemoryUsage", "null_model", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelReportMemoryUsage", "null_usage", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelRepository", "good", "OK", ""},
	{"TRITONBACKEND_ModelRepository", "null_model", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelRepository", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelServer", "good", "OK", ""},
	{"TRITONBACKEND_ModelServer", "null_model", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelServer", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelSetConfig", "after_load", "UNSUPPORTED", tritonTakesIt},
	{"TRITONBACKEND_ModelSetConfig", "auto_complete", "OK", ""},
	{"TRITONBACKEND_ModelSetConfig", "not_a_config", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelSetConfig", "null_message", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelSetConfig", "null_model", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelSetConfig", "version_2", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelSetState", "good", "OK", ""},
	{"TRITONBACKEND_ModelSetState", "null_model", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelState", "good", "OK", ""},
	{"TRITONBACKEND_ModelState", "null_model", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelState", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_ModelVersion", "good", "OK", ""},
	{"TRITONBACKEND_ModelVersion", "null_model", "INVALID_ARG", ""},
	{"TRITONBACKEND_ModelVersion", "null_out", "INVALID_ARG", ""},

	{"TRITONBACKEND_OutputBuffer", "good", "OK", ""},
	{"TRITONBACKEND_OutputBuffer", "large", "OK", ""},
	{"TRITONBACKEND_OutputBuffer", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_OutputBuffer", "null_output", "INVALID_ARG", ""},
	{"TRITONBACKEND_OutputBuffer", "second_buffer", "ALREADY_EXISTS", ""},

	{"TRITONBACKEND_OutputBufferAttributes", "after_buffer", "OK", ""},
	{"TRITONBACKEND_OutputBufferAttributes", "before_buffer", "OK", ""},
	{"TRITONBACKEND_OutputBufferAttributes", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_OutputBufferAttributes", "null_output", "INVALID_ARG", ""},

	{"TRITONBACKEND_RequestCorrelationId", "integer_id", "OK", ""},
	{"TRITONBACKEND_RequestCorrelationId", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestCorrelationId", "null_request", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestCorrelationId", "string_id", "INVALID_ARG", ""},

	{"TRITONBACKEND_RequestCorrelationIdString", "integer_id", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestCorrelationIdString", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestCorrelationIdString", "null_request", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestCorrelationIdString", "string_id", "OK", ""},

	{"TRITONBACKEND_RequestFlags", "good", "OK", ""},
	{"TRITONBACKEND_RequestFlags", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestFlags", "null_request", "INVALID_ARG", ""},

	{"TRITONBACKEND_RequestId", "good", "OK", ""},
	{"TRITONBACKEND_RequestId", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestId", "null_request", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestId", "released_request", "INVALID_ARG", ""},

	{"TRITONBACKEND_RequestInput", "good", "OK", ""},
	{"TRITONBACKEND_RequestInput", "null_name", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestInput", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestInput", "null_request", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestInput", "unknown_name", "INVALID_ARG", ""},

	{"TRITONBACKEND_RequestInputByIndex", "index_0", "OK", ""},
	{"TRITONBACKEND_RequestInputByIndex", "index_1", "OK", ""},
	{"TRITONBACKEND_RequestInputByIndex", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestInputByIndex", "null_request", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestInputByIndex", "out_of_range", "INVALID_ARG", ""},

	{"TRITONBACKEND_RequestInputCount", "good", "OK", ""},
	{"TRITONBACKEND_RequestInputCount", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestInputCount", "null_request", "INVALID_ARG", ""},

	{"TRITONBACKEND_RequestInputName", "index_0", "OK", ""},
	{"TRITONBACKEND_RequestInputName", "index_1", "OK", ""},
	{"TRITONBACKEND_RequestInputName", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestInputName", "null_request", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestInputName", "out_of_range", "INVALID_ARG", ""},

	{"TRITONBACKEND_RequestIsCancelled", "cancelled", "OK", ""},
	{"TRITONBACKEND_RequestIsCancelled", "good", "OK", ""},
	{"TRITONBACKEND_RequestIsCancelled", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestIsCancelled", "null_request", "INVALID_ARG", ""},

	{"TRITONBACKEND_RequestOutputBufferProperties", "good", "OK", ""},
	{"TRITONBACKEND_RequestOutputBufferProperties", "null_memory_type", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestOutputBufferProperties", "null_name", "OK", ""},
	{"TRITONBACKEND_RequestOutputBufferProperties", "null_request", "INVALID_ARG", ""},

	{"TRITONBACKEND_RequestOutputCount", "good", "OK", ""},
	{"TRITONBACKEND_RequestOutputCount", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestOutputCount", "null_request", "INVALID_ARG", ""},

	{"TRITONBACKEND_RequestOutputName", "index_0", "OK", ""},
	{"TRITONBACKEND_RequestOutputName", "index_1", "OK", ""},
	{"TRITONBACKEND_RequestOutputName", "index_2", "OK", ""},
	{"TRITONBACKEND_RequestOutputName", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestOutputName", "null_request", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestOutputName", "out_of_range", "INVALID_ARG", ""},

	{"TRITONBACKEND_RequestParameter", "index_0", "OK", ""},
	{"TRITONBACKEND_RequestParameter", "index_1", "OK", ""},
	{"TRITONBACKEND_RequestParameter", "index_2", "OK", ""},
	{"TRITONBACKEND_RequestParameter", "index_3", "OK", ""},
	{"TRITONBACKEND_RequestParameter", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestParameter", "null_request", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestParameter", "out_of_range", "INVALID_ARG", ""},

	{"TRITONBACKEND_RequestParameterCount", "good", "OK", ""},
	{"TRITONBACKEND_RequestParameterCount", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestParameterCount", "null_request", "INVALID_ARG", ""},

	{"TRITONBACKEND_RequestRelease", "before_thread", "OK", ""},
	{"TRITONBACKEND_RequestRelease", "cancelled", "OK", ""},
	{"TRITONBACKEND_RequestRelease", "good", "OK", ""},
	{"TRITONBACKEND_RequestRelease", "no_flags", "INVALID_ARG", tritonNoCheck},
	{"TRITONBACKEND_RequestRelease", "null_request", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestRelease", "reschedule_1", "OK", tritonReschedule},
	{"TRITONBACKEND_RequestRelease", "reschedule_2", "OK", tritonReschedule},
	{"TRITONBACKEND_RequestRelease", "reschedule_after_final", "INVALID_ARG", tritonReschedule},
	{"TRITONBACKEND_RequestRelease", "rescheduled", "OK", ""},
	{"TRITONBACKEND_RequestRelease", "twice", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestRelease", "unknown_flags", "INVALID_ARG", tritonNoCheck},

	{"TRITONBACKEND_RequestTrace", "good", "OK", ""},
	{"TRITONBACKEND_RequestTrace", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_RequestTrace", "null_request", "INVALID_ARG", ""},

	{"TRITONBACKEND_ResponseDelete", "after_send", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseDelete", "from_factory", "OK", ""},
	{"TRITONBACKEND_ResponseDelete", "good", "OK", ""},
	{"TRITONBACKEND_ResponseDelete", "null", "OK", ""}, // deleting NULL is nothing, as in Triton
	{"TRITONBACKEND_ResponseDelete", "twice", "INVALID_ARG", ""},

	{"TRITONBACKEND_ResponseFactoryDelete", "from_thread", "OK", ""},
	{"TRITONBACKEND_ResponseFactoryDelete", "good", "OK", ""},
	{"TRITONBACKEND_ResponseFactoryDelete", "null", "OK", ""}, // deleting NULL is nothing, as in Triton
	{"TRITONBACKEND_ResponseFactoryDelete", "twice", "INVALID_ARG", ""},

	{"TRITONBACKEND_ResponseFactoryIsCancelled", "cancelled", "OK", ""},
	{"TRITONBACKEND_ResponseFactoryIsCancelled", "good", "OK", ""},
	{"TRITONBACKEND_ResponseFactoryIsCancelled", "null_factory", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseFactoryIsCancelled", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseFactoryIsCancelled", "released_request", "OK", ""},

	{"TRITONBACKEND_ResponseFactoryNew", "after_final", "OK", ""},
	{"TRITONBACKEND_ResponseFactoryNew", "for_thread", "OK", ""},
	{"TRITONBACKEND_ResponseFactoryNew", "good", "OK", ""},
	{"TRITONBACKEND_ResponseFactoryNew", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseFactoryNew", "null_request", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseFactoryNew", "released_request", "INVALID_ARG", ""},

	{"TRITONBACKEND_ResponseFactorySendFlags", "after_final", "NOT_FOUND", tritonAfterFinal},
	{"TRITONBACKEND_ResponseFactorySendFlags", "after_final_from_thread", "NOT_FOUND", tritonAfterFinal},
	{"TRITONBACKEND_ResponseFactorySendFlags", "no_flags", "OK", ""},
	{"TRITONBACKEND_ResponseFactorySendFlags", "null_factory", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseFactorySendFlags", "unknown_flags", "INVALID_ARG", tritonNoCheck},

	{"TRITONBACKEND_ResponseNew", "after_final", "OK", ""},
	{"TRITONBACKEND_ResponseNew", "before_cancel", "OK", ""},
	{"TRITONBACKEND_ResponseNew", "cancelled", "OK", ""},
	{"TRITONBACKEND_ResponseNew", "for_result", "OK", ""},
	{"TRITONBACKEND_ResponseNew", "good", "OK", ""},
	{"TRITONBACKEND_ResponseNew", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseNew", "null_request", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseNew", "released_request", "INVALID_ARG", ""},

	{"TRITONBACKEND_ResponseNewFromFactory", "after_final", "OK", ""},
	{"TRITONBACKEND_ResponseNewFromFactory", "deleted_factory", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseNewFromFactory", "good", "OK", ""},
	{"TRITONBACKEND_ResponseNewFromFactory", "null_factory", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseNewFromFactory", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseNewFromFactory", "released_request", "OK", ""},

	{"TRITONBACKEND_ResponseOutput", "auto_completed_output", "OK", ""},
	{"TRITONBACKEND_ResponseOutput", "duplicate_name", "ALREADY_EXISTS", "Triton: OK (no check), the response carries the output twice"},
	{"TRITONBACKEND_ResponseOutput", "from_thread", "OK", ""},
	{"TRITONBACKEND_ResponseOutput", "good", "OK", ""},
	{"TRITONBACKEND_ResponseOutput", "invalid_datatype", "INVALID_ARG", "Triton: OK (no check)"},
	{"TRITONBACKEND_ResponseOutput", "null_name", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseOutput", "null_out", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseOutput", "null_response", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseOutput", "null_shape", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseOutput", "scalar", "OK", ""},
	{"TRITONBACKEND_ResponseOutput", "undeclared_name", "OK", "Triton: INVALID_ARG here (InferenceResponse::AddOutput looks the name up); tritonhost refuses it when the response is sent"},
	{"TRITONBACKEND_ResponseOutput", "unknown_datatype", "INVALID_ARG", "Triton: OK (no check)"},

	{"TRITONBACKEND_ResponseSend", "after_final", "NOT_FOUND", tritonAfterFinal},
	{"TRITONBACKEND_ResponseSend", "after_final_from_thread", "NOT_FOUND", tritonAfterFinal},
	{"TRITONBACKEND_ResponseSend", "before_cancel", "OK", ""},
	{"TRITONBACKEND_ResponseSend", "cancelled_error", "OK", ""},
	{"TRITONBACKEND_ResponseSend", "final", "OK", ""},
	{"TRITONBACKEND_ResponseSend", "final_from_thread", "OK", ""},
	{"TRITONBACKEND_ResponseSend", "not_final_from_thread", "OK", ""},
	{"TRITONBACKEND_ResponseSend", "null_response", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseSend", "rescheduled", "OK", ""},
	{"TRITONBACKEND_ResponseSend", "twice", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseSend", "unknown_flags", "INVALID_ARG", tritonNoCheck},

	{"TRITONBACKEND_ResponseSetBoolParameter", "good", "OK", ""},
	{"TRITONBACKEND_ResponseSetBoolParameter", "null_name", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseSetBoolParameter", "null_response", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseSetBoolParameter", "scratch", "OK", ""},

	{"TRITONBACKEND_ResponseSetDoubleParameter", "good", "OK", ""},
	{"TRITONBACKEND_ResponseSetDoubleParameter", "null_name", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseSetDoubleParameter", "null_response", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseSetDoubleParameter", "scratch", "OK", ""},

	{"TRITONBACKEND_ResponseSetIntParameter", "from_thread", "OK", ""},
	{"TRITONBACKEND_ResponseSetIntParameter", "good", "OK", ""},
	{"TRITONBACKEND_ResponseSetIntParameter", "null_name", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseSetIntParameter", "null_response", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseSetIntParameter", "scratch", "OK", ""},

	{"TRITONBACKEND_ResponseSetStringParameter", "good", "OK", ""},
	{"TRITONBACKEND_ResponseSetStringParameter", "good_long", "OK", ""},
	{"TRITONBACKEND_ResponseSetStringParameter", "good_past", "OK", ""},
	{"TRITONBACKEND_ResponseSetStringParameter", "null_name", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseSetStringParameter", "null_response", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseSetStringParameter", "null_value", "INVALID_ARG", ""},
	{"TRITONBACKEND_ResponseSetStringParameter", "scratch", "OK", ""},
	{"TRITONBACKEND_ResponseSetStringParameter", "scratch_long", "OK", ""},
	{"TRITONBACKEND_ResponseSetStringParameter", "scratch_past", "OK", ""},

	{"TRITONSERVER_ApiVersion", "good", "OK", ""},
	{"TRITONSERVER_ApiVersion", "null_major", "INVALID_ARG", ""},
	{"TRITONSERVER_ApiVersion", "null_minor", "INVALID_ARG", ""},

	{"TRITONSERVER_BufferAttributesByteSize", "after_set", "OK", ""},
	{"TRITONSERVER_BufferAttributesByteSize", "new", "OK", ""},
	{"TRITONSERVER_BufferAttributesByteSize", "null_attributes", "INVALID_ARG", ""},
	{"TRITONSERVER_BufferAttributesByteSize", "null_out", "INVALID_ARG", ""},

	{"TRITONSERVER_BufferAttributesCudaIpcHandle", "after_set", "OK", ""},
	{"TRITONSERVER_BufferAttributesCudaIpcHandle", "new", "OK", ""},
	{"TRITONSERVER_BufferAttributesCudaIpcHandle", "null_attributes", "INVALID_ARG", ""},
	{"TRITONSERVER_BufferAttributesCudaIpcHandle", "null_out", "INVALID_ARG", ""},

	{"TRITONSERVER_BufferAttributesDelete", "good", "OK", ""},
	{"TRITONSERVER_BufferAttributesDelete", "null", "OK", ""},

	{"TRITONSERVER_BufferAttributesMemoryType", "after_set", "OK", ""},
	{"TRITONSERVER_BufferAttributesMemoryType", "new", "OK", ""},
	{"TRITONSERVER_BufferAttributesMemoryType", "null_attributes", "INVALID_ARG", ""},
	{"TRITONSERVER_BufferAttributesMemoryType", "null_out", "INVALID_ARG", ""},

	{"TRITONSERVER_BufferAttributesMemoryTypeId", "after_set", "OK", ""},
	{"TRITONSERVER_BufferAttributesMemoryTypeId", "new", "OK", ""},
	{"TRITONSERVER_BufferAttributesMemoryTypeId", "null_attributes", "INVALID_ARG", ""},
	{"TRITONSERVER_BufferAttributesMemoryTypeId", "null_out", "INVALID_ARG", ""},

	{"TRITONSERVER_BufferAttributesNew", "good", "OK", ""},
	{"TRITONSERVER_BufferAttributesNew", "null_out", "INVALID_ARG", ""},

	{"TRITONSERVER_BufferAttributesSetByteSize", "good", "OK", ""},
	{"TRITONSERVER_BufferAttributesSetByteSize", "null_attributes", "INVALID_ARG", ""},

	{"TRITONSERVER_BufferAttributesSetCudaIpcHandle", "good", "OK", ""},
	{"TRITONSERVER_BufferAttributesSetCudaIpcHandle", "null_attributes", "INVALID_ARG", ""},

	{"TRITONSERVER_BufferAttributesSetMemoryType", "good", "OK", ""},
	{"TRITONSERVER_BufferAttributesSetMemoryType", "null_attributes", "INVALID_ARG", ""},

	{"TRITONSERVER_BufferAttributesSetMemoryTypeId", "good", "OK", ""},
	{"TRITONSERVER_BufferAttributesSetMemoryTypeId", "null_attributes", "INVALID_ARG", ""},

	{"TRITONSERVER_DataTypeByteSize", "every_type", "OK", ""},

	{"TRITONSERVER_DataTypeString", "every_type", "OK", ""},

	{"TRITONSERVER_ErrorCode", "every_code", "OK", ""},
	{"TRITONSERVER_ErrorCode", "null", "OK", ""},

	{"TRITONSERVER_ErrorCodeString", "every_code", "OK", ""},
	{"TRITONSERVER_ErrorCodeString", "null", "OK", ""},

	{"TRITONSERVER_ErrorDelete", "good", "OK", ""},
	{"TRITONSERVER_ErrorDelete", "null", "OK", ""},

	{"TRITONSERVER_ErrorMessage", "every_code", "OK", ""},
	{"TRITONSERVER_ErrorMessage", "null", "OK", ""},

	{"TRITONSERVER_ErrorNew", "every_code", "OK", ""},
	{"TRITONSERVER_ErrorNew", "null_message", "OK", ""},

	{"TRITONSERVER_InstanceGroupKindString", "every_kind", "OK", ""},

	{"TRITONSERVER_LogIsEnabled", "every_level", "OK", ""},
	{"TRITONSERVER_LogIsEnabled", "unknown_level", "OK", ""},

	{"TRITONSERVER_LogMessage", "error", "OK", ""},
	{"TRITONSERVER_LogMessage", "info", "OK", ""},
	{"TRITONSERVER_LogMessage", "null_file", "OK", ""},
	{"TRITONSERVER_LogMessage", "null_message", "OK", ""},
	{"TRITONSERVER_LogMessage", "unknown_level", "INVALID_ARG", ""},
	{"TRITONSERVER_LogMessage", "verbose", "OK", ""},
	{"TRITONSERVER_LogMessage", "warn", "OK", ""},

	{"TRITONSERVER_MemoryTypeString", "every_type", "OK", ""},

	{"TRITONSERVER_MessageDelete", "auto_completed", "OK", ""},
	{"TRITONSERVER_MessageDelete", "backend_config", "INVALID_ARG", ""},
	{"TRITONSERVER_MessageDelete", "config", "OK", ""},
	{"TRITONSERVER_MessageDelete", "config_after_load", "OK", ""},
	{"TRITONSERVER_MessageDelete", "config_after_set", "OK", ""},
	{"TRITONSERVER_MessageDelete", "good", "OK", ""},
	{"TRITONSERVER_MessageDelete", "host_policy", "INVALID_ARG", ""},
	{"TRITONSERVER_MessageDelete", "not_a_config", "OK", ""},
	{"TRITONSERVER_MessageDelete", "null", "OK", ""}, // deleting NULL is nothing, as in Triton

	{"TRITONSERVER_MessageNewFromSerializedJson", "auto_completed", "OK", ""},
	{"TRITONSERVER_MessageNewFromSerializedJson", "empty", "INVALID_ARG", "Triton: OK (no validation until the JSON is parsed)"},
	{"TRITONSERVER_MessageNewFromSerializedJson", "good", "OK", ""},
	{"TRITONSERVER_MessageNewFromSerializedJson", "invalid_json", "INVALID_ARG", "Triton: OK (no validation until the JSON is parsed)"},
	{"TRITONSERVER_MessageNewFromSerializedJson", "not_a_config", "OK", ""},
	{"TRITONSERVER_MessageNewFromSerializedJson", "not_nul_terminated", "OK", ""},
	{"TRITONSERVER_MessageNewFromSerializedJson", "null_base", "INVALID_ARG", ""},
	{"TRITONSERVER_MessageNewFromSerializedJson", "null_out", "INVALID_ARG", ""},

	{"TRITONSERVER_MessageSerializeToJson", "good", "OK", ""},
	{"TRITONSERVER_MessageSerializeToJson", "null_base", "INVALID_ARG", ""},
	{"TRITONSERVER_MessageSerializeToJson", "null_message", "INVALID_ARG", ""},
	{"TRITONSERVER_MessageSerializeToJson", "null_size", "INVALID_ARG", ""},

	{"TRITONSERVER_ParameterBytesNew", "empty", "OK", ""},
	{"TRITONSERVER_ParameterBytesNew", "good", "OK", ""},
	{"TRITONSERVER_ParameterBytesNew", "null_bytes", "NULL", "Triton: a parameter pointing at NULL"},
	{"TRITONSERVER_ParameterBytesNew", "null_name", "NULL", ""},

	{"TRITONSERVER_ParameterDelete", "good", "OK", ""},
	{"TRITONSERVER_ParameterDelete", "null", "OK", ""},

	{"TRITONSERVER_ParameterNew", "bool", "OK", ""},
	{"TRITONSERVER_ParameterNew", "bytes_type", "NULL", ""},
	{"TRITONSERVER_ParameterNew", "double", "OK", ""},
	{"TRITONSERVER_ParameterNew", "int", "OK", ""},
	{"TRITONSERVER_ParameterNew", "null_name", "NULL", ""},
	{"TRITONSERVER_ParameterNew", "null_value", "NULL", ""},
	{"TRITONSERVER_ParameterNew", "string", "OK", ""},
	{"TRITONSERVER_ParameterNew", "unknown_type", "NULL", ""},

	{"TRITONSERVER_ParameterTypeString", "every_type", "OK", ""},

	{"TRITONSERVER_StringToDataType", "every_name", "OK", ""},
	{"TRITONSERVER_StringToDataType", "null_name", "OK", ""},
	{"TRITONSERVER_StringToDataType", "unknown_name", "OK", ""},
}

// Host functions with tests of their own: custom metrics (metrics_test.go),
// implicit sequence state (sequence_test.go), tracing (trace_test.go,
// modelcontrol_test.go), and what an application embedding a server calls
// (server options, the server object, repositories, server metrics:
// embedded/testdata/server_api.c, with good and bad arguments, linked with
// libtritonserver.so). The conformance backend leaves them alone.
func conformanceExcluded(name string) bool {
	for _, prefix := range []string{
		"TRITONSERVER_Metric", "TRITONSERVER_GetMetricKind", "TRITONSERVER_GetMetricFamilyKind",
		"TRITONBACKEND_State", "TRITONSERVER_InferenceTrace", "TRITONSERVER_ServerOptions",
		// Caches' and agents' host functions: cache_test.go and
		// repoagent_test.go call each with good and bad arguments.
		"TRITONCACHE_", "TRITONREPOAGENT_",
	} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return slices.Contains([]string{
		"TRITONSERVER_ServerNew", "TRITONSERVER_ServerDelete", "TRITONSERVER_ServerStop",
		"TRITONSERVER_ServerSetExitTimeout", "TRITONSERVER_ServerRegisterModelRepository",
		"TRITONSERVER_ServerUnregisterModelRepository", "TRITONSERVER_ServerPollModelRepository",
		"TRITONSERVER_ServerIsLive", "TRITONSERVER_ServerIsReady", "TRITONSERVER_ServerMetadata",
		"TRITONSERVER_ServerModelBatchProperties", "TRITONSERVER_ServerModelStatistics",
		"TRITONSERVER_ServerModelIndex", "TRITONSERVER_ServerLoadModel", "TRITONSERVER_ServerMetrics",
	}, name)
}

func TestConformanceTableCoversEveryHostFunction(t *testing.T) {
	t.Parallel()
	fns, err := include.HostFunctions()
	if err != nil {
		t.Fatal(err)
	}
	host := map[string]bool{}
	for _, f := range fns {
		if !conformanceExcluded(f.Name) {
			host[f.Name] = true
		}
	}
	checked := map[string]bool{}
	seen := map[string]bool{}
	for _, c := range conformanceChecks {
		if !host[c.fn] {
			t.Errorf("table row %s %s: not a host function in scope", c.fn, c.kase)
		}
		if key := c.fn + " " + c.kase; seen[key] {
			t.Errorf("table row %s appears twice", key)
		} else {
			seen[key] = true
		}
		checked[c.fn] = true
	}
	for name := range host {
		if !checked[name] {
			t.Errorf("%s is declared for backends but the conformance backend does not check it", name)
		}
	}
}

func TestConformanceBackendGetsTritonErrorCodes(t *testing.T) {
	t.Parallel()
	run := runConformance(t)
	want := map[string]conformanceCheck{}
	for _, c := range conformanceChecks {
		want[c.fn+" "+c.kase] = c
	}
	for _, key := range slices.Sorted(maps.Keys(want)) {
		c := want[key]
		got, ok := run.checks[key]
		switch {
		case !ok:
			t.Errorf("%s: not reported", key)
		case got != c.want:
			t.Errorf("%s = %s%s, want %s", key, got, run.explain(key), c.want)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(run.checks)) {
		if _, ok := want[key]; !ok {
			t.Errorf("%s %s: reported, but not in the table", key, run.checks[key])
		}
	}
	if len(run.dups) > 0 {
		t.Errorf("reported more than once: %v", run.dups)
	}
	if t.Failed() {
		t.Logf("everything the backend reported:\n%s", run.dump())
	}
}

// checkValues compares values the backend reported with want.
func checkValues(t *testing.T, run *conformanceRun, want map[string]string) {
	t.Helper()
	for _, key := range slices.Sorted(maps.Keys(want)) {
		got, ok := run.values[key]
		switch {
		case !ok:
			t.Errorf("%s: not reported", key)
		case got != want[key]:
			t.Errorf("%s = %q, want %q", key, got, want[key])
		}
	}
}

func TestConformanceHelpersReturnTritonsNamesAndSizes(t *testing.T) {
	t.Parallel()
	run := runConformance(t)
	want := map[string]string{
		"server.api_version":  "1.34",
		"backend.api_version": "1.19",
		// Triton's ErrorCodeString has no CANCELLED case ("<invalid code>");
		// tritonhost names it.
		"ErrorCodeString.0": "Unknown", "ErrorCodeString.1": "Internal", "ErrorCodeString.2": "Not found",
		"ErrorCodeString.3": "Invalid argument", "ErrorCodeString.4": "Unavailable", "ErrorCodeString.5": "Unsupported",
		"ErrorCodeString.6": "Already exists", "ErrorCodeString.7": "Cancelled",
		"ErrorCode.3": "3", "ErrorCode.7": "7", "ErrorMessage.5": "message 5", "ErrorMessage.null_message": "",
		"ErrorCode.null": "0", "ErrorCodeString.null": "<invalid code>", "ErrorMessage.null": "",
		"MemoryTypeString.0": "CPU", "MemoryTypeString.1": "CPU_PINNED", "MemoryTypeString.2": "GPU",
		"MemoryTypeString.3": "<invalid>",
		// Older Triton releases lack the DOUBLE case here too.
		"ParameterTypeString.0": "STRING", "ParameterTypeString.1": "INT", "ParameterTypeString.2": "BOOL",
		"ParameterTypeString.3": "DOUBLE", "ParameterTypeString.4": "BYTES", "ParameterTypeString.5": "<invalid>",
		"InstanceGroupKindString.0": "AUTO", "InstanceGroupKindString.1": "CPU", "InstanceGroupKindString.2": "GPU",
		"InstanceGroupKindString.3": "MODEL", "InstanceGroupKindString.4": "<invalid>",
		"StringToDataType.<invalid>": "0", "StringToDataType.lowercase": "0", "StringToDataType.unknown": "0",
		"StringToDataType.null": "0",
		"LogIsEnabled.0":        "true", "LogIsEnabled.1": "true", "LogIsEnabled.2": "true",
		"LogIsEnabled.3": "false", // verbose logging is off in the test server
		"LogIsEnabled.4": "false",
		"Message.json":   `{"a":[1,2],"b":"x"}`, "Message.nul_terminated": "true", "Message.not_nul_terminated": "[1,2]",
		"BufferAttributes.new": "CPU/0/0/null", "BufferAttributes.after_set": "CPU_PINNED/3/1234/same",
	}
	types := []struct {
		name string
		size int
	}{
		{"<invalid>", 0}, {"BOOL", 1}, {"UINT8", 1}, {"UINT16", 2}, {"UINT32", 4}, {"UINT64", 8}, {"INT8", 1},
		{"INT16", 2}, {"INT32", 4}, {"INT64", 8}, {"FP16", 2}, {"FP32", 4}, {"FP64", 8}, {"BYTES", 0}, {"BF16", 2},
		{"<invalid>", 0}, // one past the last type
	}
	for i, tc := range types {
		want["DataTypeString."+strconv.Itoa(i)] = tc.name
		want["DataTypeByteSize."+strconv.Itoa(i)] = strconv.Itoa(tc.size)
		if tc.name != "<invalid>" {
			want["StringToDataType."+tc.name] = strconv.Itoa(i)
		}
	}
	checkValues(t, run, want)

	// TRITONSERVER_LogMessage reached the server log with its file and line;
	// verbose messages did not, as verbose logging is off.
	log := run.srv.log.String()
	for _, line := range []string{
		"conformance_probe.c:4201] conformance: info message",
		"conformance_probe.c:4202] conformance: warn message",
		"conformance_probe.c:4203] conformance: error message",
		"conformance: no file",
	} {
		if !strings.Contains(log, line) {
			t.Errorf("server log lacks %q", line)
		}
	}
	if strings.Contains(log, "conformance: verbose message") {
		t.Error("a verbose message reached the log although verbose logging is off")
	}
}

func TestConformanceBackendSeesItsBackendModelAndInstance(t *testing.T) {
	t.Parallel()
	run := runConformance(t)
	want := map[string]string{
		"backend.name":                          "conformance",
		"backend.artifacts.type":                "0", // TRITONBACKEND_ARTIFACT_FILESYSTEM
		"backend.artifacts.location":            filepath.Join(testenv.BackendDir(t), "conformance"),
		"backend.config.members":                "1", // {"cmdline": {...}} and nothing else
		"backend.config.probe-setting":          "on",
		"backend.config.global-setting":         "everyone",
		"backend.config.auto-complete-config":   "true",
		"backend.config.default-max-batch-size": "4",
		"backend.execution_policy.default":      "0", // BLOCKING
		"backend.execution_policy.after_set":    "1", // DEVICE_BLOCKING
		"backend.state_round_trip":              "true",

		"model.name":                "conformance",
		"model.version":             "1",
		"model.repository.type":     "0",
		"model.repository.location": filepath.Join(run.repo, "conformance"),
		"model.server":              "set",
		"model.backend.name":        "conformance",
		"model.auto_complete":       "true",
		"model.state_round_trip":    "true",

		"instance.name":                   "probe_0",
		"instance.kind":                   "CPU",
		"instance.device_id":              "0",
		"instance.host_policy":            `{"cpu":{"probe-policy":"kept"}}`,
		"instance.passive":                "false",
		"instance.profile_count":          "0",
		"instance.secondary_device_count": "0",
		"instance.model.name":             "conformance",
		"instance.state_round_trip":       "true",
	}
	// The configuration as ModelInitialize first sees it, in Triton's JSON.
	config := map[string]string{
		"name": "conformance", "backend": "conformance", "max_batch_size": "0", "decoupled": "true",
		"parameters.probe_param": "42", "batch_input": "", "default_model_filename": "",
		"instance_group.0.name": "probe", "instance_group.0.kind": "KIND_CPU", "instance_group.0.count": "1",
		"input.count":  "2",
		"input.0.name": "KIND", "input.0.data_type": "TYPE_STRING", "input.0.dims": "1", "input.0.optional": "false",
		"input.1.name": "DATA", "input.1.data_type": "TYPE_INT32", "input.1.dims": "-1", "input.1.optional": "true",
		"output.count":  "2",
		"output.0.name": "CHECKS", "output.0.data_type": "TYPE_STRING", "output.0.dims": "-1",
		"output.1.name": "VALUES", "output.1.data_type": "TYPE_STRING", "output.1.dims": "-1",
	}
	for k, v := range config {
		want["config."+k] = v
		// After TRITONBACKEND_ModelSetConfig (auto-complete) and later, from
		// Execute, where a second ModelSetConfig is refused: one more
		// output, and the message's parameter change ignored.
		want["config_after_set."+k] = v
		want["config_after_load."+k] = v
	}
	for _, prefix := range []string{"config_after_set.", "config_after_load."} {
		want[prefix+"output.count"] = "3"
		want[prefix+"output.2.name"] = "AUTO_OUT"
		want[prefix+"output.2.data_type"] = "TYPE_INT32"
		want[prefix+"output.2.dims"] = "1"
	}
	checkValues(t, run, want)

	// The server serves the auto-completed configuration.
	m, err := run.srv.Model("conformance", 1)
	if err != nil {
		t.Fatal(err)
	}
	var outputs []string
	for _, o := range m.Config().GetOutput() {
		outputs = append(outputs, o.GetName())
	}
	if !slices.Equal(outputs, []string{"CHECKS", "VALUES", "AUTO_OUT"}) {
		t.Errorf("served outputs = %v, want CHECKS, VALUES, AUTO_OUT", outputs)
	}
	if got := m.Config().GetParameters()["probe_param"].GetStringValue(); got != "42" {
		t.Errorf("parameter probe_param = %q after auto-complete, want the configured 42", got)
	}
}

func TestConformanceBackendSeesTheRequest(t *testing.T) {
	t.Parallel()
	run := runConformance(t)
	checkValues(t, run, map[string]string{
		"request.id":                    "main-1",
		"request.correlation_id":        "42",
		"request.correlation_id_string": "seq-a", // the thread request's
		"request.flags":                 "3",     // SEQUENCE_START | SEQUENCE_END
		"request.timeout_us":            "30000000",
		"request.is_cancelled":          "false",
		"request.trace":                 "null",
		"request.parameter_count":       "4",
		"request.parameter.s":           "STRING:text",
		"request.parameter.i":           "INT:-5",
		"request.parameter.b":           "BOOL:true",
		"request.parameter.d":           "DOUBLE:1.5",
		"request.input_count":           "2",
		"request.output_count":          "3", // no outputs named: every output, AUTO_OUT included
		// RequestOutputBufferProperties: the host wants outputs in CPU memory.
		"request.output_buffer_properties": "CPU/0",

		"input.DATA.name":               "DATA",
		"input.DATA.datatype":           "INT32",
		"input.DATA.shape":              "6",
		"input.DATA.byte_size":          "24",
		"input.DATA.buffer_count":       "3",
		"input.DATA.buffer_sizes":       "8,4,12",
		"input.DATA.values":             "1,2,3,4,5,-6",
		"input.DATA.buffer_attributes":  "CPU/0/8,CPU/0/4,CPU/0/12",
		"input.DATA.cpu_policy":         "24/3",
		"input.DATA.cpu_policy.buffer0": "8",

		"factory.is_cancelled":        "false",
		"thread.factory_is_cancelled": "false",

		// A scratch response: outputs as added, buffers in CPU memory.
		"output.attributes_before_buffer.byte_size": "0",
		"output.buffer.memory":                      "CPU/0", // GPU was preferred
		"output.attributes":                         "CPU/0/4",
		"response.output_by_name.AUTO_OUT":          "INT32/2/2,3",
		"response.output.0":                         "AUTO_OUT/INT32/2",
		"response.output.1":                         "NOT_IN_CONFIG/INT32/2",
		"response.output.2":                         "CHECKS/INT32/0",
		"response.output.3":                         "VALUES/BYTES/1",
	})
	// Input and output order is not stable in Triton: compare as sets.
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"request.input.", []string{"DATA", "KIND"}},
		{"request.input_by_index.", []string{"DATA", "KIND"}},
		{"request.output.", []string{"AUTO_OUT", "CHECKS", "VALUES"}},
	} {
		var got []string
		for i := range len(tc.want) {
			got = append(got, run.values[tc.prefix+strconv.Itoa(i)])
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s* = %v, want %v", tc.prefix, got, tc.want)
		}
	}
}

func TestConformanceResponsesReachTheClient(t *testing.T) {
	t.Parallel()
	run := runConformance(t)

	// main: one final response with a parameter of every type.
	if len(run.main) != 1 || !run.main[0].final || run.main[0].resp == nil || run.main[0].resp.Err != nil {
		t.Fatalf("main: want one final response, got %+v", run.main)
	}
	resp := run.main[0].resp
	wantParams := []core.Parameter{
		core.StringParam("p_string", "hello"), core.IntParam("p_int", -42),
		core.BoolParam("p_bool", true), core.DoubleParam("p_double", 2.5),
		core.StringParam("p_long_name_of_more_than_sixty_four_bytes_0123456789_0123456789_0123",
			"a value of more than sixty-four bytes, 0123456789 0123456789 0123456789"),
		core.StringParam("p_past", strings.Repeat("abcdefghijklmnopqrstuvwxyz", 12)[:300]),
	}
	if !slices.EqualFunc(resp.Parameters, wantParams, func(a, b core.Parameter) bool {
		return a.Name == b.Name && a.Type == b.Type && a.String == b.String && a.Int == b.Int && a.Bool == b.Bool && a.Double == b.Double
	}) {
		t.Errorf("main: parameters = %+v, want %+v", resp.Parameters, wantParams)
	}
	if got := scalarInt32(t, resp, "AUTO_OUT"); got != 7 {
		t.Errorf("main: AUTO_OUT = %d, want 7", got)
	}

	// thread: a response from the backend's thread after the request was
	// released, then the final one.
	if len(run.thread) != 2 || run.thread[0].final || !run.thread[1].final || run.thread[0].resp == nil {
		t.Fatalf("thread: want a response and a final one, got %+v", run.thread)
	}
	first := run.thread[0].resp
	if got := scalarInt32(t, first, "AUTO_OUT"); got != 99 {
		t.Errorf("thread: AUTO_OUT = %d, want 99", got)
	}
	if len(first.Parameters) != 1 || first.Parameters[0].Name != "from_thread" || first.Parameters[0].Int != 7 {
		t.Errorf("thread: parameters = %+v, want from_thread=7", first.Parameters)
	}

	// reschedule: released with RESCHEDULE twice, answered on the third run.
	if len(run.reschedule) != 1 || !run.reschedule[0].final {
		t.Errorf("reschedule: want one final response, got %+v", run.reschedule)
	}
	if got := run.values["reschedule.executions"]; got != "3" {
		t.Errorf("reschedule: executed %s times, want 3", got)
	}

	// cancel: the backend saw the cancellation and answered CANCELLED.
	if len(run.cancel) != 2 || run.cancel[1].resp == nil || core.CodeOf(run.cancel[1].resp.Err) != core.CodeCancelled {
		t.Errorf("cancel: want a response, then a final CANCELLED error; got %+v", run.cancel)
	}
	checkValues(t, run, map[string]string{"cancel.request_is_cancelled": "true", "cancel.factory_is_cancelled": "true"})
}

func TestConformanceStatisticsReachTheServer(t *testing.T) {
	t.Parallel()
	run := runConformance(t)
	stats, err := run.srv.Statistics("conformance", 1)
	if err != nil || len(stats) != 1 {
		t.Fatalf("Statistics: %+v, %v", stats, err)
	}
	s := stats[0]
	// ReportStatistics: main succeeded, the thread request failed.
	if s.Inference.Success.Count != 1 || s.Inference.Fail.Count != 1 || s.InferenceCount != 1 {
		t.Errorf("inference success/fail/count = %d/%d/%d, want 1/1/1", s.Inference.Success.Count, s.Inference.Fail.Count, s.InferenceCount)
	}
	// ReportBatchStatistics: one batch of 1.
	if s.ExecutionCount != 1 || len(s.Batches) != 1 || s.Batches[0].BatchSize != 1 || s.Batches[0].ComputeInfer.Count != 1 {
		t.Errorf("batches = %+v (executions %d), want one batch of size 1", s.Batches, s.ExecutionCount)
	}
	// ReportResponseStatistics: main's responses 0 (failed) and 1, the
	// thread's response 0.
	r0, r1 := s.Responses["0"], s.Responses["1"]
	if r0.Fail.Count != 1 || r0.Success.Count != 1 || r1.Success.Count != 1 || len(s.Responses) != 2 {
		t.Errorf("response statistics = %+v, want index 0: 1 failed and 1 successful, index 1: 1 successful", s.Responses)
	}
	// ReportMemoryUsage: 1000 bytes for the model, 24 for its instance.
	if want := []core.MemoryUsage{{Type: core.MemoryCPU, ID: 0, ByteSize: 1024}}; !slices.Equal(s.MemoryUsage, want) {
		t.Errorf("memory usage = %+v, want %+v", s.MemoryUsage, want)
	}
}
