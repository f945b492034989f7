package isolation

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/sysmon"
	"github.com/tritonhost/tritonhost/internal/wire"
)

// Environment of a worker process: the server's pid, which the worker
// checks at start (a worker whose server is already gone exits), and the
// worker's address-space bound in bytes.
const (
	envParent      = "TRITONHOST_WORKER_PARENT"
	envMemoryLimit = "TRITONHOST_WORKER_MEMORY_LIMIT"
)

// process is one worker process serving one model version, as the server
// sees it: the socket to it, the requests it holds, and the executions
// waiting for it to return. Any goroutine may use it; its reader goroutine
// handles what the worker sends.
type process struct {
	model *isolatedModel
	cmd   *exec.Cmd
	conn  *wire.Conn
	pid   int

	mu      sync.Mutex
	reqs    map[uint64]*core.Request // what the worker holds, by key
	hooks   map[uint64]core.CancelHook
	nextKey uint64
	// Each instance's executions the worker holds, oldest first: at most
	// one, or the model's depth where it pipelines (isolatedModel.depth).
	waiting map[int][]chan error
	room    sync.Cond // on mu: an execution returned, or the worker died
	// The backend's own requests and calls to the server (upstream.go).
	served        map[uint64]*servedReq
	upstreamCount int
	// The regions large inputs travel to the worker in, reused (pool.go).
	inputs *regionPool
	// The worker's pooled regions of large outputs, by its id: only the
	// reader goroutine uses the map (outputRegion); a region's loans are
	// its own (outRegion).
	outRegions map[uint64]*outRegion
	// The strings its responses repeat (their parameters'): only the
	// reader goroutine uses it.
	strs internTable
	// Metric families asked of the worker (metrics.go), by id.
	collecting  map[uint64]chan []byte
	nextCollect uint64
	dead        bool
	deathErr    error

	exited chan struct{} // closed once the process was reaped
	state  *os.ProcessState

	logDone chan struct{} // closed once the worker's stderr reached its end
	fault   string        // the Go runtime's first crash line in that log, if any
}

// startProcess starts a worker for mod's version and has it load the
// version; it returns once the worker answered, or failed to.
func startProcess(mod *isolatedModel) (*process, *loadedMsg, error) {
	o := &mod.p.opts
	local, remote, err := wire.Pair()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(o.WorkerCommand[0], o.WorkerCommand[1:]...)
	cmd.ExtraFiles = []*os.File{remote.Read, remote.Write} // fds 3 and 4 (cmd/tritonhost's worker)
	// The worker waits for the server between batches: its runtime's
	// monitor stays awake (package sysmon), as the server's does.
	env, quiet := sysmon.Env(os.Environ())
	quiet = quiet || sysmon.Active()
	cmd.Env = append(env, envParent+"="+strconv.Itoa(os.Getpid()))
	if o.MemoryLimit > 0 {
		cmd.Env = append(cmd.Env, envMemoryLimit+"="+strconv.FormatInt(o.MemoryLimit, 10))
	}
	if o.GCPercent > 0 { // over an inherited GOGC: the last of a name counts
		cmd.Env = append(cmd.Env, "GOGC="+strconv.Itoa(o.GCPercent))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	// The worker's stderr is a pipe of ours (not exec's copying one, which
	// Wait closes): its last lines, a crash's, are read to the end.
	logr, logw, err := os.Pipe()
	if err != nil {
		local.Close()
		remote.Close()
		return nil, nil, err
	}
	cmd.Stderr = logw
	err = cmd.Start()
	remote.Close()
	logw.Close()
	if err != nil {
		local.Close()
		logr.Close()
		return nil, nil, fmt.Errorf("start the worker process (%s): %w", o.WorkerCommand[0], err)
	}
	conn, err := wire.NewConn(local)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logr.Close()
		return nil, nil, err
	}
	pr := newProcess(mod, cmd, conn)
	go pr.relayLog(logr, quiet)
	go func() {
		_ = cmd.Wait()
		pr.state = cmd.ProcessState
		close(pr.exited)
	}()
	loaded, err := pr.load()
	if err != nil {
		pr.kill()
		<-pr.exited
		conn.Close()
		return nil, nil, err
	}
	go pr.read()
	return pr, loaded, nil
}

