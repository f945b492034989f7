package isolation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/gpu"
	"github.com/tritonhost/tritonhost/internal/wire"
	"github.com/tritonhost/tritonhost/loader"
)

// RunWorker serves one model version for the server at the other end of
// conn: it loads the version as the server's load message asks, with the
// backend in this process (abi and loader, as the server would in its
// own), executes the batches the server sends on the version's instances,
// and sends back every response, release, state update and statistics
// report. It returns when the server says stop (after unloading the
// version) or goes away (at once: nothing of the server's is left to
// serve). Its log goes to logw, for the server to relay.
func RunWorker(conn *wire.Conn, logw io.Writer) error {
	buf := make([]byte, wire.MaxDatagram)
	msg, fds, err := conn.Recv(buf)
	if err != nil {
		return fmt.Errorf("worker: read the load message: %w", err)
	}
	wire.CloseFiles(fds)
	var lm loadMsg
	d := wire.NewDecoder(msg)
	if kind, _ := readHeader(d); kind != msgLoad {
		return fmt.Errorf("worker: the first message is %d, not a load", kind)
	}
	lm.decode(d)
	if err := d.Done(); err != nil {
		return fmt.Errorf("worker: load message: %w", err)
	}
	// Deferred messages still queued go before the process ends.
	defer func() { _ = conn.Flush() }()
	w := &worker{conn: conn, reqs: map[uint64]*workerReq{}, pooled: map[uint64]*wire.Shared{},
		outputs: newRegionPool("outputs", maxPooledRegions, maxPooledBytes), stop: make(chan struct{})}
	w.log = serverlog.New(logw)
	w.log.SetVerbose(lm.LogVerbose)
	loaded := w.load(&lm)
	e := wire.NewEncoder(nil)
	loaded.encode(e)
	if err := conn.Send(e.Bytes()); err != nil {
		return fmt.Errorf("worker: answer the load: %w", err)
	}
	if loaded.Err != nil {
		w.close()
		return nil
	}
	return w.serve(buf)
}

// worker is the state of a worker process once its version loaded.
type worker struct {
	conn *wire.Conn
	log  *serverlog.Logger
	host *abi.Host
	up   *upstreamClient // the backend's calls into the server
	// The GPUs, where the model has GPU instances (devicesFor); nil
	// otherwise.
	devices *gpu.Devices

	familiesOnce sync.Once
	families     *prometheus.Registry // the backend's metric families (metrics.go)
	srv          *core.Server
	m            *core.Model
	// The configuration's input names, by name: an execute message's
	// inputs share them (decodeExecute); set at load, before the first
	// batch.
	inputNames map[string]string

	instances map[*core.Instance]int
	runs      []chan []*core.Request // each instance's batches, to its executor
	states    *core.States
	callLimit time.Duration

	// The server's pooled input regions (pool.go), mapped until it says
	// forget them; only the reader goroutine (serve) uses it. At most
	// maxPooledRegions.
	pooled map[uint64]*wire.Shared
	// The regions large outputs travel to the server in, reused: the
	// server copies them out and returns them (msgReturned).
	outputs *regionPool

	mu   sync.Mutex
	reqs map[uint64]*workerReq // by the server's key
	wg   sync.WaitGroup        // the executors
	stop chan struct{}
}

// workerReq is one request the worker holds for the server.
type workerReq struct {
	r      *core.Request
	region *sharedRef // the execute message's region its inputs are in, if any
}

// sharedRef counts the requests that still read a region: a region of
// its own (id 0) is closed once none does, a pooled one returned to the
// server (msgReturned).
type sharedRef struct {
	mu     sync.Mutex
	n      int
	region *wire.Shared
	id     uint64
	w      *worker
}

func (s *sharedRef) release() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.n--
	last := s.n == 0
	s.mu.Unlock()
	if last {
		s.done()
	}
}

// done ends the region's use by the batch.
func (s *sharedRef) done() {
	if s.id == 0 {
		_ = s.region.Close()
		return
	}
	e := wire.NewEncoder(nil)
	encodeKey(e, msgReturned, s.id, 0)
	s.w.sendDeferred(e)
}

