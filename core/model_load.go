package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Loading and unloading a model version: the calls into its backend, in
// their order, run on a lifecycle (see lifecycle), so that none of them
// holds up the server beyond Options.BackendCallTimeout.

// ident names the version and its backend in messages.
func (m *Model) ident() string {
	cfg := m.Config()
	backend := cfg.GetBackend()
	if backend == "" {
		backend = cfg.GetPlatform()
	}
	return fmt.Sprintf("model %q version %d (backend %q)", m.name, m.version, backend)
}

// load initializes the model in its backend (LoadModel), creates its
// instances (NewInstance), registers them with the rate limiter
// (rate_limit.go), runs its warmup samples on them (warmup.go) and starts
// scheduling. A call that does not return within the backend call
// timeout fails the load, with an error naming it; the call is left
// running, and whatever it returns late is finalized then. On any
// failure, what was created is finalized again, instances first.
func (m *Model) load(provider BackendProvider) error {
	m.readiness.Store(int32(ModelLoading))
	lc := m.startLifecycle("load", func(lc *lifecycle) error { return m.loadSteps(lc, provider) }, nil)
	err := lc.wait(context.Background(), m.callTimeout)
	if err != nil {
		m.readiness.Store(int32(ModelUnavailable))
	}
	return err
}

// loadSteps are the steps of load, on the lifecycle's goroutine. Once the
// waiter has given up, they stop calling the backend for anything but
// undoing what they created.
func (m *Model) loadSteps(lc *lifecycle, provider BackendProvider) error {
	var bm BackendModel
	err := lc.call("LoadModel", func() (err error) {
		bm, err = provider.LoadModel(m)
		return err
	})
	if err != nil {
		m.readiness.Store(int32(ModelUnavailable))
		return err
	}
	m.backend = bm
	m.freezeConfig()
	if lc.givenUp() {
		return m.undoLoad(lc, errGivenUp)
	}
	if m.instances, err = instancesFromConfig(m, m.cfg); err != nil {
		return m.undoLoad(lc, err)
	}
	m.attachHostPolicies() // host_policy.go
	if err := m.createInstances(lc, bm); err != nil {
		return m.undoLoad(lc, err)
	}
	if lc.givenUp() {
		return m.undoLoad(lc, errGivenUp)
	}
	if err := m.registerRateLimits(); err != nil {
		return m.undoLoad(lc, err)
	}
	if err := m.warmUp(lc); err != nil { // warmup.go
		return m.undoLoad(lc, err)
	}
	sched, err := m.srv.opts.Schedulers(m.srv, m)
	if err != nil {
		return m.undoLoad(lc, err)
	}
	m.sched = sched
	if !lc.commit(func() {
		m.sched.Start()
		m.readiness.Store(int32(ModelReady))
	}) {
		return m.undoLoad(lc, errGivenUp) // the scheduler never started: nothing ran
	}
	return nil
}

// createInstances creates the backend's instances, in order, or all at
// once when the backend loads them in parallel. Serial creation stops at
// the first failure, or when the waiter gave up.
func (m *Model) createInstances(lc *lifecycle, bm BackendModel) error {
	errs := make([]error, len(m.instances))
	create := func(i int) {
		inst := m.instances[i]
		var bi BackendInstance
		err := lc.call(fmt.Sprintf("NewInstance of instance %q", inst.name), func() (err error) {
			return inst.underPolicy(func() (err error) { // host_policy.go
				bi, err = bm.NewInstance(inst)
				return err
			})
		})
		if err != nil {
			errs[i] = fmt.Errorf("instance %q: %w", inst.name, err)
			return
		}
		inst.backend = bi
	}
	if bm.ParallelInstanceLoading() {
		var wg sync.WaitGroup
		for i := range m.instances {
			wg.Go(func() { create(i) })
		}
		wg.Wait()
	} else {
		for i := range m.instances {
			if create(i); errs[i] != nil || lc.givenUp() {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// undoLoad finalizes what a failed load created, the instances first, and
// returns err.
func (m *Model) undoLoad(lc *lifecycle, err error) error {
	m.unregisterRateLimits()
	for _, inst := range m.instances {
		if inst.backend == nil {
			continue
		}
		if ferr := lc.call(fmt.Sprintf("Finalize of instance %q", inst.name), inst.backend.Finalize); ferr != nil {
			m.log.Errorf("%s: instance %q: finalize after failed load: %v", m.ident(), inst.name, ferr)
		}
		inst.backend = nil
	}
	if ferr := lc.call("Finalize of the model", m.backend.Finalize); ferr != nil {
		m.log.Errorf("%s: finalize after failed load: %v", m.ident(), ferr)
	}
	m.readiness.Store(int32(ModelUnavailable))
	if errors.Is(err, errGivenUp) {
		m.log.Infof("%s: finalized what the load given up on had created", m.ident())
	}
	return err
}

// unload stops scheduling (queued requests are still executed unless ctx
// ends first), then finalizes the instances and the model. It returns
// when that is done, or gives up, with an error saying on what, when ctx
// ends or a Finalize call does not return within the backend call
// timeout; the unload then goes on in its order without the caller, as the
// executions and calls it waits for return.
func (m *Model) unload(ctx context.Context) error {
	if !m.readiness.CompareAndSwap(int32(ModelReady), int32(ModelUnloading)) {
		return nil
	}
	lc := m.startLifecycle("unload", func(lc *lifecycle) error { return m.unloadSteps(ctx, lc) }, m.describeExecutions)
	return lc.wait(ctx, m.callTimeout)
}

func (m *Model) unloadSteps(ctx context.Context, lc *lifecycle) error {
	lc.await(m.describeExecutions, func() { m.sched.Stop(ctx) })
	m.unregisterRateLimits() // no execution runs any more
	var errs []error
	for _, inst := range m.instances {
		if err := lc.call(fmt.Sprintf("Finalize of instance %q", inst.name), inst.backend.Finalize); err != nil {
			errs = append(errs, fmt.Errorf("finalize instance %q: %w", inst.name, err))
		}
	}
	if m.backend != nil { // an ensemble has none
		if err := lc.call("Finalize of the model", m.backend.Finalize); err != nil {
			errs = append(errs, fmt.Errorf("finalize model: %w", err))
		}
	}
	m.readiness.Store(int32(ModelUnavailable))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("unload model %q version %d: %w", m.name, m.version, err)
	}
	return nil
}

// describeExecutions says what stopping the scheduler waits for.
func (m *Model) describeExecutions() string {
	var busy []string
	for _, inst := range m.instances {
		if inst.executing.Load() > 0 {
			busy = append(busy, inst.name)
		}
	}
	if len(busy) == 0 {
		return "waiting for the queued requests to run"
	}
	return fmt.Sprintf("waiting for the running execution(s) of instance(s) %s", strings.Join(quoteAll(busy), ", "))
}
