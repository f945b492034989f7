package isolation

import (
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/wire"
)

// The messages between the server and a worker. Each starts with its kind,
// then whether tensor bytes travel in a shared region beside it; their
// fields follow in the order the encode functions write them. Tensor bytes
// travel inline when a message's tensors add up to at most inlineBytes,
// else all of them in one region, frozen before it is sent (one copy into
// it, none through the socket; a response's outputs there reach a client
// that frees its responses without another copy: process.go, lendable).
const (
	// server to worker
	msgLoad byte = 1 + iota
	msgExecute
	msgCancel
	msgStop
	// worker to server
	msgLoaded
	msgExecuted
	msgResponse
	msgReleased
	msgFinished
	msgStats
	msgBatchStats
	msgResponseStats
	msgState
	// worker to server: its backend's calls into the server (upstream.go)
	msgCall
	msgSubmit
	msgSubmitCancel
	// server to worker: their answers
	msgReply
	msgUpResponse
	msgUpDone
	// the backend's own metric families, which the server serves
	// (metrics.go): asked by the server, sent by the worker
	msgCollect
	msgCollected
	// server to worker: unmap a pooled input region (regionPool), idle
	msgForget
	// worker to server: it no longer reads a pooled input region
	msgReturned
)

// An execute message, or a worker's response, with a region names it
// first: 0 for a region of its own (frozen, its descriptor beside the
// message), else a pooled region's id (regionPool: the server's for
// inputs, the worker's for outputs), only sealed against resizing, whose
// descriptor comes beside the first message that names it only; the
// receiver keeps it mapped until msgForget, and sends msgReturned once it
// no longer reads it (the worker: the batch's requests released; the
// server: the outputs copied, as they are never lent from such a region).

// inlineBytes is the most tensor bytes a message carries inline.
const inlineBytes = 64 << 10

// Bounds on what a message from a worker may declare: a worker is not
// trusted, and a decoder allocates by these at most.
const (
	maxName     = 4096    // a tensor, parameter or model name, an id
	maxMessage  = 1 << 16 // an error message
	maxDims     = core.MaxTensorDims
	maxTensors  = 4096
	maxParams   = 1024
	maxRequests = 1 << 16
	maxRegion   = 1 << 40 // what Map accepts; the region's own size bounds every tensor in it
)

// payload places the tensor bytes of one message being encoded.
type payload struct {
	region *wire.Shared  // nil: inline
	pooled *pooledRegion // region's place in a regionPool, or nil: a region of its own
	known  bool          // the peer maps pooled already: its descriptor stays here
	off    int
	// inPlace: the tensors lie in the region already (inPlacePayload);
	// put names where, and copies nothing.
	inPlace bool
}

// newPayload prepares the placement of total tensor bytes: inline when
// small, else in a new region (closed by the caller once sent).
func newPayload(total int) (*payload, error) {
	if total <= inlineBytes {
		return &payload{}, nil
	}
	r, err := wire.NewShared("tensors", total)
	if err != nil {
		return nil, err
	}
	return &payload{region: r}, nil
}

// pooledPayload is newPayload with a region of pool (nil: none) for
// large tensors when one is free or can be made; forget lists the pool's
// regions the peer is to unmap first (msgForget).
func pooledPayload(total int, pool *regionPool) (*payload, []uint64, error) {
	if total > inlineBytes && pool != nil {
		r, forget, err := pool.take(total)
		if err != nil {
			return nil, forget, err
		}
		if r != nil {
			return &payload{region: r.region, pooled: r, known: r.known}, forget, nil
		}
		p, err := newPayload(total)
		return p, forget, err
	}
	p, err := newPayload(total)
	return p, nil, err
}