// newProcess is the server's side of the worker cmd (started, or nil
// Process in tests), which it talks to over conn.
func newProcess(mod *isolatedModel, cmd *exec.Cmd, conn *wire.Conn) *process {
	pr := &process{model: mod, cmd: cmd, conn: conn,
		reqs: map[uint64]*core.Request{}, hooks: map[uint64]core.CancelHook{}, waiting: map[int][]chan error{},
		served: map[uint64]*servedReq{}, exited: make(chan struct{}), logDone: make(chan struct{}),
		inputs: newRegionPool("inputs", maxPooledRegions, maxPooledBytes), outRegions: map[uint64]*outRegion{}, strs: internTable{}}
	pr.room.L = &pr.mu
	if cmd.Process != nil {
		pr.pid = cmd.Process.Pid
	}
	return pr
}

// relayLog copies the worker's log lines into the server's log until the
// pipe's end (every process holding it gone), noting the first line with
// which the Go runtime reports a crash ("SIGSEGV: segmentation
// violation", "fatal error: ..."): a fault in backend code that the
// runtime caught ends the worker with status 2, and that line says what
// happened. With dropTrace, it drops the lines of the runtime's scheduler
// trace, which sysmon.Setting may print.
func (pr *process) relayLog(stderr *os.File, dropTrace bool) {
	defer close(pr.logDone)
	defer stderr.Close()
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if dropTrace && sysmon.IsTraceLine(line) {
			continue
		}
		if isRuntimeCrashLine(line) {
			pr.mu.Lock()
			if pr.fault == "" {
				pr.fault = string(line)
			}
			pr.mu.Unlock()
		}
		pr.model.p.opts.Logger.WriteLine(line)
	}
	// A line past the scanner's bound ends the scan; drain the rest so the
	// worker never blocks writing its log.
	_, _ = io.Copy(io.Discard, stderr)
}

