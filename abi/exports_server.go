package abi

// This file holds the Go functions the C side of the server's model
// control and model properties calls (//export); see exports_request.go
// for why no C is defined here.

/*
#include <stdlib.h>
#include "inprocess.h"
*/
import "C"

import (
	"bytes"
	"context"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
)

//export thostServerLoadModel
func thostServerLoadModel(host *C.struct_thost_host, name *C.char, params **C.TRITONSERVER_Parameter, count C.uint64_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerLoadModelWithParameters"
	defer recoverError(fn, &ret)
	h, srv, cerr := serverOf(host, fn)
	if cerr != nil {
		return cerr
	}
	opts, err := loadParameters(unsafe.Slice(params, int(count)))
	if err != nil {
		return cError(err)
	}
	if h.upstream != nil {
		return cError(h.upstream.LoadModel(C.GoString(name), opts))
	}
	return cError(srv.LoadModelWith(C.GoString(name), opts))
}

// loadParameters reads the parameters of TRITONSERVER_ServerLoadModelWithParameters
// as core.ParseLoadParameters takes them: "config" a string, "file:<path>"
// bytes (copied: the caller's memory is theirs once the call returns).
func loadParameters(params []*C.TRITONSERVER_Parameter) (core.LoadOptions, error) {
	if len(params) > core.MaxLoadParameters {
		return core.LoadOptions{}, core.Errorf(core.CodeInvalidArg, "the load request has %d parameters, more than the %d the server accepts",
			len(params), core.MaxLoadParameters)
	}
	byName := make(map[string]*C.TRITONSERVER_Parameter, len(params))
	for _, p := range params {
		name := C.GoString(p.name)
		if _, dup := byName[name]; dup {
			return core.LoadOptions{}, core.Errorf(core.CodeInvalidArg, "load parameter '%s' is given twice", name)
		}
		byName[name] = p
	}
	typeName := func(p *C.TRITONSERVER_Parameter) string {
		return C.GoString(C.TRITONSERVER_ParameterTypeString(p._type))
	}
	config := func(name string, p *C.TRITONSERVER_Parameter) (string, error) {
		if p._type != C.TRITONSERVER_PARAMETER_STRING || p.s == nil {
			return "", core.Errorf(core.CodeInvalidArg, "load parameter '%s' must be a TRITONSERVER_PARAMETER_STRING, got %s", name, typeName(p))
		}
		return C.GoString(p.s), nil
	}
	file := func(name string, p *C.TRITONSERVER_Parameter) ([]byte, error) {
		if p._type != C.TRITONSERVER_PARAMETER_BYTES {
			return nil, core.Errorf(core.CodeInvalidArg, "load parameter '%s' must be a TRITONSERVER_PARAMETER_BYTES, got %s", name, typeName(p))
		}
		return C.GoBytes(p.bytes, C.int(p.byte_size)), nil
	}
	return core.ParseLoadParameters(byName, config, file)
}

//export thostServerUnloadModel
func thostServerUnloadModel(host *C.struct_thost_host, name *C.char, dependents C.bool) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONSERVER_ServerUnloadModel", &ret)
	fn := "TRITONSERVER_ServerUnloadModel"
	if dependents {
		fn = "TRITONSERVER_ServerUnloadModelAndDependents"
	}
	h, srv, cerr := serverOf(host, fn)
	if cerr != nil {
		return cerr
	}
	if h.upstream != nil {
		return cError(h.upstream.UnloadModel(C.GoString(name), bool(dependents)))
	}
	return cError(srv.StartUnload(context.Background(), C.GoString(name), bool(dependents)))
}

//export thostServerModelDecoupled
func thostServerModelDecoupled(host *C.struct_thost_host, name *C.char, version C.int64_t, decoupled *C.bool) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerModelTransactionProperties"
	defer recoverError(fn, &ret)
	_, m, cerr := serverModel(host, fn, name, version)
	if cerr != nil {
		return cerr
	}
	cfg, err := m.config()
	if err != nil {
		return cError(err)
	}
	*decoupled = C.bool(cfg.GetModelTransactionPolicy().GetDecoupled())
	return nil
}