// inPlacePayload is the payload of a batch whose inputs all lie, one
// buffer each, in the one region of pool that their requests' received
// message was leased (isolatedModel.InputBuffer): the message names
// where they lie in it, and nothing is copied. It is nil for any other
// batch, or when the region is in use (the worker still holds it from an
// earlier message): the inputs are then copied as usual.
func inPlacePayload(batch []*core.Request, pool *regionPool) *payload {
	if pool == nil || len(batch) == 0 {
		return nil
	}
	var lease *inputLease
	for _, r := range batch {
		l, ok := r.InputBuffer().(*inputLease)
		if !ok || l.pool != pool || (lease != nil && l != lease) {
			return nil
		}
		lease = l
		for _, in := range r.Inputs() {
			if len(in.Buffers) > 1 || len(in.Buffers) == 1 && len(in.Buffers[0]) > 0 && !within(in.Buffers[0], lease.buf) {
				return nil
			}
		}
	}
	if !pool.useLeased(lease.r) {
		return nil
	}
	return &payload{region: lease.r.region, pooled: lease.r, known: lease.r.known, inPlace: true}
}

// within reports whether b lies inside buf.
func within(b, buf []byte) bool {
	start, end := addr(buf), addr(buf)+uintptr(len(buf))
	at := addr(b)
	return at >= start && at <= end && uintptr(len(b)) <= end-at
}

// addr is where b's bytes start: only compared, never dereferenced.
func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// regionID names p's region in a message: a pooled region's id, or 0.
func (p *payload) regionID() uint64 {
	if p.pooled == nil {
		return 0
	}
	return p.pooled.id
}

// put writes one tensor's bytes (its buffers, in order).
func (p *payload) put(e *wire.Encoder, bufs ...[]byte) {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	if p.region == nil {
		e.Uint(uint64(n))
		for _, b := range bufs {
			e.Raw(b)
		}
		return
	}
	if p.inPlace { // one buffer, in the region (inPlacePayload)
		off := 0
		if n > 0 {
			off = int(addr(bufs[0]) - addr(p.region.Bytes()))
		}
		e.Uint(uint64(off))
		e.Uint(uint64(n))
		return
	}
	e.Uint(uint64(p.off))
	e.Uint(uint64(n))
	for _, b := range bufs {
		p.off += copy(p.region.Bytes()[p.off:], b)
	}
}

// files returns the descriptors to send beside the message, freezing the
// region first (wire.Shared.Freeze: this side's mapping goes, and no one
// writes the region again), which lets the receiver hand its bytes on
// without a copy.
func (p *payload) files() ([]int, error) {
	if p.region == nil {
		return nil, nil
	}
	if p.pooled != nil { // not frozen: the server writes it again
		if p.known {
			return nil, nil
		}
		return []int{p.region.Fd()}, nil
	}
	if err := p.region.Freeze(); err != nil {
		return nil, err
	}
	return []int{p.region.Fd()}, nil
}

// close closes this side's region, once sent.
func (p *payload) close() {
	if p.region != nil && p.pooled == nil { // the pool's stay
		_ = p.region.Close()
	}
}

// source reads the tensor bytes of a message being decoded.
type source struct {
	region []byte // nil: inline
}

// get returns one tensor's bytes: a slice of the message (inline) or of
// the region, checked against either's end.
func (s *source) get(d *wire.Decoder) []byte {
	if s.region == nil {
		return d.Blob(maxMessageBytes)
	}
	off, n := d.Uint(), d.Uint()
	if d.Err() != nil {
		return nil
	}
	if off > uint64(len(s.region)) || n > uint64(len(s.region))-off {
		d.Fail("tensor bytes %d+%d past the region's %d", off, n, len(s.region))
		return nil
	}
	return s.region[off : off+n : off+n]
}

// maxMessageBytes bounds a tensor inline in a message.
const maxMessageBytes = wire.MaxMessage

// errorFields encodes an error's code and message (code 0 and "" for none).
func encodeError(e *wire.Encoder, err error) {
	if err == nil {
		e.Uint(0)
		return
	}
	e.Uint(uint64(core.CodeOf(err)) + 1)
	e.String(err.Error())
}

// decodeError reads what encodeError wrote.
func decodeError(d *wire.Decoder) error {
	code := d.Uint()
	if code == 0 || d.Err() != nil {
		return nil
	}
	msg := d.String(maxMessage)
	if code-1 > math.MaxInt32 {
		d.Fail("error code %d", code)
		return nil
	}
	return core.Errorf(core.Code(code-1), "%s", msg)
}

func encodeShape(e *wire.Encoder, shape []int64) {
	e.Uint(uint64(len(shape)))
	for _, v := range shape {
		e.Int(v)
	}
}