// isRuntimeCrashLine reports whether line is how the Go runtime starts
// the report of a crash: a caught signal ("SIGSEGV: segmentation
// violation") or a fatal error.
func isRuntimeCrashLine(line []byte) bool {
	if bytes.HasPrefix(line, []byte("fatal error: ")) {
		return true
	}
	name, _, ok := bytes.Cut(line, []byte(": "))
	if !ok || len(name) < 4 || !bytes.HasPrefix(name, []byte("SIG")) {
		return false
	}
	for _, c := range name[3:] {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// load sends the load message and waits for the answer, at most the
// backend call timeout.
func (pr *process) load() (*loadedMsg, error) {
	mod := pr.model
	e := wire.NewEncoder(nil)
	mod.loadMsg().encode(e)
	if err := pr.conn.Send(e.Bytes()); err != nil {
		return nil, fmt.Errorf("send the load to the worker: %w", err)
	}
	type answer struct {
		m   *loadedMsg
		err error
	}
	got := make(chan answer, 1)
	go func() {
		buf := make([]byte, wire.MaxDatagram)
		msg, fds, err := pr.conn.Recv(buf)
		wire.CloseFiles(fds)
		if err != nil {
			got <- answer{err: err}
			return
		}
		d := wire.NewDecoder(msg)
		var m loadedMsg
		if kind, _ := readHeader(d); kind != msgLoaded {
			got <- answer{err: fmt.Errorf("the worker answered the load with message %d", kind)}
			return
		}
		m.decode(d)
		got <- answer{m: &m, err: d.Done()}
	}()
	timeout := mod.p.opts.CallTimeout
	select {
	case a := <-got:
		if a.err != nil {
			return nil, fmt.Errorf("the worker process (pid %d) %s while loading: %w", pr.pid, pr.describeEnd(), a.err)
		}
		if a.m.Err != nil {
			return nil, a.m.Err
		}
		return a.m, nil
	case <-time.After(timeout):
		return nil, core.Errorf(core.CodeUnavailable, "the worker process (pid %d) did not load the model within %v (the backend call timeout)", pr.pid, timeout)
	}
}

// describeEnd says how the process ended, once it has (else that it
// closed its socket).
func (pr *process) describeEnd() string {
	deadline := time.After(time.Second)
	select {
	case <-pr.exited:
	case <-deadline:
		return "closed its socket"
	}
	select { // its crash report, if it wrote one
	case <-pr.logDone:
	case <-deadline:
	}
	pr.mu.Lock()
	fault := pr.fault
	pr.mu.Unlock()
	return describeState(pr.state, fault)
}

// describeState words how a process ended: its signal or exit status,
// and the runtime's crash line where it wrote one.
func describeState(st *os.ProcessState, fault string) string {
	if st == nil {
		return "ended"
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
	}
	if fault != "" {
		return fmt.Sprintf("crashed (%s) and exited with status %d", fault, st.ExitCode())
	}
	return fmt.Sprintf("exited with status %d", st.ExitCode())
}

// kill ends the process at once.
func (pr *process) kill() {
	if pr.cmd.Process != nil {
		_ = syscall.Kill(-pr.pid, syscall.SIGKILL) // its process group: whatever the backend started too
		_ = pr.cmd.Process.Kill()
	}
}

// execute runs a batch on instance inst in the worker and returns when
// the backend's Execute returned there, or the worker died. Where the
// model pipelines (isolatedModel.pipelines) it returns once the worker was
// sent the batch, having waited while the worker held the model's depth
// of the instance's batches: the server's next batch for the instance then
// waits in the worker, not a round trip away. Each request is held
// (Request.Hold) while the worker holds it.
func (pr *process) execute(inst int, batch []*core.Request) error {
	done := make(chan error, 1)
	pipelined := pr.model.depth > 1
	pr.mu.Lock()
	for pipelined && len(pr.waiting[inst]) >= pr.model.depth && !pr.dead {
		pr.room.Wait() // bounded by the worker's execution (and the backend call timeout, where its death follows)
	}
	if pr.dead {
		err := pr.deathErr
		pr.mu.Unlock()
		return err
	}
	keys := make([]uint64, len(batch))
	for i, r := range batch {
		pr.nextKey++
		key := pr.nextKey
		keys[i] = key
		pr.reqs[key] = r
		r.Hold()
	}
	pr.waiting[inst] = append(pr.waiting[inst], done)
	pr.mu.Unlock()

	e := getEncoder()
	defer putEncoder(e) // the Conn copies what it sends
	p, forget, err := encodeExecute(e, inst, keys, batch, pr.inputs)
	for _, id := range forget {
		f := wire.NewEncoder(nil)
		encodeKey(f, msgForget, id, 0)
		if ferr := pr.conn.Send(f.Bytes()); ferr != nil && err == nil {
			err = ferr
		}
	}
	if err == nil {
		var fds []int
		if fds, err = p.files(); err == nil {
			var known bool
			if p.pooled != nil {
				known = pr.inputs.lent(p.pooled)
			}
			// Soon: the batches the instance's scheduler hands over
			// meanwhile (pipelined) join it in one datagram.
			err = pr.conn.SendSoon(e.Bytes(), fds...)
			if p.pooled != nil {
				if err == nil {
					pr.inputs.sent(p.pooled)
				} else {
					pr.inputs.unsent(p.pooled, known)
				}
			}
		} else if p.pooled != nil {
			pr.inputs.unsent(p.pooled, p.known)
		}
		p.close()
	}
	if errors.Is(err, wire.ErrTooLarge) {
		// Nothing reached the worker, which serves on: the batch fails
		// alone (its parameters, names and shapes do not fit in a message).
		pr.mu.Lock()
		var taken []*core.Request
		for i, r := range batch {
			if pr.reqs[keys[i]] == r {
				delete(pr.reqs, keys[i])
				taken = append(taken, r)
			}
		}
		pr.waiting[inst] = slices.DeleteFunc(pr.waiting[inst], func(c chan error) bool { return c == done })
		pr.mu.Unlock()
		pr.room.Broadcast()
		for _, r := range taken {
			r.Drop()
		}
		return core.Errorf(core.CodeInvalidArg, "model '%s' version %d: the batch does not fit in a message to its worker process: %v",
			pr.model.m.Name(), pr.model.m.Version(), err)
	}
	if err != nil {
		pr.die(fmt.Errorf("send a batch to it: %w", err))
		return <-done
	}
	// Only now that the worker has the batch: a cancel sent before it
	// would name a request the worker does not know yet, and be lost. A
	// request cancelled meanwhile runs its hook at once.
	pr.mu.Lock()
	for i, r := range batch {
		if key := keys[i]; pr.reqs[key] == r {
			pr.hooks[key] = r.Responder().OnCancel(func() { pr.sendCancel(key) })
		}
	}
	pr.mu.Unlock()
	if pipelined {
		return nil // a death fails the requests the worker holds
	}
	if timeout := pr.model.executeTimeout(); timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case err := <-done:
			return err
		case <-t.C:
			pr.die(fmt.Errorf("instance %q's execution did not return within %v (--backend-execute-timeout): it was killed",
				pr.model.instanceName(inst), timeout))
			return <-done
		}
	}
	return <-done
}

