package seqbatch_test

import (
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// TestStateUpdatesOverMaxTensorBytesAreRefused: a backend's state update
// larger than MaxTensorBytes fails, naming the model and the state, and
// the state keeps its value.
func TestStateUpdatesOverMaxTensorBytesAreRefused(t *testing.T) {
	t.Parallel()
	errs := make(chan error, 2)
	p := coretest.NewProvider().Set("acc", coretest.Inspect(func(r *core.Request) {
		size := map[string]int{"small": 16, "large": 20}[r.ID()]
		errs <- r.UpdateState("STATE_OUT", core.TypeInt32, []int64{int64(size / 4)}, make([]byte, size))
	}, coretest.Echo()))
	srv := seqServer(t, accConfig(0, `state [ { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_INT32 dims: [ -1 ] } ]`, ""), p, nil, func(o *core.Options) { o.MaxTensorBytes = 16 })
	for _, q := range []seqReq{{id: "small", corr: uintID(1), flags: startEnd(true, false)}, {id: "large", corr: uintID(1), flags: startEnd(false, true)}} {
		send(t, srv, 0, q).Single(t)
	}
	if err := <-errs; err != nil {
		t.Errorf("UpdateState of 16 bytes: %v", err)
	}
	coretest.WantError(t, "UpdateState of 20 bytes", <-errs, core.CodeInvalidArg, `model "acc"`, `state "STATE_OUT"`, "20 bytes", "MaxTensorBytes")
}