// load assembles what serves the version in this process and loads it.
func (w *worker) load(lm *loadMsg) *loadedMsg {
	w.callLimit = time.Duration(lm.CallTimeoutMs) * time.Millisecond
	w.up = newUpstreamClient(w, w.callLimit)
	devices, err := devicesFor(lm, w.log)
	if err != nil {
		return &loadedMsg{Err: err}
	}
	var hostDevices core.Devices // nil, not a nil *gpu.Devices, without GPUs
	if devices != nil {
		w.devices, hostDevices = devices, devices
	}
	w.host = abi.NewHost(abi.HostOptions{Logger: w.log, Upstream: w.up, Devices: hostDevices,
		InProcessMaxTensorBytes: lm.InProcessMaxTensorBytes, InProcessMaxPending: lm.InProcessMaxPending,
		InProcessStallTimeout: time.Duration(lm.InProcessStallTimeoutMs) * time.Millisecond})
	provider := loader.New(loader.Options{
		Opener:               w.host,
		BackendDirectory:     lm.BackendDir,
		BackendConfig:        lm.BackendConfig,
		DisableAutoComplete:  lm.DisableAutoComplete,
		Logger:               w.log,
		MinComputeCapability: lm.MinComputeCapability,
	})
	srv, err := core.NewServer(core.Options{
		Backends:                  provider,
		Schedulers:                func(*core.Server, *core.Model) (core.Scheduler, error) { return idleScheduler{}, nil },
		Logger:                    w.log,
		ExplicitModelControl:      true,
		GPUs:                      lm.GPUs,
		Devices:                   hostDevices,
		MaxTensorBytes:            lm.MaxTensorBytes,
		BackendCallTimeout:        w.callLimit,
		DisableAutoCompleteConfig: lm.DisableAutoComplete,
		StatisticsObserver:        w,
		HostPolicies:              lm.HostPolicies,
	})
	if err != nil {
		return &loadedMsg{Err: fmt.Errorf("worker: create its server: %w", err)}
	}
	w.srv = srv
	w.host.AttachServer(srv)
	var mapping map[string]string
	if base := filepath.Base(lm.Dir); base != lm.Name {
		mapping = map[string]string{lm.Name: base}
	}
	if err := srv.RegisterRepository(filepath.Dir(lm.Dir), mapping); err != nil {
		return &loadedMsg{Err: err}
	}
	if err := srv.LoadModelWith(lm.Name, core.LoadOptions{Config: lm.Config}); err != nil {
		return &loadedMsg{Err: err}
	}
	m, err := srv.Model(lm.Name, lm.Version)
	if err != nil {
		return &loadedMsg{Err: err}
	}
	w.m = m
	w.inputNames = map[string]string{}
	for _, in := range m.Config().GetInput() {
		w.inputNames[in.GetName()] = in.GetName()
	}
	w.instances = map[*core.Instance]int{}
	out := &loadedMsg{Config: m.ConfigJSON()}
	for i, inst := range m.Instances() {
		// The server holds back an instance's batch while the worker
		// holds the depth the load message names (process.execute); one
		// more may come as an execution's end leaves before its executor
		// takes the next batch.
		runs := make(chan []*core.Request, max(lm.PipelineDepth, 2))
		w.runs = append(w.runs, runs)
		w.wg.Add(1)
		go w.executor(i, inst, runs)
		w.instances[inst] = i
		out.Instances = append(out.Instances, inst.Name())
	}
	if st, err := core.NewStates(m, nil); err == nil {
		w.states = st
	}
	if oneProcessor(m) {
		runtime.GOMAXPROCS(1)
	}
	return out
}

// oneProcessor reports whether the worker of m runs its Go code on one
// processor: for a model that is neither decoupled nor of several
// instances, whose backend calls back into Go on the one thread that
// executes, the runtime's second processor only woke threads that found
// no work (identity at concurrency 16, two interleaved runs: 62.5 to 54.6
// µs of CPU per request, server and worker, and 0.59 to 0.64 of in
// process). A decoupled backend's own threads, or another instance's,
// would wait for the one processor at each call back into Go (a square
// stream fell from 0.69-0.82 to 0.46-0.55), so theirs keep the default.
func oneProcessor(m *core.Model) bool {
	return !m.Decoupled() && len(m.Instances()) == 1
}