// sendCancel tells the worker that the client cancelled request key.
func (pr *process) sendCancel(key uint64) {
	e := getEncoder()
	defer putEncoder(e)
	encodeKey(e, msgCancel, key, 0)
	_ = pr.conn.Send(e.Bytes()) // a dead worker fails the request anyway
}

// stop asks the worker to unload and exit, and waits at most timeout for
// it, then kills it.
func (pr *process) stop(timeout time.Duration) {
	pr.mu.Lock()
	pr.dead = true // a death from now on is the end it was asked for
	if pr.deathErr == nil {
		pr.deathErr = core.Errorf(core.CodeUnavailable, "model %q version %d is unloading", pr.model.m.Name(), pr.model.m.Version())
	}
	pr.mu.Unlock()
	pr.room.Broadcast() // an execution waiting for room fails
	e := wire.NewEncoder(nil)
	header(e, msgStop, nil)
	_ = pr.conn.Send(e.Bytes())
	select {
	case <-pr.exited:
	case <-time.After(timeout):
		pr.model.p.opts.Logger.Warnf("model %q version %d: its worker process (pid %d) did not exit within %v of the unload; it is killed",
			pr.model.m.Name(), pr.model.m.Version(), pr.pid, timeout)
		pr.kill()
		<-pr.exited
	}
	pr.fail(pr.deathErr)
	pr.conn.Close()
	pr.inputs.close()
}

// read handles what the worker sends until its socket closes or it sends
// something malformed; either way the worker is dead to the server.
func (pr *process) read() {
	buf := make([]byte, wire.MaxDatagram)
	defer pr.closeOutRegions()
	for {
		msg, fds, err := pr.conn.Recv(buf)
		if err != nil {
			pr.die(nil)
			return
		}
		if err := pr.handle(msg, fds); err != nil {
			pr.die(fmt.Errorf("it sent a malformed message (%v) and was killed", err))
			return
		}
	}
}

// outputRegion maps the worker's pooled output region id, which fds
// brings the first time only; it stays mapped until the worker says
// forget it (msgForget) or the reader returns, and while a response lent
// it is not freed. A worker maps at most maxPooledRegions in the server.
func (pr *process) outputRegion(id uint64, fds []int) (*outRegion, error) {
	if len(fds) == 0 {
		if o := pr.outRegions[id]; o != nil {
			return o, nil
		}
		return nil, fmt.Errorf("pooled region %d is not mapped", id)
	}
	if len(fds) != 1 || pr.outRegions[id] != nil || len(pr.outRegions) >= maxPooledRegions {
		wire.CloseFiles(fds)
		return nil, fmt.Errorf("pooled region %d with %d descriptors, %d mapped", id, len(fds), len(pr.outRegions))
	}
	m, err := wire.Map(fds[0], maxRegion)
	if err != nil {
		return nil, err
	}
	o := &outRegion{pr: pr, id: id, m: m}
	pr.outRegions[id] = o
	return o, nil
}

