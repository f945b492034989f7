package abi

// This file holds the Go functions the C side of the server's model
// control and model properties calls (//export); see exports_request.go
// for why no C is defined here.

/*
#include "inprocess.h"
*/
import "C"

import (
	"context"
	"unsafe"

	"tritonhost/core"
)

//export thostServerLoadModel
func thostServerLoadModel(host *C.struct_thost_host, name *C.char, params **C.TRITONSERVER_Parameter, count C.uint64_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerLoadModelWithParameters"
	defer recoverError(fn, &ret)
	_, srv, cerr := serverOf(host, fn)
	if cerr != nil {
		return cerr
	}
	opts, err := loadParameters(unsafe.Slice(params, int(count)))
	if err != nil {
		return cError(err)
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
	_, srv, cerr := serverOf(host, fn)
	if cerr != nil {
		return cerr
	}
	return cError(srv.StartUnload(context.Background(), C.GoString(name), bool(dependents)))
}

//export thostServerModelDecoupled
func thostServerModelDecoupled(host *C.struct_thost_host, name *C.char, version C.int64_t, decoupled *C.bool) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_ServerModelTransactionProperties"
	defer recoverError(fn, &ret)
	_, srv, cerr := serverOf(host, fn)
	if cerr != nil {
		return cerr
	}
	m, err := srv.Model(C.GoString(name), int64(version))
	if err != nil {
		return cError(err)
	}
	*decoupled = C.bool(m.Config().GetModelTransactionPolicy().GetDecoupled())
	return nil
}