// serve reads the server's messages until it says stop or goes away.
func (w *worker) serve(buf []byte) error {
	for {
		msg, fds, err := w.conn.Recv(buf)
		if err != nil {
			if errors.Is(err, io.EOF) {
				w.log.Infof("the server went away: exiting")
				return nil
			}
			return fmt.Errorf("worker: read: %w", err)
		}
		d := wire.NewDecoder(msg)
		kind, withRegion := readHeader(d)
		switch kind {
		case msgExecute:
			err = w.execute(d, withRegion, fds)
		case msgCancel:
			key := d.Uint()
			d.Uint()
			wire.CloseFiles(fds)
			if err = d.Done(); err == nil {
				w.cancel(key)
			}
		case msgReturned:
			id := d.Uint()
			d.Uint()
			wire.CloseFiles(fds)
			if err = d.Done(); err == nil {
				err = w.outputs.returned(id)
			}
		case msgForget:
			id := d.Uint()
			d.Uint()
			wire.CloseFiles(fds)
			if err = d.Done(); err == nil {
				err = w.forget(id)
			}
		case msgStop:
			wire.CloseFiles(fds)
			w.close()
			return nil
		case msgReply, msgUpResponse, msgUpDone:
			err = w.answer(kind, d, withRegion, fds)
		case msgCollect:
			id := d.Uint()
			d.Uint()
			wire.CloseFiles(fds)
			if err = d.Done(); err == nil {
				go w.sendFamilies(id)
			}
		default:
			wire.CloseFiles(fds)
			err = fmt.Errorf("unknown message %d", kind)
		}
		if err != nil {
			return fmt.Errorf("worker: message %d from the server: %w", kind, err)
		}
	}
}

// answer hands one of the server's answers to the backend's calls and
// requests to the upstream client, with its region mapped while it reads.
func (w *worker) answer(kind byte, d *wire.Decoder, withRegion bool, fds []int) error {
	src := &source{}
	switch {
	case withRegion && len(fds) == 1:
		region, err := wire.Map(fds[0], maxRegion)
		if err != nil {
			return err
		}
		defer region.Close()
		src.region = region.Bytes()
	case withRegion || len(fds) > 0:
		wire.CloseFiles(fds)
		return fmt.Errorf("%d descriptors with a region flag of %v", len(fds), withRegion)
	}
	return w.up.deliver(kind, d, src)
}

// executeRegion maps the region of an execute message: its own (id 0,
// its descriptor in fds), or the server's pooled region id, mapped when
// fds brings it and kept until the server says forget it.
func (w *worker) executeRegion(id uint64, fds []int) (*sharedRef, error) {
	if id == 0 || len(fds) > 0 {
		if len(fds) != 1 {
			wire.CloseFiles(fds)
			return nil, fmt.Errorf("an execute message with region %d brought %d descriptors", id, len(fds))
		}
		if id != 0 && (w.pooled[id] != nil || len(w.pooled) >= maxPooledRegions) {
			wire.CloseFiles(fds)
			return nil, fmt.Errorf("pooled region %d past the %d mapped", id, len(w.pooled))
		}
		region, err := wire.Map(fds[0], maxRegion)
		if err != nil {
			return nil, err
		}
		if id != 0 {
			w.pooled[id] = region
		}
		return &sharedRef{region: region, id: id, w: w}, nil
	}
	region := w.pooled[id]
	if region == nil {
		return nil, fmt.Errorf("an execute message names pooled region %d, which is not mapped", id)
	}
	return &sharedRef{region: region, id: id, w: w}, nil
}

// forget unmaps pooled region id, which no request reads any more (the
// server forgets only a region returned to it).
func (w *worker) forget(id uint64) error {
	region := w.pooled[id]
	if region == nil {
		return fmt.Errorf("forget pooled region %d, which is not mapped", id)
	}
	delete(w.pooled, id)
	return region.Close()
}