// closeOutRegions unmaps the worker's pooled output regions, once the
// reader returns; a region a response still holds is unmapped when that
// response is freed.
func (pr *process) closeOutRegions() {
	for id, o := range pr.outRegions {
		o.forget()
		delete(pr.outRegions, id)
	}
}

// outRegion is one of the worker's pooled output regions, mapped read-only
// in the server. A response whose outputs it holds is either copied out
// of it, and the region returned to the worker (msgReturned) at once, or
// lent it (core.Response.Lent): the region then goes back to the worker
// when the response is freed, on whatever goroutine frees it. The worker
// writes it again only once it is returned; one that writes it earlier
// changes only the bytes its own response carries, which it chose anyway,
// and cannot shrink it (it is sealed), so the server's reads of it stay
// within the mapping. Its fields are guarded by mu.
type outRegion struct {
	pr *process
	id uint64
	m  *wire.Shared

	mu   sync.Mutex
	lent bool // a response holds it
	gone bool // forgotten: unmapped once no response holds it
}

// lend marks the region held by a response; false if one holds it
// already (the worker reused a region it was not given back: malformed).
func (o *outRegion) lend() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lent {
		return false
	}
	o.lent = true
	return true
}

// Free ends a response's loan: the region goes back to the worker, or, if
// it was forgotten meanwhile (the worker died), is unmapped.
func (o *outRegion) Free() {
	o.mu.Lock()
	o.lent = false
	gone := o.gone
	o.mu.Unlock()
	if gone {
		_ = o.m.Close()
		return
	}
	o.pr.sendReturned(o.id)
}

// forget drops the server's mapping, now or, while a response holds the
// region, when that response is freed. It reports whether a response
// held it.
func (o *outRegion) forget() (held bool) {
	o.mu.Lock()
	o.gone = true
	held = o.lent
	o.mu.Unlock()
	if !held {
		_ = o.m.Close()
	}
	return held
}

// sendReturned gives the worker back its pooled output region id.
func (pr *process) sendReturned(id uint64) {
	e := getEncoder()
	defer putEncoder(e)
	encodeKey(e, msgReturned, id, 0)
	_ = pr.conn.Send(e.Bytes()) // a dead worker needs it no more
}