func decodeShape(d *wire.Decoder) []int64 {
	shape, _ := decodeShapeInto(d, nil)
	return shape
}

// decodeShapeInto reads a shape into the room left in spare when it fits
// (else into a slice of its own), returning it and what is left of spare.
func decodeShapeInto(d *wire.Decoder, spare []int64) (shape, rest []int64) {
	n := d.Count(maxDims)
	if n <= cap(spare)-len(spare) {
		shape = spare[len(spare) : len(spare)+n : len(spare)+n]
		spare = spare[:len(spare)+n]
	} else {
		shape = make([]int64, n)
	}
	for i := range shape {
		shape[i] = d.Int()
	}
	return shape, spare
}

func encodeParams(e *wire.Encoder, ps []core.Parameter) {
	e.Uint(uint64(len(ps)))
	for _, p := range ps {
		e.String(p.Name)
		e.Uint(uint64(p.Type))
		switch p.Type {
		case core.ParamString:
			e.String(p.String)
		case core.ParamInt:
			e.Int(p.Int)
		case core.ParamBool:
			e.Bool(p.Bool)
		case core.ParamDouble:
			e.Float(p.Double)
		case core.ParamBytes:
			e.Blob(p.Bytes)
		}
	}
}

func decodeParams(d *wire.Decoder) []core.Parameter { return decodeParamsInto(d, nil, nil) }

// decodeParamsInto is decodeParams into room when they fit there, with
// their names and short string values from strs.
func decodeParamsInto(d *wire.Decoder, room []core.Parameter, strs internTable) []core.Parameter {
	n := d.Count(maxParams)
	if n == 0 {
		return nil
	}
	var ps []core.Parameter
	if n <= len(room) {
		ps = room[:n:n]
	} else {
		ps = make([]core.Parameter, n)
	}
	for i := range ps {
		p := &ps[i]
		p.Name = strs.get(d.Blob(maxName))
		p.Type = core.ParameterType(d.Uint())
		switch p.Type {
		case core.ParamString:
			p.String = strs.get(d.Blob(maxMessageBytes))
		case core.ParamInt:
			p.Int = d.Int()
		case core.ParamBool:
			p.Bool = d.Bool()
		case core.ParamDouble:
			p.Double = d.Float()
		case core.ParamBytes:
			p.Bytes = append([]byte(nil), d.Blob(maxMessageBytes)...)
		default:
			d.Fail("parameter %q of type %d", p.Name, p.Type)
		}
	}
	return ps
}

// header starts a message: its kind, and whether a region comes with it.
func header(e *wire.Encoder, kind byte, p *payload) {
	e.Reset()
	e.Uint(uint64(kind))
	e.Bool(p != nil && p.region != nil)
}

// readHeader reads a message's kind and whether it brings a region.
func readHeader(d *wire.Decoder) (kind byte, region bool) {
	k := d.Uint()
	region = d.Bool()
	if k > math.MaxUint8 {
		d.Fail("message kind %d", k)
	}
	return byte(k), region
}

// errMalformed wraps what a message from a worker got wrong.
func errMalformed(kind byte, err error) error {
	return fmt.Errorf("message %d from the worker: %w", kind, err)
}

// loadMsg asks a worker to load its model version.
type loadMsg struct {
	Name                 string
	Version              int64
	Dir                  string // the model's directory
	Config               []byte // its configuration in JSON, pinned to Version
	BackendDir           string
	BackendConfig        map[string]map[string]string
	DisableAutoComplete  bool
	MinComputeCapability float64
	GPUs                 []int
	LogVerbose           int
	MaxTensorBytes       int64
	CallTimeoutMs        int64
	// What bounds the backend's own requests (abi.HostOptions).
	InProcessMaxTensorBytes int64
	InProcessMaxPending     int
	InProcessStallTimeoutMs int64
	// HostPolicies are the server's host policies (--host-policy), which
	// the worker's instances run under as in process.
	HostPolicies map[string]core.HostPolicy
	// PipelineDepth is how many batches of one instance the server may
	// send before the first returns (Options.PipelineDepth, the most a
	// pipelining model's isolatedModel.depth is), 1 to MaxPipelineDepth:
	// the worker keeps room for them.
	PipelineDepth int
	// The CUDA driver library the server opened GPUs with
	// (--cuda-driver-library), and its memory pools' sizes: a worker whose
	// model has GPU instances opens the GPUs with them (devicesFor).
	CUDADriver      string
	CUDAPoolBytes   map[int]uint64
	PinnedPoolBytes uint64
}