// execute runs one batch: it builds the requests (their inputs in the
// message or in its region) and executes them on their instance, on a
// goroutine of their own, then reports that the execution returned.
func (w *worker) execute(d *wire.Decoder, withRegion bool, fds []int) error {
	src := &source{}
	var ref *sharedRef
	if withRegion {
		var err error
		if ref, err = w.executeRegion(d.Uint(), fds); err != nil {
			return err
		}
		src.region = ref.region.Bytes()
	} else {
		wire.CloseFiles(fds)
	}
	inst, reqs := decodeExecute(d, src, w.inputNames)
	if err := d.Done(); err != nil {
		if ref != nil && ref.id == 0 {
			_ = ref.region.Close()
		}
		return err
	}
	instances := w.m.Instances()
	if inst >= len(instances) {
		return fmt.Errorf("instance %d of %d", inst, len(instances))
	}
	if len(w.runs[inst]) == cap(w.runs[inst]) { // only this reader sends on it
		return fmt.Errorf("instance %d got a batch while its last one waits to run", inst)
	}
	if !withRegion {
		// The inputs alias the receive buffer, which the next message
		// overwrites: they are copied.
		for i := range reqs {
			reqs[i].ownInputs()
		}
	}
	if ref != nil {
		ref.n = len(reqs)
		if ref.n == 0 {
			ref.done()
		}
	}
	batch := make([]*core.Request, len(reqs))
	w.mu.Lock()
	for i := range reqs {
		batch[i] = w.forward(&reqs[i], ref)
	}
	w.mu.Unlock()
	w.runs[inst] <- batch
	return nil
}

// executor runs instance inst's batches, one after the other as the
// server sends them, and reports each execution's return. It returns once
// runs is closed (close).
func (w *worker) executor(inst int, in *core.Instance, runs <-chan []*core.Request) {
	defer w.wg.Done()
	for batch := range runs {
		in.Execute(batch)
		e := getEncoder()
		encodeExecuted(e, inst, nil)
		// Soon: the ends of the batches waiting behind it join it.
		w.sendWith(w.conn.SendSoon, e, nil)
	}
}

// forward builds the request of q and keeps it under its key; w.mu held.
func (w *worker) forward(q *executeReq, ref *sharedRef) *core.Request {
	key := q.key
	q.sub.SchedulerKey = key
	q.sub.Finished = func() { w.done(key, 0) }
	q.sub.Model = w.m.Name()
	r := w.m.NewForwarded(core.ForwardedRequest{
		Submission: &q.sub,
		BatchSize:  q.batchSize,
		Respond:    func(resp *core.Response, final bool) { w.respond(key, resp, final) },
		Released: func(flags uint32) {
			e := getEncoder()
			encodeKey(e, msgReleased, key, uint64(flags))
			if flags&core.ReleaseReschedule != 0 {
				w.send(e, nil) // the server runs it again: now
			} else {
				w.sendDeferred(e)
			}
			if flags&core.ReleaseReschedule != 0 {
				w.done(key, flags) // over here: the server runs it again
			}
		},
		UpdateState: func(name string, dtype core.DataType, shape []int64, data []byte) {
			e := getEncoder()
			p, err := encodeState(e, key, name, dtype, shape, data)
			if err != nil {
				w.log.Errorf("model %q: state %q of request %q: %v", w.m.Name(), name, q.sub.ID, err)
				return
			}
			w.send(e, p)
		},
		States: w.states,
	})
	q.held = workerReq{r: r, region: ref}
	w.reqs[key] = &q.held
	return r
}

// done forgets request key once it finished (or was rescheduled), telling
// the server it finished.
func (w *worker) done(key uint64, flags uint32) {
	w.mu.Lock()
	q := w.reqs[key]
	delete(w.reqs, key)
	w.mu.Unlock()
	if q == nil {
		return
	}
	q.region.release()
	if flags&core.ReleaseReschedule == 0 {
		e := getEncoder()
		encodeKey(e, msgFinished, key, 0)
		w.sendDeferred(e)
	}
}

