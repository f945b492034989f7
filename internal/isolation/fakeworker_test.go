package isolation

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/internal/wire"
)

// This file is a server whose isolated models' workers are the test
// itself: the server's side of each worker (process, isolatedModel,
// isolatedInstance) is the real one, while the worker's end of the socket
// is a fakeWorker that sends whatever a test or a fuzzer makes up, as a
// malicious or corrupted worker would.

// fakeModelConfig is a model of the fake worker's: INT32 vectors from
// INPUT0 to OUTPUT0, two instances (two executions at once), decoupled
// or not.
func fakeModelConfig(decoupled bool) string {
	cfg := `backend: "fake"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
`
	if decoupled {
		cfg += "model_transaction_policy { decoupled: true }\n"
	}
	return cfg
}

// fakeMaxTensorBytes is the fake server's tensor bound: small, so that a
// worker's output past it costs the test nothing.
const fakeMaxTensorBytes = 1 << 20

// fakeServer is a core.Server with two isolated models, "dec" (decoupled)
// and "one", whose workers a test plays.
type fakeServer struct {
	srv    *core.Server
	log    *testenv.LogBuffer
	models map[string]*isolatedModel
}

// fakeProvider loads every model as an isolated model with no worker yet:
// a test gives it one (fakeServer.start).
type fakeProvider struct {
	p      *Provider
	mu     sync.Mutex
	models map[string]*isolatedModel
}

func (fp *fakeProvider) LoadModel(m *core.Model) (core.BackendModel, error) {
	// closing: a dead fake worker is not restarted (there is no program
	// to restart); its model's requests fail until the next start.
	mod := &isolatedModel{p: fp.p, m: m, closing: true}
	fp.mu.Lock()
	fp.models[m.Name()] = mod
	fp.mu.Unlock()
	return fakeModel{mod}, nil
}

func (fp *fakeProvider) Close() error { return nil }

// fakeModel is an isolated model whose instances are named as the server
// creates them (a real worker reports them in its load answer).
type fakeModel struct{ *isolatedModel }

func (m fakeModel) NewInstance(inst *core.Instance) (core.BackendInstance, error) {
	m.instances = append(m.instances, inst.Name())
	return m.isolatedModel.NewInstance(inst)
}

// ParallelInstanceLoading is false: NewInstance appends.
func (m fakeModel) ParallelInstanceLoading() bool { return false }

// newFakeServer starts the server, stopped at t's cleanup.
func newFakeServer(t testing.TB) *fakeServer {
	t.Helper()
	log := &testenv.LogBuffer{}
	prov, err := New(nil, Options{Default: ModeProcess, WorkerCommand: []string{"/nonexistent"},
		Logger: serverlog.New(log), CallTimeout: testenv.Patience})
	if err != nil {
		t.Fatal(err)
	}
	fp := &fakeProvider{p: prov, models: map[string]*isolatedModel{}}
	srv := coretest.Serve(t, core.Options{Backends: fp, MaxTensorBytes: fakeMaxTensorBytes},
		coretest.ModelDir{Name: "dec", Config: fakeModelConfig(true)},
		coretest.ModelDir{Name: "one", Config: fakeModelConfig(false)})
	if !srv.Ready() {
		t.Fatalf("the fake models did not load: %+v", srv.RepositoryIndex())
	}
	// The first socket starts the runtime's poller (descriptors of its
	// own), which is not what a test counts.
	a, b, err := wire.Pair()
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := wire.NewConn(a)
	cb, _ := wire.NewConn(b)
	ca.Close()
	cb.Close()
	return &fakeServer{srv: srv, log: log, models: fp.models}
}

// wmsg is one message a fake worker sends: its bytes, and what
// descriptors travel beside them (fdSpec).
type wmsg struct {
	fds  byte
	body []byte
}

// fdSpec is what a message brings beside it: its low three bits the kind
// of descriptor, the next two the size of a region.
const (
	fdNone     = 0 // nothing
	fdRegion   = 1 // a sealed memfd, as a worker sends one
	fdUnsealed = 2 // a memfd that could still shrink
	fdPipe     = 3 // a pipe's read end: no memory at all
	fdTwo      = 4 // two sealed memfds
	fdEmpty    = 5 // a sealed memfd of 0 bytes
	fdShrink   = 6 // a memfd sealed against shrinking only
	fdMany     = 7 // MaxFiles+1 memfds: more than a message carries

	sizeSmall = 0 << 3 // 4 KiB
	sizeMid   = 1 << 3 // 128 KiB
	sizeMiB   = 2 << 3 // 1 MiB and 3 bytes
	sizeGiB   = 3 << 3 // 1 GiB, sparse
)

