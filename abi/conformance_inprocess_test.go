package abi_test

import "testing"

// The in-process server API (checks_inprocess*.c, kind_inprocess.c,
// kind_peer.c): objects on their own, then a request submitted to
// conformance_peer. Rows marked "" agree with Triton's tritonserver.cc
// and infer_request.cc (same codes, and where Triton words its errors,
// the same words).
var inprocessChecks = []conformanceCheck{
	{"TRITONBACKEND_ResponseSend", "inprocess", "OK", ""},

	{"TRITONSERVER_InferenceRequestAddInput", "after_raw", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestAddInput", "duplicate", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestAddInput", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestAddInput", "invalid_type", "INVALID_ARG", tritonNoCheck},
	{"TRITONSERVER_InferenceRequestAddInput", "null_name", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestAddInput", "null_shape", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestAddInput", "scalar", "OK", ""},

	{"TRITONSERVER_InferenceRequestAddRawInput", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestAddRawInput", "null_name", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestAddRawInput", "with_others", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestAddRequestedOutput", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestAddRequestedOutput", "null_name", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestAddRequestedOutput", "twice", "OK", ""},

	{"TRITONSERVER_InferenceRequestAppendInputData", "cpu_pinned", "OK", ""},
	{"TRITONSERVER_InferenceRequestAppendInputData", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestAppendInputData", "gpu", "UNSUPPORTED", "Triton: OK, GPU input data is copied where needed; tritonhost takes CPU memory only from backends"},
	{"TRITONSERVER_InferenceRequestAppendInputData", "null_base", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestAppendInputData", "unknown_input", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestAppendInputData", "unknown_memory_type", "INVALID_ARG", tritonNoCheck},

	{"TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes", "deleted_attributes", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes", "good", "OK", ""},

	{"TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy", "null_policy", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestCancel", "not_submitted", "OK", ""},
	{"TRITONSERVER_InferenceRequestCancel", "null_request", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestCorrelationId", "default", "OK", ""},
	{"TRITONSERVER_InferenceRequestCorrelationId", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestCorrelationId", "string", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestCorrelationIdString", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestCorrelationIdString", "numeric", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestDelete", "after_release", "OK", ""},
	{"TRITONSERVER_InferenceRequestDelete", "in_flight", "INVALID_ARG", tritonInFlight},
	{"TRITONSERVER_InferenceRequestDelete", "null", "OK", ""}, // deleting NULL is nothing, as in Triton
	{"TRITONSERVER_InferenceRequestDelete", "refused", "OK", ""},
	{"TRITONSERVER_InferenceRequestDelete", "scratch", "OK", ""},
	{"TRITONSERVER_InferenceRequestDelete", "twice", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestFlags", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestFlags", "null_out", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestId", "after_set", "OK", ""},
	{"TRITONSERVER_InferenceRequestId", "default", "OK", ""},
	{"TRITONSERVER_InferenceRequestId", "deleted_request", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestId", "null_out", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestIsCancelled", "not_submitted", "OK", ""},
	{"TRITONSERVER_InferenceRequestIsCancelled", "null_out", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestIsCancelled", "submitted", "OK", ""},

	{"TRITONSERVER_InferenceRequestNew", "for_peer", "OK", ""},
	{"TRITONSERVER_InferenceRequestNew", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestNew", "made_up_server", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestNew", "null_name", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestNew", "null_out", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestNew", "scratch", "OK", ""},
	{"TRITONSERVER_InferenceRequestNew", "unknown_model", "NOT_FOUND", ""},

	{"TRITONSERVER_InferenceRequestPriority", "capped", "OK", ""},
	{"TRITONSERVER_InferenceRequestPriority", "null_out", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestPriorityUInt64", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestPriorityUInt64", "null_out", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestRemoveAllInputData", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestRemoveAllInputData", "unknown_input", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestRemoveAllInputs", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestRemoveAllInputs", "null_request", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs", "null_request", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestRemoveInput", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestRemoveInput", "null_name", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestRemoveInput", "unknown", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestRemoveRequestedOutput", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestRemoveRequestedOutput", "unknown", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestSetBoolParameter", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestSetBoolParameter", "null_request", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestSetCorrelationId", "good", "OK", ""},

	{"TRITONSERVER_InferenceRequestSetCorrelationIdString", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestSetCorrelationIdString", "null_id", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestSetDoubleParameter", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestSetDoubleParameter", "null_key", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestSetFlags", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestSetFlags", "null_request", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestSetId", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestSetId", "in_flight", "INVALID_ARG", tritonInFlight},
	{"TRITONSERVER_InferenceRequestSetId", "made_up_request", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestSetId", "null_id", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestSetIntParameter", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestSetIntParameter", "null_key", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestSetPriority", "good", "OK", ""},

	{"TRITONSERVER_InferenceRequestSetPriorityUInt64", "large", "OK", ""},

	{"TRITONSERVER_InferenceRequestSetReleaseCallback", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestSetReleaseCallback", "null_request", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestSetResponseCallback", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestSetResponseCallback", "null_allocator", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceRequestSetResponseCallback", "null_response_fn", "INVALID_ARG", tritonNoCheck},

	{"TRITONSERVER_InferenceRequestSetStringParameter", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestSetStringParameter", "null_value", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceRequestSetTimeoutMicroseconds", "good", "OK", ""},

	{"TRITONSERVER_InferenceRequestTimeoutMicroseconds", "good", "OK", ""},
	{"TRITONSERVER_InferenceRequestTimeoutMicroseconds", "null_out", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceResponseDelete", "good", "OK", ""},
	{"TRITONSERVER_InferenceResponseDelete", "null", "OK", ""}, // deleting NULL is nothing, as in Triton
	{"TRITONSERVER_InferenceResponseDelete", "twice", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceResponseError", "deleted_response", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceResponseError", "good", "OK", ""},

	{"TRITONSERVER_InferenceResponseId", "good", "OK", ""},
	{"TRITONSERVER_InferenceResponseId", "null_out", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceResponseModel", "good", "OK", ""},
	{"TRITONSERVER_InferenceResponseModel", "null_out", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceResponseOutput", "good", "OK", ""},
	{"TRITONSERVER_InferenceResponseOutput", "null_out", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceResponseOutput", "out_of_range", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceResponseOutputClassificationLabel", "good", "OK", ""},
	{"TRITONSERVER_InferenceResponseOutputClassificationLabel", "out_of_range", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceResponseOutputCount", "deleted_response", "INVALID_ARG", ""},
	{"TRITONSERVER_InferenceResponseOutputCount", "good", "OK", ""},
	{"TRITONSERVER_InferenceResponseOutputCount", "null_response", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceResponseParameter", "every_index", "OK", ""},
	{"TRITONSERVER_InferenceResponseParameter", "out_of_range", "INVALID_ARG", ""},

	{"TRITONSERVER_InferenceResponseParameterCount", "good", "OK", ""},
	{"TRITONSERVER_InferenceResponseParameterCount", "null_out", "INVALID_ARG", ""},

	{"TRITONSERVER_ResponseAllocatorDelete", "good", "OK", ""},
	{"TRITONSERVER_ResponseAllocatorDelete", "null_allocator", "OK", ""}, // deleting NULL is nothing, as in Triton
	{"TRITONSERVER_ResponseAllocatorDelete", "scratch", "OK", ""},
	{"TRITONSERVER_ResponseAllocatorDelete", "twice", "INVALID_ARG", ""},

	{"TRITONSERVER_ResponseAllocatorNew", "good", "OK", ""},
	{"TRITONSERVER_ResponseAllocatorNew", "null_alloc_fn", "INVALID_ARG", tritonNoCheck},
	{"TRITONSERVER_ResponseAllocatorNew", "null_out", "INVALID_ARG", ""},
	{"TRITONSERVER_ResponseAllocatorNew", "null_release_fn", "INVALID_ARG", tritonNoCheck},
	{"TRITONSERVER_ResponseAllocatorNew", "scratch", "OK", ""},

	{"TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction", "clear", "OK", ""},
	{"TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction", "good", "OK", ""},
	{"TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction", "made_up_allocator", "INVALID_ARG", ""},

	{"TRITONSERVER_ResponseAllocatorSetQueryFunction", "clear", "OK", ""},
	{"TRITONSERVER_ResponseAllocatorSetQueryFunction", "good", "OK", ""},
	{"TRITONSERVER_ResponseAllocatorSetQueryFunction", "null_allocator", "INVALID_ARG", ""},

	{"TRITONSERVER_ServerInferAsync", "good", "OK", ""},
	{"TRITONSERVER_ServerInferAsync", "in_flight", "INVALID_ARG", tritonInFlight},
	{"TRITONSERVER_ServerInferAsync", "made_up_trace", "INVALID_ARG", "Triton: takes the trace as it is (no check)"},
	{"TRITONSERVER_ServerInferAsync", "missing_input", "INVALID_ARG", ""},
	{"TRITONSERVER_ServerInferAsync", "no_response_callback", "INVALID_ARG", tritonNoCheck},
	{"TRITONSERVER_ServerInferAsync", "null_request", "INVALID_ARG", ""},
	{"TRITONSERVER_ServerInferAsync", "null_server", "INVALID_ARG", ""},
	{"TRITONSERVER_ServerInferAsync", "released", "OK", ""},

	{"TRITONSERVER_ServerModelConfig", "config_version_2", "INVALID_ARG", ""},
	{"TRITONSERVER_ServerModelConfig", "good", "OK", ""},
	{"TRITONSERVER_ServerModelConfig", "null_name", "INVALID_ARG", ""},
	{"TRITONSERVER_ServerModelConfig", "parses", "OK", ""},
	{"TRITONSERVER_ServerModelConfig", "unknown_model", "NOT_FOUND", ""},

	{"TRITONSERVER_ServerModelIsReady", "good", "OK", ""},
	{"TRITONSERVER_ServerModelIsReady", "made_up_server", "INVALID_ARG", ""},
	{"TRITONSERVER_ServerModelIsReady", "null_out", "INVALID_ARG", ""},
	{"TRITONSERVER_ServerModelIsReady", "null_server", "INVALID_ARG", ""},
	{"TRITONSERVER_ServerModelIsReady", "unknown_model", "OK", ""},

	{"TRITONSERVER_ServerModelMetadata", "good", "OK", ""},
	{"TRITONSERVER_ServerModelMetadata", "null_out", "INVALID_ARG", ""},
	{"TRITONSERVER_ServerModelMetadata", "unknown_model", "NOT_FOUND", ""},

	{"TRITONSERVER_ServerModelTransactionProperties", "good", "OK", ""},
	{"TRITONSERVER_ServerModelTransactionProperties", "null_flags", "INVALID_ARG", tritonNoCheck},
	{"TRITONSERVER_ServerModelTransactionProperties", "null_name", "INVALID_ARG", tritonNoCheck},
	{"TRITONSERVER_ServerModelTransactionProperties", "null_server", "INVALID_ARG", tritonNoCheck},
	{"TRITONSERVER_ServerModelTransactionProperties", "null_voidp", "OK", ""},
	{"TRITONSERVER_ServerModelTransactionProperties", "unknown_model", "NOT_FOUND", ""},
	{"TRITONSERVER_ServerModelTransactionProperties", "unknown_version", "NOT_FOUND", ""},

	// The conformance server runs without explicit model control.
	{"TRITONSERVER_ServerLoadModelWithParameters", "no_parameters", "UNAVAILABLE", ""},
	{"TRITONSERVER_ServerLoadModelWithParameters", "not_explicit", "UNAVAILABLE", ""},
	{"TRITONSERVER_ServerLoadModelWithParameters", "null_name", "INVALID_ARG", tritonNoCheck},
	{"TRITONSERVER_ServerLoadModelWithParameters", "null_parameters", "INVALID_ARG", ""},
	{"TRITONSERVER_ServerLoadModelWithParameters", "null_server", "INVALID_ARG", tritonNoCheck},
	{"TRITONSERVER_ServerUnloadModel", "not_explicit", "UNAVAILABLE", ""},
	{"TRITONSERVER_ServerUnloadModel", "null_name", "INVALID_ARG", tritonNoCheck},
	{"TRITONSERVER_ServerUnloadModel", "null_server", "INVALID_ARG", tritonNoCheck},
	{"TRITONSERVER_ServerUnloadModelAndDependents", "not_explicit", "UNAVAILABLE", ""},
	{"TRITONSERVER_ServerUnloadModelAndDependents", "null_name", "INVALID_ARG", tritonNoCheck},
	{"TRITONSERVER_ServerUnloadModelAndDependents", "null_server", "INVALID_ARG", tritonNoCheck},
}

// TestConformanceInProcessCallReachesThePeerAndBack: the "inprocess"
// request's call of conformance_peer, seen from both ends. The peer saw
// what was set on the request; its outputs went where the caller's
// allocator put them (GPU was preferred, CPU given), with the attributes
// the allocator filled in; the allocator's functions ran as Triton calls
// them (start per response, alloc and buffer attributes per output buffer,
// query once, release once per buffer, none on the caller's thread); the
// caller got two responses and a flags-only final on a thread of the
// server, then its request back with RELEASE_ALL.
func TestConformanceInProcessCallReachesThePeerAndBack(t *testing.T) {
	t.Parallel()
	run := runConformance(t)
	checkValues(t, run, map[string]string{
		"inprocess.peer_ready":    "true",
		"inprocess.unknown_ready": "false",
		"inprocess.peer_metadata": `{"name":"conformance_peer","versions":["1"],"platform":"conformance",` +
			`"inputs":[{"name":"KIND","datatype":"BYTES","shape":[1]},{"name":"DATA","datatype":"INT32","shape":[-1]}],` +
			`"outputs":[{"name":"CHECKS","datatype":"BYTES","shape":[-1]},{"name":"VALUES","datatype":"BYTES","shape":[-1]},` +
			`{"name":"AUTO_OUT","datatype":"INT32","shape":[1]}]}`,
		"inprocess.peer_config.name":          "conformance_peer",
		"inprocess.peer_config.decoupled":     "true",
		"inprocess.peer_config.output.2.name": "AUTO_OUT",
		"inprocess.peer_txn_flags":            "2", // TRITONSERVER_TXN_DECOUPLED
		"inprocess.peer_txn_voidp":            "NULL",

		// The request object, read back.
		"inprocess.default_id": "", "inprocess.id": "peer-1", "inprocess.flags": "3",
		"inprocess.default_correlation_id": "0", "inprocess.correlation_id_string": "seq-7",
		"inprocess.correlation_id": "7", "inprocess.priority": "2",
		// Triton truncates a priority above UINT32_MAX; tritonhost caps it.
		"inprocess.priority_capped": "4294967295",
		"inprocess.timeout_us":      "30000000",
		// Submitting clears a cancellation made before.
		"inprocess.cancelled_before_submission": "true",
		"inprocess.cancelled_after_submission":  "false",

		// What the peer saw (its first response's parameters): DATA as its
		// two default buffers, the host-policy one left out.
		"inprocess.peer.request_id":        "peer-1",
		"inprocess.peer.correlation_id":    "seq-7",
		"inprocess.peer.timeout_us":        "30000000",
		"inprocess.peer.parameter_count":   "2",
		"inprocess.peer.data":              "shape=3 bytes=12 buffers=2 sum=6",
		"inprocess.peer.output_properties": "OK CPU_PINNED/0",
		"inprocess.peer.output_buffer":     "CPU/ipc_set",

		// What the caller got.
		"inprocess.response.model":           "conformance_peer/1",
		"inprocess.response.id":              "peer-1",
		"inprocess.response.parameter_count": "7",
		"inprocess.response.output_count":    "1", // AUTO_OUT; CHECKS was not asked for
		"inprocess.response.output.0":        "AUTO_OUT/INT32/1/4/CPU/allocator_userp",
		"inprocess.response.label":           "(null)",
		"inprocess.out":                      "11,22",
		"inprocess.null_final":               "true",
		"inprocess.release_flags":            "1",
		// 2 responses sent, 1 deleted unsent, 1 sent after the final flag
		// (refused): every buffer back to the allocator.
		"inprocess.calls":                 "starts=4 allocs=6 attributes=6 queries=1 releases=6 responses=3 finals=1",
		"inprocess.preferred_gpu":         "6",
		"inprocess.peer_send_after_final": "NOT_FOUND",
		"inprocess.query_name":            "AUTO_OUT",
		"inprocess.threads":               "alloc_on_caller=false response_on_other=true",
	})
}

// TestConformanceInProcessErrorsAreTheServers: what the server refuses
// reaches the calling backend as a client of the server would see it,
// Triton's code and words: an unknown model (Triton's model repository
// error), a request the model's configuration refuses (Triton's request
// validation), a configuration version Triton does not know.
func TestConformanceInProcessErrorsAreTheServers(t *testing.T) {
	t.Parallel()
	run := runConformance(t)
	const unknown = "Request for unknown model: 'no_such_model' is not found"
	checkValues(t, run, map[string]string{
		"error.TRITONSERVER_InferenceRequestNew.unknown_model": unknown,
		"error.TRITONSERVER_ServerModelMetadata.unknown_model": unknown,
		"error.TRITONSERVER_ServerModelConfig.unknown_model":   unknown,
		"error.TRITONSERVER_ServerModelConfig.config_version_2": "model configuration version 2 not supported, " +
			"supported versions are: 1",
		"error.TRITONSERVER_ServerInferAsync.missing_input": "[request id: <id_unknown>] expected number of inputs " +
			"between 1 and 2 but got 0 inputs for model 'conformance_peer'. Got input(s) [], but missing required " +
			"input(s) ['KIND']. Please provide all required input(s).",
	})
}
