package abi

// This file holds the Go functions the C side of the API calls for models,
// statistics, logging and JSON (//export); see exports_request.go.

/*
#include "objects.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"reflect"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/core/modelconfig"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

//export thostModelSetConfig
func thostModelSetConfig(model *C.struct_thost_model, js *C.char, n C.size_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONBACKEND_ModelSetConfig"
	defer recoverError(fn, &ret)
	m, cerr := modelOf(model, fn)
	if cerr != nil {
		return cerr
	}
	update, err := modelconfig.FromJSON(unsafe.Slice((*byte)(unsafe.Pointer(js)), int(n)))
	if err != nil {
		return cErrorf(core.CodeInvalidArg, "%s: model %q: %v", fn, m.Name(), err)
	}
	cfg, err := mergeConfig(m.Config(), update)
	if err != nil {
		return cErrorf(core.CodeInternal, "%s: model %q: %v", fn, m.Name(), err)
	}
	if err := m.SetConfig(cfg); err != nil {
		return cError(err)
	}
	out := m.ConfigJSON()
	C.thost_model_set_config_json(model, cbytes(out), C.size_t(len(out)))
	return nil
}

// modelOf returns the core model of a model handle's object, or an error for
// the backend calling fn.
func modelOf(model *C.struct_thost_model, fn string) (*core.Model, *C.TRITONSERVER_Error) {
	if h := hostOf(model.backend.host); h != nil {
		if m, ok := h.models.get(uint64(model.key)); ok {
			return m, nil
		}
	}
	return nil, cErrorf(core.CodeNotFound, "%s: the model is no longer known to the server", fn)
}

// instanceOf returns the core instance of an instance handle's object, or an
// error for the backend calling fn.
func instanceOf(inst *C.struct_thost_instance, fn string) (*core.Instance, *C.TRITONSERVER_Error) {
	if h := hostOf(inst.model.backend.host); h != nil {
		if i := h.instances.get(uint64(inst.key)); i != nil {
			return i, nil
		}
	}
	return nil, cErrorf(core.CodeNotFound, "%s: the instance is no longer known to the server", fn)
}

// mergeConfig applies what a backend may change through
// TRITONBACKEND_ModelSetConfig to a copy of the current configuration, as
// Triton's TritonModel::UpdateModelConfig does: max_batch_size, input and
// output are taken from the update; its scheduling choice only if the
// model has none (a different one is an error); its decoupled setting if it
// has a transaction policy. Everything else in the update is ignored.
func mergeConfig(cur, update *configpb.ModelConfig) (*configpb.ModelConfig, error) {
	cfg := proto.Clone(cur).(*configpb.ModelConfig)
	cfg.MaxBatchSize = update.GetMaxBatchSize()
	cfg.Input = update.GetInput()
	cfg.Output = update.GetOutput()
	switch have, want := cfg.GetSchedulingChoice(), update.GetSchedulingChoice(); {
	case have == nil:
		cfg.SchedulingChoice = want
	case reflect.TypeOf(have) != reflect.TypeOf(want):
		return nil, fmt.Errorf("cannot change the scheduling choice from %T to %T when auto-completing", have, want)
	}
	if p := update.GetModelTransactionPolicy(); p != nil {
		cfg.ModelTransactionPolicy = &configpb.ModelTransactionPolicy{Decoupled: p.GetDecoupled()}
	}
	return cfg, nil
}

// thostReportBatchStatistics records a batch-statistics report that could
// not wait in its instance for Execute to return. When it comes from the
// thread executing the instance (executing), the reports waiting there are
// recorded first, so that they keep their order.
//
//export thostReportBatchStatistics
func thostReportBatchStatistics(inst *C.struct_thost_instance, executing C.bool, batchSize, execStart, computeStart, computeEnd, execEnd C.uint64_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONBACKEND_ModelInstanceReportBatchStatistics"
	defer recoverError(fn, &ret)
	i, cerr := instanceOf(inst, fn)
	if cerr != nil {
		return cerr
	}
	if executing {
		recordBatchStats(i, inst)
	}
	i.ReportBatchStatistics(uint64(batchSize), uint64(execStart), uint64(computeStart), uint64(computeEnd), uint64(execEnd))
	return nil
}

// recordWaitingBatchStats records the batch-statistics reports waiting in
// inst, the instance executing on the calling thread (thost_batch_waiting),
// if any: nil does nothing.
func recordWaitingBatchStats(inst *C.struct_thost_instance) {
	if inst == nil {
		return
	}
	if h := hostOf(inst.model.backend.host); h != nil {
		if i := h.instances.get(uint64(inst.key)); i != nil {
			recordBatchStats(i, inst)
		}
	}
	inst.batch_count = 0 // an instance no longer known drops them
}

// recordBatchStats records the batch-statistics reports waiting in inst
// (made during its current or last Execute, on the executing thread) and
// empties the buffer. The caller is that thread, or the goroutine that
// called Execute once it returned.
func recordBatchStats(i *core.Instance, inst *C.struct_thost_instance) {
	n := int(inst.batch_count)
	if n == 0 {
		return
	}
	for _, b := range inst.batch[:n] {
		i.ReportBatchStatistics(uint64(b.batch_size), uint64(b.exec_start), uint64(b.compute_start), uint64(b.compute_end), uint64(b.exec_end))
	}
	inst.batch_count = 0
}

// thostResponseStatistics records reports a request's context buffered
// past THOST_PENDING_RSTATS (a backend that reports without sending or
// releasing).
//
//export thostResponseStatistics
func thostResponseStatistics(ctx *C.struct_thost_reqctx, stats *C.struct_thost_rstat) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONBACKEND_ModelInstanceReportResponseStatistics"
	defer recoverError(fn, &ret)
	st, cerr := requestOf(ctx, fn)
	if cerr != nil {
		return cerr
	}
	st.recordStats(stats)
	return nil
}

//export thostLog
func thostLog(host *C.struct_thost_host, level C.int, file *C.char, line C.int, msg *C.char) {
	defer recoverLog("TRITONSERVER_LogMessage")
	if h := hostOf(host); h != nil {
		h.log.Log(serverlog.Level(level), C.GoString(file), int(line), C.GoString(msg))
	}
}

//export thostJSONValid
func thostJSONValid(data *C.char, n C.size_t) (valid C.bool) {
	defer recoverLog("TRITONSERVER_MessageNewFromSerializedJson")
	return C.bool(json.Valid(unsafe.Slice((*byte)(unsafe.Pointer(data)), int(n))))
}