// regionSize is the size of the regions of spec.
func regionSize(spec byte) int64 {
	return [...]int64{4 << 10, 128 << 10, 1<<20 + 3, 1 << 30}[spec>>3&3]
}

// memfd creates a memfd of size bytes, its first bytes (up to 128 KiB)
// numbered, with seals.
func memfd(t testing.TB, size int64, seals int) int {
	t.Helper()
	fd, err := unix.MemfdCreate("fake-worker", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Ftruncate(fd, size); err != nil {
		t.Fatal(err)
	}
	fill := make([]byte, min(size, 128<<10))
	for i := range fill {
		fill[i] = byte(i % 251)
	}
	if _, err := unix.Pwrite(fd, fill, 0); err != nil {
		t.Fatal(err)
	}
	if seals != 0 {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
			t.Fatal(err)
		}
	}
	return fd
}

// descriptors makes the descriptors of spec, which the caller closes.
func descriptors(t testing.TB, spec byte) []int {
	t.Helper()
	const sealed = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL
	size := regionSize(spec)
	switch spec & 7 {
	case fdRegion:
		return []int{memfd(t, size, sealed)}
	case fdUnsealed:
		return []int{memfd(t, size, 0)}
	case fdPipe:
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		unix.Close(p[1])
		return p[:1]
	case fdTwo:
		return []int{memfd(t, size, sealed), memfd(t, size, sealed)}
	case fdEmpty:
		return []int{memfd(t, 0, sealed)}
	case fdShrink:
		return []int{memfd(t, size, unix.F_SEAL_SHRINK)}
	case fdMany:
		fds := make([]int, wire.MaxFiles+1)
		for i := range fds {
			fds[i] = memfd(t, 4<<10, sealed)
		}
		return fds
	}
	return nil
}

// unixConn wraps f, which it closes, as a *net.UnixConn.
func unixConn(t testing.TB, f *os.File) *net.UnixConn {
	t.Helper()
	fc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	return fc.(*net.UnixConn)
}

// close closes the worker's ends: the server reads the end of the
// connection.
func (w *fakeWorker) close() {
	w.in.Close()
	w.out.Close()
}

// fakeWorker is the worker's end of one process's sockets.
type fakeWorker struct {
	t       testing.TB
	in, out *net.UnixConn // what the server sends; what the worker sends
	mu      sync.Mutex
	// executions: each execute message, its instance and request keys.
	executions []fakeExecution
	announced  map[uint64]bool // the keys of every execute message so far
	early      []uint64        // keys cancelled before their execute message came
	arrived    chan struct{}   // a token per execute message
	drained    chan struct{}   // closed once the server's end closed
	pending    []wire.Frame    // the messages of the last datagram not yet read
	returned   []uint64        // the pooled regions the server returned (msgReturned)
}

// fakeExecution is one execute message a fake worker received.
type fakeExecution struct {
	inst   int
	keys   []uint64
	ids    []string
	region uint64 // the pooled region of its inputs, if any (0: none, or one of its own)
	fds    int    // the descriptors beside it
	// inputs holds, per request, its inputs' bytes and where they lie in
	// the message's region (-1: inline, or the region was not brought).
	inputs [][]fakeInput
}

// fakeInput is one input of a request an execute message brought.
type fakeInput struct {
	data []byte
	at   int
}

// run is one fake worker's life: the server's side of it, what the
// worker holds, and what to check once it ended.
type run struct {
	fs      *fakeServer
	model   string
	pr      *process
	w       *fakeWorker
	fds     int // descriptors and shared-memory mappings before it
	maps    int
	readEnd chan struct{} // closed once the server's reader returned
	loaded  bool
}