// ---- The server object ------------------------------------------------------

//export thostServerNew
func thostServerNew(key C.uint64_t, handle *C.uint64_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerNew"
	defer recoverError(fn, &ret)
	o, ok := serverOptions.get(uint64(key))
	if !ok {
		return cErrorf(core.CodeInvalidArg, "%s: invalid server options", fn)
	}
	h, err := newServer(o.clone())
	if err != nil {
		return cError(err)
	}
	*handle = h.c.server
	return nil
}

// madeServer returns the host of a server TRITONSERVER_ServerNew made, and
// its info, or the error for the caller fn.
func madeServer(c *C.struct_thost_host, fn string) (*Host, *ServerInfo, *C.TRITONSERVER_Error) {
	h := hostOf(c)
	if h == nil {
		return nil, nil, cErrorf(core.CodeUnavailable, "%s: the server has stopped", fn)
	}
	info := h.serverInfo()
	if info.Stop == nil {
		return nil, nil, cErrorf(core.CodeInvalidArg, "%s: the server belongs to the process that hosts it; "+
			"only a server made by TRITONSERVER_ServerNew can be stopped or deleted", fn)
	}
	return h, info, nil
}

//export thostServerDelete
func thostServerDelete(host *C.struct_thost_host) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerDelete"
	defer recoverError(fn, &ret)
	h, info, cerr := madeServer(host, fn)
	if cerr != nil {
		return cerr
	}
	return cError(h.deleteServer(info))
}

//export thostServerStop
func thostServerStop(host *C.struct_thost_host) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerStop"
	defer recoverError(fn, &ret)
	_, info, cerr := madeServer(host, fn)
	if cerr != nil {
		return cerr
	}
	return cError(info.Stop())
}

//export thostServerSetExitTimeout
func thostServerSetExitTimeout(host *C.struct_thost_host, seconds C.uint) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerSetExitTimeout"
	defer recoverError(fn, &ret)
	_, info, cerr := madeServer(host, fn)
	if cerr != nil {
		return cerr
	}
	info.SetExitTimeout(uint(seconds))
	return nil
}

//export thostServerState
func thostServerState(host *C.struct_thost_host, readiness C.bool, out *C.bool) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerIsLive"
	defer recoverError(fn, &ret)
	h := hostOf(host)
	if h == nil {
		return cErrorf(core.CodeUnavailable, "%s: the server has stopped", fn)
	}
	srv := h.server.Load()
	switch {
	case srv == nil: // its models are still loading
		*out = !readiness
	case !bool(readiness):
		*out = C.bool(srv.Live())
	case h.serverInfo().StrictReadiness:
		*out = C.bool(srv.Ready())
	default:
		*out = C.bool(srv.Live())
	}
	return nil
}

//export thostServerMetadata
func thostServerMetadata(host *C.struct_thost_host, out **C.TRITONSERVER_Message) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerMetadata"
	defer recoverError(fn, &ret)
	h := hostOf(host)
	if h == nil {
		return cErrorf(core.CodeUnavailable, "%s: the server has stopped", fn)
	}
	var js []byte
	var err error
	if h.upstream != nil {
		js, err = h.upstream.ServerMetadata()
	} else {
		js, err = ServerMetadataJSON(*h.serverInfo())
	}
	if err != nil {
		return cErrorf(core.CodeOf(err), "%s: %v", fn, err)
	}
	return newMessage(fn, js, out)
}

//export thostServerModelMaxBatch
func thostServerModelMaxBatch(host *C.struct_thost_host, name *C.char, version C.int64_t, out *C.int64_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerModelBatchProperties"
	defer recoverError(fn, &ret)
	_, m, cerr := serverModel(host, fn, name, version)
	if cerr != nil {
		return cerr
	}
	cfg, err := m.config()
	if err != nil {
		return cError(err)
	}
	*out = C.int64_t(cfg.GetMaxBatchSize())
	return nil
}