// respond sends one response of request key, then frees it. A final
// response sent from within an execution, on its thread, is deferred: the
// execution's end follows it (an urgent message), and the server reads
// both at one wake-up. A response that is not the last goes soon
// (wire.Conn.SendSoon): the Conn writes it, and what the backend sends
// meanwhile joins it in one datagram, so that a stream costs both sides
// a system call and a wake-up per run of responses, not per response.
// Other final responses go at once.
func (w *worker) respond(key uint64, resp *core.Response, final bool) {
	send := w.conn.Send
	switch {
	case final && w.onExecutingThread():
		send = w.conn.SendDeferred // it goes with the execution's end
	case !final:
		send = w.conn.SendSoon // the stream's next responses may join it
	}
	e := getEncoder()
	p, forget, err := encodeResponseAs(e, msgResponse, key, resp, final, w.outputs)
	for _, id := range forget {
		f := getEncoder()
		encodeKey(f, msgForget, id, 0)
		w.send(f, nil)
	}
	if err != nil {
		resp.Free()
		p, _ = encodeResponse(e, key, &core.Response{Err: core.Errorf(core.CodeInternal, "worker: %v", err)}, final)
	} else {
		resp.Free() // copied into the message or its region
	}
	if p.pooled != nil {
		// The server may return it as soon as the message is out.
		w.outputs.lent(p.pooled)
		defer w.outputs.sent(p.pooled) // a failed send ends the process
	}
	w.sendWith(send, e, p)
}

// onExecutingThread reports whether the calling thread runs an execution:
// the backend calls back on the thread that called its Execute.
func (w *worker) onExecutingThread() bool { return abi.OnExecutingThread() }

// cancel cancels request key, as its client did on the server.
func (w *worker) cancel(key uint64) {
	w.mu.Lock()
	q := w.reqs[key]
	w.mu.Unlock()
	if q != nil {
		q.r.Responder().Cancel()
	}
}

// send sends a message (and p's region), closing this side's region after.
// A failed send means the server is gone: the process ends.
func (w *worker) send(e *wire.Encoder, p *payload) { w.sendWith(w.conn.Send, e, p) }

// sendDeferred sends a message the server need not act on at once (a
// release, a request's end, statistics): it travels with the next message
// sent, or on its own within wire.DeferLimit. Its order among the others
// is kept. A failed send means the server is gone: the process ends.
func (w *worker) sendDeferred(e *wire.Encoder) { w.sendDeferredWith(e, nil) }

// sendDeferredWith is sendDeferred for a message with p's region (closed
// on this side once queued: the queue holds its own descriptor).
func (w *worker) sendDeferredWith(e *wire.Encoder, p *payload) {
	w.sendWith(w.conn.SendDeferred, e, p)
}

// sendWith sends e's message and p's region with send (one of the Conn's
// Send methods), closing this side's region after, and gives e to
// encoders (the Conn copied its message); a failed send ends the process.
func (w *worker) sendWith(send func(msg []byte, fds ...int) error, e *wire.Encoder, p *payload) {
	defer putEncoder(e)
	var fds []int
	if p != nil {
		var err error
		if fds, err = p.files(); err != nil {
			w.log.Errorf("worker: %v", err)
		}
		defer p.close()
	}
	if err := send(e.Bytes(), fds...); err != nil {
		w.log.Errorf("worker: the server went away (%v): exiting", err)
		os.Exit(0)
	}
}