// start gives model a fake worker whose answer to the load is answer,
// and returns the run, loaded unless the answer failed the load.
func (fs *fakeServer) start(t testing.TB, model string, answer wmsg) *run {
	t.Helper()
	r := &run{fs: fs, model: model, fds: openFDs(t), maps: memfdMappings(t), readEnd: make(chan struct{})}
	local, remote, err := wire.Pair()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := wire.NewConn(local)
	if err != nil {
		t.Fatal(err)
	}
	// The worker's end is plain unix sockets: wire.Conn would refuse to
	// send some of what a broken worker sends (too many descriptors).
	in, out := unixConn(t, remote.Read), unixConn(t, remote.Write)
	mod := fs.models[model]
	pr := newProcess(mod, &exec.Cmd{}, conn) // no process: nothing to kill or wait for
	close(pr.exited)
	close(pr.logDone)
	r.pr = pr
	r.w = &fakeWorker{t: t, in: in, out: out, announced: map[uint64]bool{}, arrived: make(chan struct{}, 1024), drained: make(chan struct{})}
	t.Cleanup(r.w.close) // a test that failed half way frees the model for the next

	answered := make(chan error, 1)
	go func() {
		msg, err := r.w.recv()
		if err != nil {
			answered <- err
			return
		}
		var lm loadMsg
		d := wire.NewDecoder(msg)
		if kind, _ := readHeader(d); kind != msgLoad {
			answered <- fmt.Errorf("the server's first message is %d, not a load", kind)
			return
		}
		lm.decode(d)
		if err := d.Done(); err != nil {
			answered <- fmt.Errorf("the load message: %w", err)
			return
		}
		if lm.Name != model {
			answered <- fmt.Errorf("the load message names %q", lm.Name)
			return
		}
		r.w.send(answer)
		answered <- nil
	}()
	loaded, err := pr.load()
	if aerr := <-answered; aerr != nil {
		t.Fatal(aerr)
	}
	if err == nil && loaded == nil {
		t.Fatal("load returned neither a load answer nor an error")
	}
	if err != nil {
		conn.Close()
		return r
	}
	r.loaded = true
	mod.mu.Lock()
	mod.cur = pr
	mod.mu.Unlock()
	go func() {
		defer close(r.readEnd)
		pr.read()
	}()
	go r.w.drain()
	return r
}

// send sends m, closing this side's descriptors; a send the server's end
// refused (it closed: the worker is dead to it) is not an error.
func (w *fakeWorker) send(m wmsg) bool {
	fds := descriptors(w.t, m.fds)
	defer wire.CloseFiles(fds)
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	_, _, err := w.out.WriteMsgUnix(wire.AppendFrame(nil, m.body, len(fds)), oob, nil)
	return err == nil
}

// recv receives the server's next message (its descriptors closed,
// regions unmapped: the fake worker reads only the fields), or an error
// once the server's end closed.
func (w *fakeWorker) recv() (msg []byte, err error) {
	msg, fds, err := w.recvFiles()
	wire.CloseFiles(fds)
	return msg, err
}

// recvFiles receives the server's next message and its descriptors.
func (w *fakeWorker) recvFiles() ([]byte, []int, error) {
	if len(w.pending) > 0 {
		f := w.pending[0]
		w.pending = w.pending[1:]
		return f.Msg, f.Files, nil
	}
	buf := make([]byte, wire.MaxDatagram)
	oob := make([]byte, unix.CmsgSpace(4*wire.MaxFiles))
	n, oobn, _, _, err := w.in.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, nil, err
	}
	var fds []int
	if oobn > 0 {
		cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, nil, err
		}
		for _, c := range cmsgs {
			got, err := unix.ParseUnixRights(&c)
			if err == nil {
				fds = append(fds, got...)
			}
		}
	}
	if n == 0 && oobn == 0 {
		return nil, nil, io.EOF
	}
	frames, err := wire.SplitFrames(nil, buf[:n], fds)
	if err != nil {
		return nil, nil, err
	}
	w.pending = frames[1:]
	return frames[0].Msg, frames[0].Files, nil
}