// handle acts on one message from the worker; an error means the message
// was malformed (nothing of it was acted on when it is).
func (pr *process) handle(msg []byte, fds []int) error {
	d := wire.NewDecoder(msg)
	kind, withRegion := readHeader(d)
	src := &source{}
	var region *wire.Shared
	var pooled *outRegion
	var pooledID uint64
	if withRegion && kind == msgResponse {
		pooledID = d.Uint()
	}
	switch {
	case pooledID != 0:
		o, err := pr.outputRegion(pooledID, fds)
		if err != nil {
			return errMalformed(kind, err)
		}
		if !o.lend() {
			return errMalformed(kind, fmt.Errorf("a response in pooled region %d, which the server holds", pooledID))
		}
		src.region = o.m.Bytes()
		pooled = o
		// Unless a response keeps it (lendable), its outputs are copied
		// and it is the worker's again.
		defer func() {
			if pooled != nil {
				pooled.Free()
			}
		}()
	case withRegion && len(fds) == 1:
		var err error
		if region, err = wire.Map(fds[0], maxRegion); err != nil {
			return errMalformed(kind, err)
		}
		defer func() {
			if region != nil { // a request that took it keeps it
				_ = region.Close()
			}
		}()
		src.region = region.Bytes()
	case withRegion || len(fds) > 0:
		wire.CloseFiles(fds)
		return errMalformed(kind, fmt.Errorf("%d descriptors with a region flag of %v", len(fds), withRegion))
	}
	switch kind {
	case msgCall:
		if err := pr.serveCall(d, src); err != nil {
			return errMalformed(kind, err)
		}
	case msgSubmit:
		owned := region
		region = nil
		if err := pr.serveSubmit(d, src, owned); err != nil {
			return errMalformed(kind, err)
		}
	case msgCollected:
		id := d.Uint()
		data := src.get(d)
		if err := d.Done(); err != nil {
			return errMalformed(kind, err)
		}
		if len(data) > maxFamiliesBytes {
			return errMalformed(kind, fmt.Errorf("metric families of %d bytes", len(data)))
		}
		pr.collected(id, data)
	case msgSubmitCancel:
		id := d.Uint()
		d.Uint()
		if err := d.Done(); err != nil {
			return errMalformed(kind, err)
		}
		pr.cancelServed(id)
	case msgResponse:
		key, dr, final := decodeResponse(d, src, pr.model.outputNames, pr.strs)
		if err := d.Done(); err != nil {
			return errMalformed(kind, err)
		}
		r := pr.request(key)
		if r == nil {
			return nil // a request the server already failed (the worker was slow to learn)
		}
		if dr == nil {
			if final {
				_ = r.Responder().SendFinal()
			}
			return nil
		}
		resp := &dr.Response
		if err := pr.admitOutputs(r, resp); err != nil {
			resp = &core.Response{Err: err}
		} else if region != nil && region.Frozen() && lendable(r, resp) {
			resp.Lent = lentRegion{region} // the response owns it from here
			region = nil
		} else if pooled != nil && lendable(r, resp) {
			resp.Lent = pooled // returned to the worker when the response is freed
			pooled = nil
		} else {
			copyOutputs(dr) // they alias the message or the region, both gone after this
		}
		_ = r.Responder().Send(resp, final)
	case msgReleased:
		key, flags := d.Uint(), d.Uint()
		if err := d.Done(); err != nil {
			return errMalformed(kind, err)
		}
		r := pr.request(key)
		if r == nil {
			return nil
		}
		if flags&uint64(core.ReleaseReschedule) != 0 {
			if pr.forget(key) == nil {
				return nil // failed meanwhile (the worker died), which ended it
			}
			// The worker is done with it; the server runs it again, unless
			// it can no longer be (it was answered already): then it ends.
			r.Drop()
			if err := r.Release(core.ReleaseReschedule); err != nil && !r.Released() {
				_ = r.Release(core.ReleaseAll)
			}
			return nil
		}
		_ = r.Release(core.ReleaseAll)
	case msgForget:
		id := d.Uint()
		d.Uint()
		if err := d.Done(); err != nil {
			return errMalformed(kind, err)
		}
		o := pr.outRegions[id]
		if o == nil {
			return errMalformed(kind, fmt.Errorf("forget region %d, which is not mapped", id))
		}
		delete(pr.outRegions, id)
		if o.forget() {
			return errMalformed(kind, fmt.Errorf("forget region %d, which a response holds", id))
		}
	case msgReturned:
		id := d.Uint()
		d.Uint()
		if err := d.Done(); err != nil {
			return errMalformed(kind, err)
		}
		if err := pr.inputs.returned(id); err != nil {
			return errMalformed(kind, err)
		}
	case msgFinished:
		key := d.Uint()
		d.Uint()
		if err := d.Done(); err != nil {
			return errMalformed(kind, err)
		}
		// The worker sends this once it both released the request and
		// delivered its final response, but its release can reach the
		// server after it (two backend threads): the release is implied.
		// A request that got no final response never will, and fails.
		// (Once done, a responder stays done: the error is made only for
		// a request that needs it, not for each.)
		if r := pr.forget(key); r != nil {
			var err error
			if !r.Responder().Done() {
				err = core.Errorf(core.CodeInternal, "model '%s' version %d: its worker process finished request %q without a final response",
					pr.model.m.Name(), pr.model.m.Version(), r.ID())
			}
			pr.end(r, err)
		}
	case msgStats, msgBatchStats, msgResponseStats:
		var m timesMsg
		m.decode(d)
		if err := d.Done(); err != nil {
			return errMalformed(kind, err)
		}
		pr.statistics(kind, &m)
	case msgState:
		key := d.Uint()
		name := d.String(maxName)
		dtype := core.DataType(d.Uint())
		shape := decodeShape(d)
		data := src.get(d)
		if err := d.Done(); err != nil {
			return errMalformed(kind, err)
		}
		if r := pr.request(key); r != nil {
			// Checked before the copy: data may alias a sparse region of
			// any size.
			err := r.CheckStateSize(name, int64(len(data)))
			if err == nil {
				err = r.UpdateState(name, dtype, shape, append([]byte(nil), data...))
			}
			if err != nil {
				pr.model.p.opts.Logger.Errorf("model %q: %v", pr.model.m.Name(), err)
			}
		}
	case msgExecuted:
		inst := d.Count(maxTensors)
		err := decodeError(d)
		if derr := d.Done(); derr != nil {
			return errMalformed(kind, derr)
		}
		pr.mu.Lock()
		var done chan error
		if q := pr.waiting[inst]; len(q) > 0 {
			done = q[0]
			if pr.waiting[inst] = q[1:]; len(q) == 1 {
				delete(pr.waiting, inst)
			}
		}
		pr.mu.Unlock()
		if done == nil {
			return errMalformed(kind, fmt.Errorf("instance %d has no execution", inst))
		}
		pr.room.Broadcast()
		done <- err
	default:
		return errMalformed(kind, errors.New("unknown message"))
	}
	return nil
}

