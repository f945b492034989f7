package core

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/core/ratelimit"
)

// InstanceKind is where an instance runs, numbered as
// TRITONSERVER_InstanceGroupKind (which differs from the configuration's
// ModelInstanceGroup.Kind numbering).
type InstanceKind int

// Instance kinds.
const (
	KindAuto  InstanceKind = 0
	KindCPU   InstanceKind = 1
	KindGPU   InstanceKind = 2
	KindModel InstanceKind = 3
)

// String returns the kind as TRITONSERVER_InstanceGroupKindString does.
func (k InstanceKind) String() string {
	switch k {
	case KindAuto:
		return "AUTO"
	case KindCPU:
		return "CPU"
	case KindGPU:
		return "GPU"
	case KindModel:
		return "MODEL"
	}
	return "<invalid>"
}

func kindFromConfig(k configpb.ModelInstanceGroup_Kind) InstanceKind {
	switch k {
	case configpb.ModelInstanceGroup_KIND_CPU:
		return KindCPU
	case configpb.ModelInstanceGroup_KIND_GPU:
		return KindGPU
	case configpb.ModelInstanceGroup_KIND_MODEL:
		return KindModel
	}
	return KindAuto
}

// Instance is one execution context of a model version: an instance_group
// entry expanded by count and device. It runs one execution at a time.
type Instance struct {
	model      *Model
	name       string
	kind       InstanceKind
	deviceID   int32
	hostPolicy string
	policy     *HostPolicy // the server's policy of that name (nil: none; host_policy.go)
	group      *configpb.ModelInstanceGroup
	backend    BackendInstance
	deviceLock *sync.Mutex     // shared by the instances of a device when the backend is device-blocking
	executing  atomic.Int32    // executions running (0 or 1), for what an unload waits for
	rate       *ratelimit.Slot // the server's rate limiter's (nil: none); set while the version loads, before any execution
}

// Model returns the model version the instance belongs to.
func (i *Instance) Model() *Model { return i.model }

// Name returns the instance name, "<group name>_<index>".
func (i *Instance) Name() string { return i.name }

// Kind returns where the instance runs.
func (i *Instance) Kind() InstanceKind { return i.kind }

// DeviceID returns the GPU the instance runs on (0 for CPU instances).
func (i *Instance) DeviceID() int32 { return i.deviceID }

// HostPolicyName returns the host policy's name: the group's host_policy, or
// "cpu", "gpu_<id>" or "model" by kind.
func (i *Instance) HostPolicyName() string { return i.hostPolicy }

// Passive reports whether the instance is loaded but receives no requests.
func (i *Instance) Passive() bool { return i.group.GetPassive() }

// Profiles returns the optimization profiles the group names.
func (i *Instance) Profiles() []string { return i.group.GetProfile() }

// ReportStatistics records the outcome of one request executed by this
// instance. Timestamps are Nanotime values; failures ignore them.
// A traced request gets its compute activities from these timestamps, as
// in Triton.
func (i *Instance) ReportStatistics(r *Request, success bool, execStart, computeStart, computeEnd, execEnd uint64) {
	if t := r.trace; t != nil && success {
		t.Report(TraceComputeStart, execStart)
		t.Report(TraceComputeInputEnd, computeStart)
		t.Report(TraceComputeOutputStart, computeEnd)
		t.Report(TraceComputeEnd, execEnd)
	}
	if success {
		i.model.stats.success(r.batchSize, r.requestStart, r.queueStart, execStart, computeStart, computeEnd, execEnd)
		r.stepOf.add(execStart, computeStart, computeEnd, execEnd)
	} else {
		i.model.stats.failure(r.requestStart, Nanotime(), FailureBackend)
	}
	if o := i.model.srv.opts.StatisticsObserver; o != nil {
		o.RequestStatistics(i, r, success, execStart, computeStart, computeEnd, execEnd)
	}
}

// ReportBatchStatistics records one execution of a batch of batchSize.
func (i *Instance) ReportBatchStatistics(batchSize, execStart, computeStart, computeEnd, execEnd uint64) {
	i.model.stats.batch(batchSize, execStart, computeStart, computeEnd, execEnd)
	if o := i.model.srv.opts.StatisticsObserver; o != nil {
		o.BatchStatistics(i, batchSize, execStart, computeStart, computeEnd, execEnd)
	}
}