func (m *loadMsg) encode(e *wire.Encoder) {
	header(e, msgLoad, nil)
	e.String(m.Name)
	e.Int(m.Version)
	e.String(m.Dir)
	e.Blob(m.Config)
	e.String(m.BackendDir)
	e.Uint(uint64(len(m.BackendConfig)))
	for backend, settings := range m.BackendConfig {
		e.String(backend)
		e.Uint(uint64(len(settings)))
		for k, v := range settings {
			e.String(k)
			e.String(v)
		}
	}
	e.Bool(m.DisableAutoComplete)
	e.Float(m.MinComputeCapability)
	e.Uint(uint64(len(m.GPUs)))
	for _, g := range m.GPUs {
		e.Int(int64(g))
	}
	e.Int(int64(m.LogVerbose))
	e.Int(m.MaxTensorBytes)
	e.Int(m.CallTimeoutMs)
	e.Int(m.InProcessMaxTensorBytes)
	e.Int(int64(m.InProcessMaxPending))
	e.Int(m.InProcessStallTimeoutMs)
	e.Uint(uint64(len(m.HostPolicies)))
	for name, p := range m.HostPolicies {
		e.String(name)
		e.Uint(uint64(len(p.CPUs)))
		for _, cpu := range p.CPUs {
			e.Int(int64(cpu))
		}
		e.Bool(p.NUMANode != nil)
		if p.NUMANode != nil {
			e.Int(int64(*p.NUMANode))
		}
		e.Uint(uint64(len(p.Settings)))
		for k, v := range p.Settings {
			e.String(k)
			e.String(v)
		}
	}
	e.Int(int64(m.PipelineDepth))
	e.String(m.CUDADriver)
	e.Uint(uint64(len(m.CUDAPoolBytes)))
	for id, n := range m.CUDAPoolBytes {
		e.Int(int64(id))
		e.Uint(n)
	}
	e.Uint(m.PinnedPoolBytes)
}

func (m *loadMsg) decode(d *wire.Decoder) {
	m.Name = d.String(maxName)
	m.Version = d.Int()
	m.Dir = d.String(maxName)
	m.Config = append([]byte(nil), d.Blob(maxMessageBytes)...)
	m.BackendDir = d.String(maxName)
	m.BackendConfig = map[string]map[string]string{}
	for range d.Count(maxParams) {
		backend := d.String(maxName)
		settings := map[string]string{}
		for range d.Count(maxParams) {
			k := d.String(maxName)
			settings[k] = d.String(maxName)
		}
		m.BackendConfig[backend] = settings
	}
	m.DisableAutoComplete = d.Bool()
	m.MinComputeCapability = d.Float()
	for range d.Count(maxParams) {
		m.GPUs = append(m.GPUs, int(d.Int()))
	}
	m.LogVerbose = int(d.Int())
	m.MaxTensorBytes = d.Int()
	m.CallTimeoutMs = d.Int()
	m.InProcessMaxTensorBytes = d.Int()
	m.InProcessMaxPending = int(d.Int())
	m.InProcessStallTimeoutMs = d.Int()
	for range d.Count(maxParams) {
		name := d.String(maxName)
		var p core.HostPolicy
		for range d.Count(maxParams) {
			p.CPUs = append(p.CPUs, int(d.Int()))
		}
		if d.Bool() {
			node := int(d.Int())
			p.NUMANode = &node
		}
		p.Settings = map[string]string{}
		for range d.Count(maxParams) {
			k := d.String(maxName)
			p.Settings[k] = d.String(maxName)
		}
		if m.HostPolicies == nil {
			m.HostPolicies = map[string]core.HostPolicy{}
		}
		m.HostPolicies[name] = p
	}
	m.PipelineDepth = int(min(max(d.Int(), 1), MaxPipelineDepth))
	m.CUDADriver = d.String(maxName)
	for range d.Count(maxParams) {
		id := int(d.Int())
		if m.CUDAPoolBytes == nil {
			m.CUDAPoolBytes = map[int]uint64{}
		}
		m.CUDAPoolBytes[id] = d.Uint()
	}
	m.PinnedPoolBytes = d.Uint()
}