// close unloads the version and releases what served it.
func (w *worker) close() {
	for _, runs := range w.runs { // on the reader, their one sender
		close(runs)
	}
	if w.srv != nil {
		timeout := w.callLimit
		if timeout <= 0 {
			timeout = time.Minute
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		if err := w.srv.Stop(ctx); err != nil {
			w.log.Errorf("worker: unload: %v", err)
		}
		cancel()
	}
	if w.host != nil {
		w.host.Close()
	}
	if w.devices != nil {
		if err := w.devices.Close(); err != nil {
			w.log.Warnf("worker: releasing GPU memory: %v", err)
		}
	}
}

// devicesFor opens the GPUs lm names with the server's CUDA driver and
// pool sizes, where the model's configuration has GPU instances (or
// instances of kind AUTO, or none listed, which GPUs take where there
// are any), so that its backend's device memory, its outputs' copies to
// host memory and its CUDA calls are this process's, as they are the
// server's in process. A model without GPU instances opens none: a
// context costs device memory. nil without GPUs.
func devicesFor(lm *loadMsg, log *serverlog.Logger) (*gpu.Devices, error) {
	if len(lm.GPUs) == 0 || lm.CUDADriver == "" {
		return nil, nil
	}
	var cfg struct {
		InstanceGroup []struct {
			Kind string `json:"kind"`
		} `json:"instance_group"`
	}
	if err := json.Unmarshal(lm.Config, &cfg); err != nil {
		return nil, fmt.Errorf("worker: the configuration of model %q: %w", lm.Name, err)
	}
	gpus := len(cfg.InstanceGroup) == 0
	for _, g := range cfg.InstanceGroup {
		switch g.Kind {
		case "KIND_GPU", "KIND_AUTO", "":
			gpus = true
		}
	}
	if !gpus {
		return nil, nil
	}
	drv, err := gpu.OpenDriver(lm.CUDADriver)
	if err != nil {
		return nil, fmt.Errorf("worker of model %q: GPUs %v: %w", lm.Name, lm.GPUs, err)
	}
	devs, err := gpu.NewDevices(drv, lm.GPUs, gpu.MemoryOptions{CUDAPoolBytes: lm.CUDAPoolBytes, PinnedPoolBytes: lm.PinnedPoolBytes}, log)
	if err != nil {
		return nil, fmt.Errorf("worker of model %q: CUDA driver %s: %w", lm.Name, drv.Path(), err)
	}
	return devs, nil
}

// RequestStatistics hands a request's statistics to the server.
func (w *worker) RequestStatistics(inst *core.Instance, r *core.Request, success bool, execStart, computeStart, computeEnd, execEnd uint64) {
	key, ok := r.SchedulerKey().(uint64)
	if !ok {
		return
	}
	w.sendTimes(msgStats, &timesMsg{Key: key, Instance: w.instances[inst], Success: success,
		Times: [4]uint64{execStart, computeStart, computeEnd, execEnd}})
}

// BatchStatistics hands a batch's statistics to the server.
func (w *worker) BatchStatistics(inst *core.Instance, batchSize, execStart, computeStart, computeEnd, execEnd uint64) {
	w.sendTimes(msgBatchStats, &timesMsg{Instance: w.instances[inst], Size: batchSize,
		Times: [4]uint64{execStart, computeStart, computeEnd, execEnd}})
}

// ResponseStatistics hands a response's statistics to the server.
func (w *worker) ResponseStatistics(inst *core.Instance, p *core.Responder, start, computeOutputStart, end uint64, outcome core.ResponseOutcome) {
	// A request already finished here has its key still: the server
	// drops statistics of a request it forgot.
	key, ok := p.SchedulerKey().(uint64)
	if !ok {
		return
	}
	w.sendTimes(msgResponseStats, &timesMsg{Key: key, Instance: w.instances[inst], Outcome: outcome,
		Times: [4]uint64{start, computeOutputStart, end}})
}

func (w *worker) sendTimes(kind byte, m *timesMsg) {
	e := getEncoder()
	m.encode(e, kind)
	w.sendDeferred(e)
}

// idleScheduler is the scheduler of a worker's version: the server it
// serves schedules, and the worker executes forwarded batches directly.
type idleScheduler struct{}

func (idleScheduler) Enqueue(r *core.Request) error {
	return core.Errorf(core.CodeUnsupported, "a worker executes only what its server forwards")
}
func (idleScheduler) Requeue(r *core.Request) error {
	return core.Errorf(core.CodeUnsupported, "a worker executes only what its server forwards")
}
func (idleScheduler) Start()                   {}
func (idleScheduler) Stop(ctx context.Context) {}
