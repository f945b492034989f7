package abi

// This file holds the Go functions the C side of the in-process server API
// calls (//export): finding models, submitting and cancelling requests, and
// the model queries. See exports_request.go for why no C is defined here.

/*
#include "inprocess.h"
*/
import "C"

import (
	"encoding/json"

	"github.com/tritonhost/tritonhost/core"
)

//export thostServerFindModel
func thostServerFindModel(host *C.struct_thost_host, name *C.char, version C.int64_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_InferenceRequestNew"
	defer recoverError(fn, &ret)
	h, srv, cerr := serverOf(host, fn)
	if cerr != nil {
		return cerr
	}
	_, err := h.findModel(srv, C.GoString(name), int64(version))
	return cError(err)
}

//export thostServerInferAsync
func thostServerInferAsync(host *C.struct_thost_host, req *C.struct_thost_infer_request, call *C.struct_thost_infer_call, trace *C.struct_thost_trace) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerInferAsync"
	defer recoverError(fn, &ret)
	h, srv, cerr := serverOf(host, fn)
	if cerr != nil {
		return cerr
	}
	return cError(h.submit(srv, req, call, trace))
}

//export thostInferCancel
func thostInferCancel(host *C.struct_thost_host, key C.uint64_t) {
	defer recoverLog("TRITONSERVER_InferenceRequestCancel")
	if h := hostOf(host); h != nil {
		if c, ok := h.calls.get(uint64(key)); ok {
			c.cancel()
		}
	}
}

//export thostServerModelIsReady
func thostServerModelIsReady(host *C.struct_thost_host, name *C.char, version C.int64_t, ready *C.bool) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerModelIsReady"
	defer recoverError(fn, &ret)
	h, srv, cerr := serverOf(host, fn)
	if cerr != nil {
		return cerr
	}
	if !srv.Live() {
		return errServerNotReady()
	}
	m, err := h.findModel(srv, C.GoString(name), int64(version))
	*ready = C.bool(err == nil && m.ready())
	return nil
}

//export thostServerModelMetadata
func thostServerModelMetadata(host *C.struct_thost_host, name *C.char, version C.int64_t, out **C.TRITONSERVER_Message) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerModelMetadata"
	defer recoverError(fn, &ret)
	srv, m, cerr := serverModel(host, fn, name, version)
	if cerr != nil {
		return cerr
	}
	if m.up != nil {
		return newMessage(fn, m.up.MetadataJSON, out)
	}
	js, err := json.Marshal(srv.Metadata(m.local, int64(version)))
	if err != nil {
		return cErrorf(core.CodeInternal, "%s: model %q: %v", fn, m.name(), err)
	}
	return newMessage(fn, js, out)
}

//export thostServerModelConfig
func thostServerModelConfig(host *C.struct_thost_host, name *C.char, version C.int64_t, configVersion C.uint32_t, out **C.TRITONSERVER_Message) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerModelConfig"
	defer recoverError(fn, &ret)
	_, m, cerr := serverModel(host, fn, name, version)
	if cerr != nil {
		return cerr
	}
	if configVersion != 1 { // Triton's ModelConfigToJson
		return cErrorf(core.CodeInvalidArg, "model configuration version %d not supported, supported versions are: 1", configVersion)
	}
	return newMessage(fn, m.configJSON(), out)
}

// newMessage stores in *out a new message holding js, owned by the caller.
func newMessage(fn string, js []byte, out **C.TRITONSERVER_Message) *C.TRITONSERVER_Error {
	msg := C.thost_message_new(cbytes(js), C.size_t(len(js)), nil)
	if msg == nil {
		return cErrorf(core.CodeInternal, "%s: out of memory", fn)
	}
	C.thost_message_store(msg, out)
	return nil
}
