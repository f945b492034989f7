package abi

// This file holds the Go function the C side calls for trace activities
// (//export); see exports_request.go.

/*
#include "handles.h"
*/
import "C"

import "tritonhost/core"

//export thostTraceActivity
func thostTraceActivity(reqKey C.uint64_t, timestamp C.uint64_t, name *C.char) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONSERVER_InferenceTraceReportActivity", &ret)
	st, ok := requests.get(uint64(reqKey))
	if !ok || st.req.Trace() == nil {
		return cErrorf(core.CodeNotFound, "TRITONSERVER_InferenceTraceReportActivity: the traced request is no longer known to the server")
	}
	st.req.Trace().Report(C.GoString(name), uint64(timestamp))
	return nil
}