// admitOutputs drops the outputs of resp that the client did not ask for
// and checks the others' sizes before anything is copied: each within the
// request's tensor bound, and all together within what as many outputs as
// the configuration declares (one at least) could hold. A worker's outputs
// may all alias one sealed region, which costs the worker nothing when it
// is sparse; copied unchecked, they could exhaust the server's memory.
func (pr *process) admitOutputs(r *core.Request, resp *core.Response) error {
	p := r.Responder()
	kept := resp.Outputs[:0]
	var total int64
	for _, o := range resp.Outputs {
		if !p.Requested(o.Name) {
			continue
		}
		if err := p.CheckOutputSize(o.Name, int64(len(o.Data))); err != nil {
			return err
		}
		total += int64(len(o.Data))
		kept = append(kept, o)
	}
	resp.Outputs = kept
	n := int64(max(len(pr.model.m.Config().GetOutput()), 1))
	if (total+n-1)/n > p.MaxTensorBytes() {
		return core.Errorf(core.CodeInternal, "model '%s' version %d: its worker process sent a response of %d output bytes, more than its %d outputs can hold",
			pr.model.m.Name(), pr.model.m.Version(), total, n)
	}
	return nil
}

// lendable reports whether resp's outputs, which alias a region of the
// worker's (frozen, or pooled: outRegion), may stay there rather than be
// copied: the request's caller frees its responses
// (core.Submission.FreesResponses, as the gRPC frontend does), and no
// output is of type BYTES (whose element lengths the caller reads back:
// they are copied, as a worker's are checked, so that the worker cannot
// change them once checked).
func lendable(r *core.Request, resp *core.Response) bool {
	if !r.Responder().FreesResponses() || len(resp.Outputs) == 0 {
		return false
	}
	for _, o := range resp.Outputs {
		if o.DataType == core.TypeBytes {
			return false
		}
	}
	return true
}

// lentRegion is a worker's frozen region that a response's outputs point
// into (core.Response.Lent): unmapped and closed when the response is
// freed, on whatever goroutine frees it.
type lentRegion struct{ region *wire.Shared }

// Free unmaps the region.
func (l lentRegion) Free() { _ = l.region.Close() }