// loadedMsg is a worker's answer to loadMsg.
type loadedMsg struct {
	Err            error
	Config         []byte   // the configuration as the backend completed it (JSON)
	Instances      []string // the version's instances, in order
	DeviceBlocking bool
	Parallel       bool // the backend loads instances in parallel
}

func (m *loadedMsg) encode(e *wire.Encoder) {
	header(e, msgLoaded, nil)
	encodeError(e, m.Err)
	e.Blob(m.Config)
	e.Uint(uint64(len(m.Instances)))
	for _, n := range m.Instances {
		e.String(n)
	}
	e.Bool(m.DeviceBlocking)
	e.Bool(m.Parallel)
}

func (m *loadedMsg) decode(d *wire.Decoder) {
	m.Err = decodeError(d)
	m.Config = append([]byte(nil), d.Blob(maxMessageBytes)...)
	for range d.Count(maxTensors) {
		m.Instances = append(m.Instances, d.String(maxName))
	}
	m.DeviceBlocking = d.Bool()
	m.Parallel = d.Bool()
}

// encodeExecute encodes a batch for instance inst: each request under its
// key, with what the backend sees of it. Large inputs go in a region of
// pool when one is free or can be made (nil pool: never), which the
// caller gives back (regionPool.lent or unsent); forget lists the pool's
// regions the worker is to unmap first (msgForget).
func encodeExecute(e *wire.Encoder, inst int, keys []uint64, batch []*core.Request, pool *regionPool) (p *payload, forget []uint64, err error) {
	if p = inPlacePayload(batch, pool); p == nil {
		total := 0
		for _, r := range batch {
			for _, in := range r.Inputs() {
				total += int(in.ByteSize())
			}
		}
		if p, forget, err = pooledPayload(total, pool); err != nil {
			return nil, forget, err
		}
	}
	header(e, msgExecute, p)
	if p.region != nil {
		e.Uint(p.regionID())
	}
	e.Uint(uint64(inst))
	e.Uint(uint64(len(batch)))
	for i, r := range batch {
		e.Uint(keys[i])
		e.String(r.ID())
		id := r.CorrelationID()
		e.Bool(id.IsString)
		e.Uint(id.Uint)
		e.String(id.String)
		e.Uint(uint64(r.Flags()))
		e.Uint(r.Priority())
		e.Int(int64(r.Timeout()))
		e.Uint(r.BatchSize())
		e.Bool(r.Responder().FreesResponses())
		outs := r.RequestedOutputs()
		e.Uint(uint64(len(outs)))
		for _, o := range outs {
			e.String(o)
		}
		encodeParams(e, r.Parameters())
		ins := r.Inputs()
		e.Uint(uint64(len(ins)))
		for _, in := range ins {
			e.String(in.Name)
			e.Uint(uint64(in.DataType))
			encodeShape(e, in.Shape)
			p.put(e, in.Buffers...)
		}
	}
	return p, forget, nil
}

// executeReq is one request of an execute message, as a worker reads it.
type executeReq struct {
	key       uint64
	sub       core.Submission
	batchSize uint64
	held      workerReq // what the worker keeps of it (worker.forward)
	// Room for the common case, in the batch's one allocation: one input
	// of up to four dimensions, whose bytes fit in small once copied out of
	// the message (ownInputs).
	inputs [1]core.Input
	bufs   [1][]byte
	dims   [4]int64
	small  [64]byte
}

// ownInputs copies the request's input bytes out of the message they
// alias (its receive buffer, which the next message overwrites): into
// small while they fit there, else into memory of their own.
func (q *executeReq) ownInputs() {
	room := q.small[:0]
	for j := range q.sub.Inputs {
		b := &q.sub.Inputs[j].Buffers[0]
		if n := len(*b); n <= cap(room)-len(room) {
			at := len(room)
			room = append(room, *b...)
			*b = room[at : at+n : at+n]
		} else {
			*b = append([]byte(nil), *b...)
		}
	}
}