//export thostServerModelStatistics
func thostServerModelStatistics(host *C.struct_thost_host, name *C.char, version C.int64_t, out **C.TRITONSERVER_Message) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerModelStatistics"
	defer recoverError(fn, &ret)
	h, srv, cerr := serverOf(host, fn)
	if cerr != nil {
		return cerr
	}
	var js []byte
	var err error
	if h.upstream != nil {
		js, err = h.upstream.Statistics(C.GoString(name), int64(version))
	} else {
		js, err = StatisticsJSON(srv, C.GoString(name), int64(version))
	}
	if err != nil {
		return cError(err)
	}
	return newMessage(fn, js, out)
}

//export thostServerModelIndex
func thostServerModelIndex(host *C.struct_thost_host, readyOnly C.bool, out **C.TRITONSERVER_Message) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerModelIndex"
	defer recoverError(fn, &ret)
	h, srv, cerr := serverOf(host, fn)
	if cerr != nil {
		return cerr
	}
	var js []byte
	var err error
	if h.upstream != nil {
		js, err = h.upstream.Index(bool(readyOnly))
	} else {
		js, err = IndexJSON(srv, bool(readyOnly))
	}
	if err != nil {
		return cError(err)
	}
	return newMessage(fn, js, out)
}

//export thostServerRegisterRepository
func thostServerRegisterRepository(host *C.struct_thost_host, path *C.char, mapping **C.TRITONSERVER_Parameter, count C.uint32_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerRegisterModelRepository"
	defer recoverError(fn, &ret)
	_, srv, cerr := serverOf(host, fn)
	if cerr != nil {
		return cerr
	}
	repo := C.GoString(path)
	models := map[string]string{} // model name -> subdirectory
	for _, p := range unsafe.Slice(mapping, int(count)) {
		subdir := C.GoString(p.name)
		if p._type != C.TRITONSERVER_PARAMETER_STRING || p.s == nil {
			return cErrorf(core.CodeInvalidArg, "Mapped model name must be a string, found another type for %s", subdir)
		}
		model := C.GoString(p.s)
		if _, dup := models[model]; dup {
			return cErrorf(core.CodeInvalidArg, "failed to register '%s', there is a conflicting mapping for '%s'", repo, model)
		}
		models[model] = subdir
	}
	return cError(srv.RegisterRepository(repo, models))
}

//export thostServerUnregisterRepository
func thostServerUnregisterRepository(host *C.struct_thost_host, path *C.char) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerUnregisterModelRepository"
	defer recoverError(fn, &ret)
	_, srv, cerr := serverOf(host, fn)
	if cerr != nil {
		return cerr
	}
	return cError(srv.UnregisterRepository(C.GoString(path)))
}

//export thostServerPoll
func thostServerPoll(host *C.struct_thost_host) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerPollModelRepository"
	defer recoverError(fn, &ret)
	_, srv, cerr := serverOf(host, fn)
	if cerr != nil {
		return cerr
	}
	return cError(srv.Poll())
}

//export thostServerMetricsText
func thostServerMetricsText(host *C.struct_thost_host, text **C.char, size *C.size_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_MetricsFormatted"
	defer recoverError(fn, &ret)
	h := hostOf(host)
	if h == nil {
		return cErrorf(core.CodeUnavailable, "%s: the server of the metrics has stopped", fn)
	}
	var buf bytes.Buffer
	if h.upstream != nil {
		text, err := h.upstream.MetricsText()
		if err != nil {
			return cErrorf(core.CodeOf(err), "%s: %v", fn, err)
		}
		buf.Write(text)
	} else if err := MetricsText(*h.serverInfo(), &buf); err != nil {
		return cErrorf(core.CodeInternal, "%s: %v", fn, err)
	}
	// C memory the snapshot owns, NUL-terminated, until it is formatted
	// again or deleted.
	p := (*C.char)(C.malloc(C.size_t(buf.Len() + 1)))
	if p == nil {
		return cErrorf(core.CodeInternal, "%s: out of memory", fn)
	}
	out := unsafe.Slice((*byte)(unsafe.Pointer(p)), buf.Len()+1)
	copy(out, buf.Bytes())
	out[buf.Len()] = 0
	*text, *size = p, C.size_t(buf.Len())
	return nil
}