// copyOutputs moves a response's outputs into one Go buffer of their own:
// the decoded response's own room when they fit.
func copyOutputs(dr *decodedResponse) {
	resp := &dr.Response
	total := 0
	for _, o := range resp.Outputs {
		total += len(o.Data)
	}
	buf := dr.small[:0]
	if total > len(dr.small) {
		buf = make([]byte, 0, total)
	}
	for i := range resp.Outputs {
		o := &resp.Outputs[i]
		start := len(buf)
		buf = append(buf, o.Data...)
		o.Data = buf[start:len(buf):len(buf)]
	}
}

// statistics records a report the worker's backend made.
func (pr *process) statistics(kind byte, m *timesMsg) {
	insts := pr.model.m.Instances()
	if m.Instance >= len(insts) {
		return
	}
	inst := insts[m.Instance]
	t := m.Times
	switch kind {
	case msgStats:
		if r := pr.request(m.Key); r != nil {
			inst.ReportStatistics(r, m.Success, t[0], t[1], t[2], t[3])
		}
	case msgBatchStats:
		inst.ReportBatchStatistics(m.Size, t[0], t[1], t[2], t[3])
	case msgResponseStats:
		if r := pr.request(m.Key); r != nil {
			inst.ReportResponseStatistics(r.Responder(), t[0], t[1], t[2], m.Outcome)
		}
	}
}

// request returns the request the worker holds under key, nil if none.
func (pr *process) request(key uint64) *core.Request {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.reqs[key]
}

// forget removes request key, returning it.
func (pr *process) forget(key uint64) *core.Request {
	pr.mu.Lock()
	r := pr.reqs[key]
	delete(pr.reqs, key)
	h, ok := pr.hooks[key]
	delete(pr.hooks, key)
	pr.mu.Unlock()
	if ok {
		h.Remove()
	}
	return r
}

// die handles the worker's end: every request it held fails with an error
// naming the model and how the process ended, and the executions waiting
// on it return that error. cause says why the server ended it, if it did.
// Unless the version unloads, the model then restarts its worker.
func (pr *process) die(cause error) {
	pr.mu.Lock()
	if pr.dead {
		pr.mu.Unlock()
		return
	}
	pr.dead = true
	// What an execution meanwhile fails with (describeEnd may wait): a
	// nil error would tell the server the worker took the batch.
	m := pr.model.m
	pr.deathErr = core.Errorf(core.CodeUnavailable, "model '%s' version %d: the worker process (pid %d) hosting its backend is ending; the model restarts",
		m.Name(), m.Version(), pr.pid)
	pr.mu.Unlock()
	pr.room.Broadcast() // an execution waiting for room fails
	if cause != nil {
		pr.kill()
	}
	how := pr.describeEnd()
	if cause != nil {
		how = cause.Error()
	}
	err := core.Errorf(core.CodeUnavailable, "model '%s' version %d: the worker process (pid %d) hosting its backend %s; the model restarts",
		m.Name(), m.Version(), pr.pid, how)
	pr.mu.Lock()
	pr.deathErr = err
	pr.mu.Unlock()
	pr.model.p.opts.Logger.Errorf("%v", err)
	pr.fail(err)
	pr.conn.Close()
	pr.inputs.close()
	pr.model.died(pr, err)
}

// fail ends everything the process held with err.
func (pr *process) fail(err error) {
	pr.mu.Lock()
	reqs := pr.reqs
	pr.reqs = map[uint64]*core.Request{}
	hooks := pr.hooks
	pr.hooks = map[uint64]core.CancelHook{}
	waiting := pr.waiting
	pr.waiting = map[int][]chan error{}
	pr.mu.Unlock()
	for _, h := range hooks {
		h.Remove()
	}
	for _, r := range reqs {
		pr.end(r, err)
	}
	for _, q := range waiting {
		for _, done := range q {
			done <- err // buffered: an execution that returned early reads none
		}
	}
	pr.room.Broadcast()
	pr.cancelAllServed()
}

// end ends a request the worker no longer holds: with err unless it got
// its final response, released unless it was, and its hold dropped.
func (pr *process) end(r *core.Request, err error) {
	r.Responder().Fail(err)
	if !r.Released() {
		_ = r.Release(core.ReleaseAll)
	}
	r.Drop()
}