// decodeExecute reads an execute message's requests; their input bytes
// alias src. An input whose name is one of names (the model's inputs, by
// name; nil: none) shares that string rather than a copy.
func decodeExecute(d *wire.Decoder, src *source, names map[string]string) (inst int, reqs []executeReq) {
	inst = d.Count(maxTensors)
	reqs = make([]executeReq, d.Count(maxRequests))
	for i := range reqs {
		q := &reqs[i]
		q.key = d.Uint()
		q.sub.ID = d.String(maxName)
		q.sub.CorrelationID.IsString = d.Bool()
		q.sub.CorrelationID.Uint = d.Uint()
		q.sub.CorrelationID.String = d.String(maxName)
		q.sub.Flags = uint32(d.Uint())
		q.sub.Priority = d.Uint()
		q.sub.Timeout = durationOf(d.Int())
		q.batchSize = d.Uint()
		q.sub.FreesResponses = d.Bool()
		for range d.Count(maxTensors) {
			q.sub.Outputs = append(q.sub.Outputs, d.String(maxName))
		}
		q.sub.Parameters = decodeParams(d)
		if n := d.Count(maxTensors); n == 1 {
			q.sub.Inputs = q.inputs[:1:1]
		} else {
			q.sub.Inputs = make([]core.Input, n)
		}
		dims := q.dims[:0:len(q.dims)]
		for j := range q.sub.Inputs {
			in := &q.sub.Inputs[j]
			name := d.Blob(maxName)
			var ok bool
			if in.Name, ok = names[string(name)]; !ok {
				in.Name = string(name)
			}
			in.DataType = core.DataType(d.Uint())
			in.Shape, dims = decodeShapeInto(d, dims)
			if j == 0 {
				in.Buffers = q.bufs[:1:1]
				in.Buffers[0] = src.get(d)
			} else {
				in.Buffers = [][]byte{src.get(d)}
			}
		}
	}
	return inst, reqs
}

// encodeResponse encodes one response of request key: its error, or its
// outputs and parameters; nil resp is a flags-only final.
func encodeResponse(e *wire.Encoder, key uint64, resp *core.Response, final bool) (*payload, error) {
	p, _, err := encodeResponseAs(e, msgResponse, key, resp, final, nil)
	return p, err
}

// encodeResponseAs is encodeResponse for a message of the given kind (a
// response of a backend's own request: msgUpResponse).
//
// A worker's response (msgResponse) with large outputs puts them in a
// region of pool when one is free or can be made (nil pool: never), as
// encodeExecute does its inputs (the caller gives it back: lent or
// unsent); such a message names its region first, 0 for one of its own.
func encodeResponseAs(e *wire.Encoder, kind byte, key uint64, resp *core.Response, final bool, pool *regionPool) (p *payload, forget []uint64, err error) {
	total := 0
	if resp != nil {
		for _, o := range resp.Outputs {
			total += len(o.Data)
		}
	}
	if p, forget, err = pooledPayload(total, pool); err != nil {
		return nil, forget, err
	}
	header(e, kind, p)
	if kind == msgResponse && p.region != nil {
		e.Uint(p.regionID())
	}
	e.Uint(key)
	e.Bool(final)
	e.Bool(resp != nil)
	if resp == nil {
		return p, forget, nil
	}
	encodeError(e, resp.Err)
	e.Uint(uint64(len(resp.Outputs)))
	for _, o := range resp.Outputs {
		e.String(o.Name)
		e.Uint(uint64(o.DataType))
		encodeShape(e, o.Shape)
		p.put(e, o.Data)
	}
	encodeParams(e, resp.Parameters)
	return p, forget, nil
}

// decodedResponse is a response as decodeResponse reads it, in one
// allocation with room for the common case: one output of up to four
// dimensions, whose bytes, once copied out of the message (copyOutputs),
// fit in small, and up to four parameters.
type decodedResponse struct {
	core.Response
	outs   [1]core.Output
	dims   [4]int64
	small  [32]byte
	params [4]core.Parameter
}