// drain reads what the server sends until its end closes, noting every
// execute message.
func (w *fakeWorker) drain() {
	defer close(w.drained)
	pooled := map[uint64]*wire.Shared{} // the server's pooled regions, as a worker keeps them
	defer func() {
		for _, s := range pooled {
			s.Close()
		}
	}()
	for {
		msg, fds, err := w.recvFiles()
		if err != nil {
			return
		}
		d := wire.NewDecoder(msg)
		kind, withRegion := readHeader(d)
		if kind == msgCancel {
			key := d.Uint()
			w.mu.Lock()
			if !w.announced[key] {
				w.early = append(w.early, key)
			}
			w.mu.Unlock()
		}
		if kind == msgReturned {
			id := d.Uint()
			w.mu.Lock()
			w.returned = append(w.returned, id)
			w.mu.Unlock()
		}
		if kind == msgForget {
			id := d.Uint()
			if s := pooled[id]; s != nil {
				s.Close()
				delete(pooled, id)
			}
		}
		if kind != msgExecute {
			wire.CloseFiles(fds)
			continue
		}
		src := &source{}
		var region *wire.Shared
		var regionID uint64
		if withRegion {
			regionID = d.Uint()
		}
		nfds := len(fds)
		switch {
		case withRegion && len(fds) == 1:
			if region, err = wire.Map(fds[0], maxRegion); err == nil {
				src.region = region.Bytes()
				if regionID != 0 {
					if old := pooled[regionID]; old != nil {
						old.Close()
					}
					pooled[regionID] = region
				}
			}
		case withRegion && regionID != 0 && pooled[regionID] != nil:
			region = pooled[regionID]
			src.region = region.Bytes()
			wire.CloseFiles(fds)
		default:
			wire.CloseFiles(fds)
		}
		inst, reqs := decodeExecute(d, src, nil)
		ex := fakeExecution{inst: inst, region: regionID, fds: nfds}
		for _, q := range reqs {
			ex.keys = append(ex.keys, q.key)
			ex.ids = append(ex.ids, q.sub.ID)
			var ins []fakeInput
			for _, in := range q.sub.Inputs {
				got := fakeInput{data: slices.Concat(in.Buffers...), at: -1}
				if region != nil && len(in.Buffers) == 1 && len(in.Buffers[0]) > 0 {
					got.at = int(addr(in.Buffers[0]) - addr(region.Bytes()))
				}
				ins = append(ins, got)
			}
			ex.inputs = append(ex.inputs, ins)
		}
		if region != nil && regionID == 0 {
			region.Close()
		}
		w.mu.Lock()
		w.executions = append(w.executions, ex)
		for _, k := range ex.keys {
			w.announced[k] = true
		}
		w.mu.Unlock()
		select {
		case w.arrived <- struct{}{}:
		default:
		}
	}
}

// awaitExecution waits for the next execute message and returns it.
func (w *fakeWorker) awaitExecution(t testing.TB) fakeExecution {
	t.Helper()
	select {
	case <-w.arrived:
	case <-time.After(testenv.Patience):
		t.Fatalf("no execute message reached the fake worker after %v", testenv.Patience)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.executions[len(w.executions)-1]
}

// submit sends request id to the run's model and waits until the worker
// holds it; it returns its collector and its execution.
func (r *run) submit(t testing.TB, id string) (*coretest.Collector, fakeExecution) {
	t.Helper()
	c := coretest.Infer(t, r.fs.srv, coretest.Request(r.model, id, coretest.Int32Input("INPUT0", []int64{2}, 7, 8)))
	ex := r.w.awaitExecution(t)
	if len(ex.ids) != 1 || ex.ids[0] != id {
		t.Fatalf("the execution after submitting %q holds %v", id, ex.ids)
	}
	return c, ex
}

// sendAll sends msgs in order, until the server's end refuses one.
func (r *run) sendAll(msgs []wmsg) {
	for _, m := range msgs {
		if !r.w.send(m) {
			return
		}
	}
}

// end closes the worker's end (the worker is gone) and checks that the
// run left the server as it found it: every request answered once and no
// longer live, the reader returned, and every descriptor and mapping the
// worker passed closed.
func (r *run) end(t testing.TB, requests ...*coretest.Collector) {
	t.Helper()
	r.w.close()
	if r.loaded {
		for _, ch := range []chan struct{}{r.readEnd, r.w.drained} {
			select {
			case <-ch:
			case <-time.After(testenv.Patience):
				t.Fatalf("the server's reader of a closed worker socket did not return after %v", testenv.Patience)
			}
		}
	}
	for _, c := range requests {
		c.Wait(t) // checks the response function's contract
	}
	testenv.WaitUntil(t, "no live request", func() bool { return r.fs.srv.LiveRequests() == 0 })
	r.checkResources(t)
}

// checkResources checks that the descriptors and shared-memory mappings
// of the test process are those it had before the run.
func (r *run) checkResources(t testing.TB) {
	t.Helper()
	var fds, maps int
	if !testenv.Eventually(func() bool {
		fds, maps = openFDs(t), memfdMappings(t)
		return fds == r.fds && maps == r.maps
	}) {
		t.Fatalf("%d descriptors and %d shared-memory mappings after the run, %d and %d before", fds, maps, r.fds, r.maps)
	}
}

// openFDs counts the test process's open descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries) - 1 // the directory's own
}

