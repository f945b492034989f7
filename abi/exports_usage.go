package abi

// This file holds the Go function the C side calls for memory-usage reports
// (//export); see exports_request.go.

/*
#include "objects.h"
*/
import "C"

import (
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
)

//export thostReportMemoryUsage
func thostReportMemoryUsage(host *C.struct_thost_host, owner C.int, key C.uint64_t, list *C.struct_thost_usage, n C.uint32_t) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONBACKEND_ReportMemoryUsage", &ret)
	usage := make([]core.MemoryUsage, int(n))
	for i, u := range unsafe.Slice(list, int(n)) {
		usage[i] = core.MemoryUsage{Type: core.MemoryType(u.memory_type), ID: int64(u.memory_type_id), ByteSize: uint64(u.byte_size)}
	}
	h := hostOf(host)
	if owner == 0 {
		var m *core.Model
		ok := false
		if h != nil {
			m, ok = h.models.get(uint64(key))
		}
		if !ok {
			return cErrorf(core.CodeNotFound, "TRITONBACKEND_ModelReportMemoryUsage: the model is no longer known to the server")
		}
		m.ReportMemoryUsage(usage)
		return nil
	}
	var inst *core.Instance
	if h != nil {
		inst = h.instances.get(uint64(key))
	}
	if inst == nil {
		return cErrorf(core.CodeNotFound, "TRITONBACKEND_ModelInstanceReportMemoryUsage: the instance is no longer known to the server")
	}
	inst.ReportMemoryUsage(usage)
	return nil
}