// decodeResponse reads a response message; its outputs' bytes alias src.
// An output whose name is one of names (the model's outputs, by name;
// nil: none) shares that string rather than a copy, and so do parameter
// names and values strs holds (nil: none). resp is nil for a
// message without a response (a final flag alone).
func decodeResponse(d *wire.Decoder, src *source, names map[string]string, strs internTable) (key uint64, dr *decodedResponse, final bool) {
	key = d.Uint()
	final = d.Bool()
	if !d.Bool() {
		return key, nil, final
	}
	dr = &decodedResponse{}
	dr.Err = decodeError(d)
	n := d.Count(maxTensors)
	switch {
	case n == 1:
		dr.Outputs = dr.outs[:]
	case n > 1:
		dr.Outputs = make([]core.Output, n)
	}
	dims := dr.dims[:0:len(dr.dims)]
	for i := range dr.Outputs {
		o := &dr.Outputs[i]
		name := d.Blob(maxName)
		var ok bool
		if o.Name, ok = names[string(name)]; !ok {
			o.Name = string(name)
		}
		o.DataType = core.DataType(d.Uint())
		o.Shape, dims = decodeShapeInto(d, dims)
		o.Data = src.get(d)
	}
	dr.Parameters = decodeParamsInto(d, dr.params[:], strs)
	return key, dr, final
}

// timesMsg carries a statistics report: the request's key (stats,
// response stats), the instance's index, and its times.
type timesMsg struct {
	Key      uint64
	Instance int
	Success  bool
	Size     uint64 // a batch's size
	Outcome  core.ResponseOutcome
	Times    [4]uint64
}

func (m *timesMsg) encode(e *wire.Encoder, kind byte) {
	header(e, kind, nil)
	e.Uint(m.Key)
	e.Uint(uint64(m.Instance))
	e.Bool(m.Success)
	e.Uint(m.Size)
	e.Uint(uint64(m.Outcome))
	for _, t := range m.Times {
		e.Uint(t)
	}
}

func (m *timesMsg) decode(d *wire.Decoder) {
	m.Key = d.Uint()
	m.Instance = d.Count(maxTensors)
	m.Success = d.Bool()
	m.Size = d.Uint()
	outcome := d.Uint()
	if outcome > uint64(core.ResponseCancelled) {
		d.Fail("response outcome %d", outcome)
	}
	m.Outcome = core.ResponseOutcome(outcome)
	for i := range m.Times {
		m.Times[i] = d.Uint()
	}
}

// encodeKey encodes a message that names one request and a number (the
// flags of a release; nothing for cancel and finished).
// encoders keeps the encoders of the messages sent per request and per
// response for reuse: a wire.Conn copies a message as it is sent, so its
// encoder is free again once the send returned. One whose buffer grew
// past maxKeptEncoder is dropped.
var encoders = sync.Pool{New: func() any { return wire.NewEncoder(make([]byte, 0, 256)) }}

const maxKeptEncoder = 4 << 10

// getEncoder returns an encoder from encoders; putEncoder gives it back,
// once its message was sent.
func getEncoder() *wire.Encoder { return encoders.Get().(*wire.Encoder) }

func putEncoder(e *wire.Encoder) {
	if cap(e.Bytes()) <= maxKeptEncoder {
		e.Reset()
		encoders.Put(e)
	}
}

func encodeKey(e *wire.Encoder, kind byte, key, n uint64) {
	header(e, kind, nil)
	e.Uint(key)
	e.Uint(n)
}

// encodeState encodes a state update of request key.
func encodeState(e *wire.Encoder, key uint64, name string, dtype core.DataType, shape []int64, data []byte) (*payload, error) {
	p, err := newPayload(len(data))
	if err != nil {
		return nil, err
	}
	header(e, msgState, p)
	e.Uint(key)
	e.String(name)
	e.Uint(uint64(dtype))
	encodeShape(e, shape)
	p.put(e, data)
	return p, nil
}

// encodeExecuted reports that an execution on instance inst returned,
// with its error.
func encodeExecuted(e *wire.Encoder, inst int, err error) {
	header(e, msgExecuted, nil)
	e.Uint(uint64(inst))
	encodeError(e, err)
}

// durationOf reads a duration sent as nanoseconds, refusing none.
func durationOf(ns int64) time.Duration {
	if ns < 0 {
		return 0
	}
	return time.Duration(ns)
}