// memfdMappings counts the test process's mappings of memfds.
func memfdMappings(t testing.TB) int {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(maps, []byte("/memfd:"))
}

// encode returns the bytes that fill writes.
func encode(fill func(e *wire.Encoder)) []byte {
	e := wire.NewEncoder(nil)
	fill(e)
	return bytes.Clone(e.Bytes())
}

// int32s is an INT32 tensor's bytes.
func int32s(vs ...int32) []byte {
	b := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// responseMsg is a worker's response to request key, its outputs inline
// when small and else in a region (placed at the start of one: send it
// with fdRegion and a size class that holds it); nil resp is a flags-only
// final.
func responseMsg(key uint64, resp *core.Response, final bool) []byte {
	e := wire.NewEncoder(nil)
	p, err := encodeResponse(e, key, resp, final)
	if err != nil {
		panic(err)
	}
	p.close()
	return bytes.Clone(e.Bytes())
}

// output is OUTPUT0 holding data, INT32.
func output(data []byte) core.Output {
	return core.Output{Name: "OUTPUT0", DataType: core.TypeInt32, Shape: []int64{int64(len(data) / 4)}, Data: data}
}

// keyMsg is a release (n: its flags) or finished message of key.
func keyMsg(kind byte, key, n uint64) []byte {
	return encode(func(e *wire.Encoder) { encodeKey(e, kind, key, n) })
}

// executedMsg says instance inst's execution returned, with err.
func executedMsg(inst int, err error) []byte {
	return encode(func(e *wire.Encoder) { encodeExecuted(e, inst, err) })
}

// timesMsgOf is a statistics report of kind.
func timesMsgOf(kind byte, m timesMsg) []byte {
	return encode(func(e *wire.Encoder) { m.encode(e, kind) })
}

// stateMsg is a state update of request key, its data inline.
func stateMsg(key uint64, name string, shape []int64, data []byte) []byte {
	e := wire.NewEncoder(nil)
	p, err := encodeState(e, key, name, core.TypeInt32, shape, data)
	if err != nil {
		panic(err)
	}
	p.close()
	return bytes.Clone(e.Bytes())
}

// regionResponse is a response to request key whose outputs OUTPUT0, n
// of them, each hold size bytes at offset 0 of the region beside it: what
// a hostile worker sends to make the server copy one region many times.
func regionResponse(key uint64, n int, size int64) []byte { return responseInRegion(key, 0, n, size) }

// responseInRegion is a final response to request key whose outputs
// OUTPUT0, n of them, each hold size bytes at offset 0 of a region: the
// worker's pooled region pool, or (0) one of its own beside the message.
func responseInRegion(key, pool uint64, n int, size int64) []byte {
	return encode(func(e *wire.Encoder) {
		e.Uint(uint64(msgResponse))
		e.Bool(true) // a region comes with it
		e.Uint(pool)
		e.Uint(key)
		e.Bool(true) // final
		e.Bool(true) // a response
		e.Uint(0)    // no error
		e.Uint(uint64(n))
		for range n {
			e.String("OUTPUT0")
			e.Uint(uint64(core.TypeInt32))
			encodeShape(e, []int64{size / 4})
			e.Uint(0)
			e.Uint(uint64(size))
		}
		e.Uint(0) // no parameters
	})
}

// regionState is a state update of request key whose value is size bytes
// at offset 0 of the region beside it.
func regionState(key uint64, size int64) []byte {
	return encode(func(e *wire.Encoder) {
		e.Uint(uint64(msgState))
		e.Bool(true)
		e.Uint(key)
		e.String("OUTPUT_STATE")
		e.Uint(uint64(core.TypeInt32))
		encodeShape(e, []int64{size / 4})
		e.Uint(0)
		e.Uint(uint64(size))
	})
}

// loadedAnswer is a worker's answer to the load: the model's instances,
// or err.
func loadedAnswer(fs *fakeServer, model string, err error) wmsg {
	m := &loadedMsg{Err: err, Config: fs.models[model].m.ConfigJSON()}
	for _, inst := range fs.models[model].m.Instances() {
		m.Instances = append(m.Instances, inst.Name())
	}
	return wmsg{body: encode(m.encode)}
}

// errorText is the error of the single response c received, or "".
func errorText(t testing.TB, c *coretest.Collector) string {
	t.Helper()
	res := c.Wait(t)
	for _, r := range res.Responses {
		if r.Err != nil {
			return r.Err.Error()
		}
	}
	return ""
}

// hasAll reports whether s contains every one of subs.
func hasAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
