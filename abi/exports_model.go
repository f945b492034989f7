package abi

// This file holds the Go functions the C side of the API calls for models,
// statistics, logging and JSON (//export); see exports_request.go.

/*
#include "handles.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"reflect"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"tritonhost/core"
	"tritonhost/core/configpb"
	"tritonhost/core/modelconfig"
	"tritonhost/core/serverlog"
)

//export thostModelSetConfig
func thostModelSetConfig(model *C.TRITONBACKEND_Model, js *C.char, n C.size_t) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONBACKEND_ModelSetConfig", &ret)
	m, ok := models.get(uint64(model.key))
	if !ok {
		return cErrorf(core.CodeNotFound, "TRITONBACKEND_ModelSetConfig: the model is no longer known to the server")
	}
	update, err := modelconfig.FromJSON(unsafe.Slice((*byte)(unsafe.Pointer(js)), int(n)))
	if err != nil {
		return cErrorf(core.CodeInvalidArg, "TRITONBACKEND_ModelSetConfig: model %q: %v", m.Name(), err)
	}
	cfg, err := mergeConfig(m.Config(), update)
	if err != nil {
		return cErrorf(core.CodeInternal, "TRITONBACKEND_ModelSetConfig: model %q: %v", m.Name(), err)
	}
	if err := m.SetConfig(cfg); err != nil {
		return cError(err)
	}
	out := m.ConfigJSON()
	C.thost_model_set_config_json(model, (*C.char)(unsafe.Pointer(unsafe.SliceData(out))), C.size_t(len(out)))
	return nil
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

//export thostReportStatistics
func thostReportStatistics(instKey, reqKey C.uint64_t, success C.bool, execStart, computeStart, computeEnd, execEnd C.uint64_t) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONBACKEND_ModelInstanceReportStatistics", &ret)
	inst, ok := instances.get(uint64(instKey))
	if !ok {
		return cErrorf(core.CodeNotFound, "TRITONBACKEND_ModelInstanceReportStatistics: the instance is no longer known to the server")
	}
	st, ok := requests.get(uint64(reqKey))
	if !ok {
		return cErrorf(core.CodeNotFound, "TRITONBACKEND_ModelInstanceReportStatistics: the request is no longer known to the server")
	}
	inst.ReportStatistics(st.req, bool(success), uint64(execStart), uint64(computeStart), uint64(computeEnd), uint64(execEnd))
	return nil
}

//export thostReportBatchStatistics
func thostReportBatchStatistics(instKey, batchSize, execStart, computeStart, computeEnd, execEnd C.uint64_t) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONBACKEND_ModelInstanceReportBatchStatistics", &ret)
	inst, ok := instances.get(uint64(instKey))
	if !ok {
		return cErrorf(core.CodeNotFound, "TRITONBACKEND_ModelInstanceReportBatchStatistics: the instance is no longer known to the server")
	}
	inst.ReportBatchStatistics(uint64(batchSize), uint64(execStart), uint64(computeStart), uint64(computeEnd), uint64(execEnd))
	return nil
}

//export thostResponseStatistics
func thostResponseStatistics(reqKey C.uint64_t, stats *C.struct_thost_rstat, nstats C.uint32_t) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONBACKEND_ModelInstanceReportResponseStatistics", &ret)
	st, ok := requests.get(uint64(reqKey))
	if !ok {
		return cErrorf(core.CodeNotFound, "TRITONBACKEND_ModelInstanceReportResponseStatistics: the factory's request is no longer known to the server")
	}
	st.recordStats(stats, nstats)
	return nil
}

//export thostLog
func thostLog(level C.int, file *C.char, line C.int, msg *C.char) {
	logger.Load().Log(serverlog.Level(level), C.GoString(file), int(line), C.GoString(msg))
}

//export thostJSONValid
func thostJSONValid(data *C.char, n C.size_t) C.bool {
	return C.bool(json.Valid(unsafe.Slice((*byte)(unsafe.Pointer(data)), int(n))))
}
