package abi

// This file holds the Go function the C side calls for trace activities
// (//export); see exports_request.go.

/*
#include "objects.h"
*/
import "C"

import "tritonhost/core"

//export thostTraceActivity
func thostTraceActivity(ctx *C.struct_thost_reqctx, timestamp C.uint64_t, name *C.char) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_InferenceTraceReportActivity"
	defer recoverError(fn, &ret)
	st, cerr := requestOf(ctx, fn)
	if cerr != nil {
		return cerr
	}
	if st.req.Trace() == nil {
		return cErrorf(core.CodeNotFound, "%s: the request is not traced", fn)
	}
	st.req.Trace().Report(C.GoString(name), uint64(timestamp))
	return nil
}