// ReportResponseStatistics records one response (or empty iteration) of a
// decoupled request, under the request's next response index (indices from
// ResponseStatsCap on share one entry; see ModelStatistics.Responses).
func (i *Instance) ReportResponseStatistics(p *Responder, start, computeOutputStart, end uint64, outcome ResponseOutcome) {
	i.model.stats.response(p, start, computeOutputStart, end, outcome)
	if o := i.model.srv.opts.StatisticsObserver; o != nil {
		o.ResponseStatistics(i, p, start, computeOutputStart, end, outcome)
	}
}

// StatisticsObserver receives every statistics report a backend makes,
// after the server recorded it (Options.StatisticsObserver): the worker
// process of an isolated backend hands them on to the server it serves.
// Its methods run on the reporting backend's thread and must return at
// once.
type StatisticsObserver interface {
	RequestStatistics(inst *Instance, r *Request, success bool, execStart, computeStart, computeEnd, execEnd uint64)
	BatchStatistics(inst *Instance, batchSize, execStart, computeStart, computeEnd, execEnd uint64)
	ResponseStatistics(inst *Instance, p *Responder, start, computeOutputStart, end uint64, outcome ResponseOutcome)
}

// execute runs one batch on the backend; an error return fails every request
// the backend did not release.
func (i *Instance) execute(batch []*Request) {
	if i.rate != nil {
		i.rate.Acquire() // released as Execute returns (rate_limit.go)
	}
	if i.deviceLock != nil {
		i.deviceLock.Lock()
		defer i.deviceLock.Unlock()
	}
	for _, r := range batch {
		r.leaveQueue()
	}
	i.executing.Add(1)
	err := i.executeBackend(batch) // under its host policy (host_policy.go)
	i.executing.Add(-1)
	if i.rate != nil {
		i.rate.Release()
	}
	if err == nil {
		return
	}
	i.model.log.Errorf("model %q version %d instance %q: execute failed: %v", i.model.name, i.model.version, i.name, err)
	now := Nanotime()
	for _, r := range batch {
		if !r.Released() {
			i.model.stats.failure(r.requestStart, now, FailureBackend)
			r.failAndRelease(err)
		}
	}
}

// instancesFromConfig expands the instance groups of cfg into instances,
// refusing more than maxInstances before creating any.
func instancesFromConfig(m *Model, cfg *configpb.ModelConfig) ([]*Instance, error) {
	total := int64(0)
	for _, g := range cfg.GetInstanceGroup() {
		n := int64(max(g.GetCount(), 1))
		if kindFromConfig(g.GetKind()) == KindGPU {
			n *= int64(len(g.GetGpus())) // both below 2^31: no overflow
		}
		if total += n; total > maxInstances {
			return nil, Errorf(CodeInvalidArg, "model %q: instance_group asks for more than %d instances (counts times GPUs), the most one model version may have", m.name, maxInstances)
		}
	}
	out := make([]*Instance, 0, total)
	for _, g := range cfg.GetInstanceGroup() {
		kind := kindFromConfig(g.GetKind())
		for c := int32(0); c < max(g.GetCount(), 1); c++ {
			name := fmt.Sprintf("%s_%d", g.GetName(), c)
			switch kind {
			case KindGPU:
				for _, dev := range g.GetGpus() {
					out = append(out, &Instance{model: m, name: name, kind: kind, deviceID: dev,
						hostPolicy: policyName(g, fmt.Sprintf("gpu_%d", dev)), group: g})
				}
			case KindModel:
				out = append(out, &Instance{model: m, name: name, kind: kind, hostPolicy: policyName(g, "model"), group: g})
			default:
				out = append(out, &Instance{model: m, name: name, kind: KindCPU, hostPolicy: policyName(g, "cpu"), group: g})
			}
		}
	}
	return out, nil
}

func policyName(g *configpb.ModelInstanceGroup, def string) string {
	if p := g.GetHostPolicy(); p != "" {
		return p
	}
	return def
}
