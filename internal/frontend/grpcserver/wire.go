package grpcserver

import (
	"math"
	"strconv"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// Responses are the hot path of the server: a decoupled model may send
// hundreds of thousands per second on one stream. Rather than building
// ModelInferResponse structs and letting protobuf size and marshal them on
// the stream's single sending goroutine, a response is encoded straight to
// wire bytes by whichever goroutine or backend thread produced it, and the
// codec passes those bytes through. The encoding is exactly protobuf's (a
// test decodes it with proto.Unmarshal and compares).

// Field numbers of the messages encoded here (grpc_service.proto).
const (
	fStreamErrorMessage  = 1 // ModelStreamInferResponse.error_message
	fStreamInferResponse = 2 // ModelStreamInferResponse.infer_response
	fRespModelName       = 1 // ModelInferResponse.model_name
	fRespModelVersion    = 2 // ModelInferResponse.model_version
	fRespID              = 3 // ModelInferResponse.id
	fRespParameters      = 4 // ModelInferResponse.parameters (map)
	fRespOutputs         = 5 // ModelInferResponse.outputs
	fRespRawOutput       = 6 // ModelInferResponse.raw_output_contents
	fTensorName          = 1 // InferOutputTensor.name
	fTensorDatatype      = 2 // InferOutputTensor.datatype
	fTensorShape         = 3 // InferOutputTensor.shape (packed)
	fMapKey              = 1
	fMapValue            = 2
	fParamBool           = 1 // InferParameter.bool_param
	fParamInt64          = 2 // InferParameter.int64_param
	fParamString         = 3 // InferParameter.string_param
	fParamDouble         = 4 // InferParameter.double_param
)

// inlineOutputBytes: output contents up to this size are copied into the
// message; larger ones are referenced where they are (for lent memory, see
// loan.go).
const inlineOutputBytes = 4096

// encodedMessage is a message already in wire form: the codec sends its
// buffers as they are. A stream's messages live in its arena (arena.go),
// which tracks them until gRPC has written them (tracked); others are
// standaloneMessages.
type encodedMessage struct {
	bufs    mem.BufferSlice
	head    mem.SliceBuffer
	parts   [2]mem.Buffer
	tracked bool // its last buffer is an arena segment's: the arena counts it in flight until gRPC has written it
	// pooled, when not nil, is the pooledMessage the message is part of.
	pooled *pooledMessage
}

// standaloneMessage is a message with memory of its own (one allocation
// for a small message): a unary response.
type standaloneMessage struct {
	encodedMessage
	small [192]byte
}

// pooledMessage is a unary response of one buffer above gRPC's pooling
// threshold, which gRPC counts references to: the buffer's memory comes
// from gRPC's default pool and the message from pooledMessages, and both
// go back once gRPC has written the message (or free was called, for one
// never sent). The message is the buffer's mem.BufferPool.
type pooledMessage struct {
	encodedMessage
	data *[]byte // the buffer's memory; mem.NewBuffer keeps this pointer
	done atomic.Bool
}

var pooledMessages = sync.Pool{New: func() any { return new(pooledMessage) }}

// newPooledMessage returns a message with room for n bytes.
func newPooledMessage(n int) *pooledMessage {
	p := pooledMessages.Get().(*pooledMessage)
	p.done.Store(false)
	p.pooled = p
	p.data = mem.DefaultBufferPool().Get(n)
	return p
}

// buffer makes buf, which must lie in the message's memory, the message's
// only buffer.
func (p *pooledMessage) buffer(buf []byte) {
	*p.data = buf
	p.parts[0] = mem.NewBuffer(p.data, p)
	p.bufs = p.parts[:1]
}

// Get is never called: gRPC takes buffers from a pool only to copy into
// them, and a message's buffers are never copied into. It allocates, as a
// pool must.
func (p *pooledMessage) Get(length int) *[]byte {
	b := make([]byte, length)
	return &b
}

// Put hands the message back: gRPC is done with its buffer (or the message
// was freed unsent).
func (p *pooledMessage) Put(b *[]byte) {
	if p.done.Swap(true) {
		return
	}
	mem.DefaultBufferPool().Put(b)
	p.encodedMessage = encodedMessage{}
	p.data = nil
	pooledMessages.Put(p)
}

// single makes buf the message's only buffer.
func (m *encodedMessage) single(buf []byte) *encodedMessage {
	m.head = buf
	m.parts[0] = &m.head
	m.bufs = m.parts[:1]
	return m
}

// free returns what a message that is never sent holds (the lent memory it
// refers to). gRPC frees the message it sends: free is only for the others.
func (m *encodedMessage) free() {
	if m != nil {
		m.bufs.Free()
	}
}

// wireCodec is the server's codec: protobuf, except that encodedMessage
// values pass through, inference requests are checked against the
// server's limits before they are decoded (inbound.go), and the maps of
// the requests that carry parameters or settings are counted before they
// are decoded (bounded.go). It keeps the name "proto", so clients see no
// difference.
type wireCodec struct {
	proto encoding.CodecV2
	lim   requestLimits
}

func newWireCodec(lim requestLimits) wireCodec {
	return wireCodec{proto: encoding.GetCodecV2(proto.Name), lim: lim}
}

func (c wireCodec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(*encodedMessage); ok {
		return m.bufs, nil
	}
	return c.proto.Marshal(v)
}

func (c wireCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if bm, ok := boundedMapOf(v); ok { // a request whose map is counted first (bounded.go)
		return decodeBounded(data.Materialize(), v, bm)
	}
	in, ok := v.(*inboundRequest)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	// One copy of the message, the request's own (its model's buffer, when
	// it offers one): its tensor data is used where it lies (see
	// inboundRequest), so it must not go back to a pool.
	return decodeInbound(receiveInto(data, in), in, c.lim)
}

func (wireCodec) Name() string { return proto.Name }

// final says whether and how a response carries triton_final_response.
type final int

const (
	noFinalParam final = iota // unary responses: no parameter
	notFinal                  // triton_final_response = false
	isFinal                   // triton_final_response = true
)

// responseHeader is what every encoded response starts with.
type responseHeader struct {
	model, version, id string
	// fields is model, version and id encoded (fields 1 to 3), when
	// withFields made them once for every response of a request.
	fields []byte
}

// withFields returns h with its fields encoded, for a request whose
// responses all share them.
func (h responseHeader) withFields() responseHeader {
	h.fields = h.appendFields(make([]byte, 0, h.fieldsSize()))
	return h
}

func (h *responseHeader) fieldsSize() int {
	if h.fields != nil {
		return len(h.fields)
	}
	return strSize(fRespModelName, h.model) + strSize(fRespModelVersion, h.version) + strSize(fRespID, h.id)
}

func (h *responseHeader) appendFields(b []byte) []byte {
	if h.fields != nil {
		return append(b, h.fields...)
	}
	b = appendStr(b, fRespModelName, h.model)
	b = appendStr(b, fRespModelVersion, h.version)
	return appendStr(b, fRespID, h.id)
}

// finalEntries are the parameters map entry triton_final_response, false
// and true, encoded once: every streamed response carries one.
var finalEntries = [2][]byte{
	appendParamEntry(nil, protocol.ParamFinalResponse, core.BoolParam("", false)),
	appendParamEntry(nil, protocol.ParamFinalResponse, core.BoolParam("", true)),
}

// encodeResponse encodes a ModelInferResponse, or, when streamed, a
// ModelStreamInferResponse around it (with errMsg as error_message when not
// empty), as a standaloneMessage. r may be nil for a response without
// outputs.
//
// Output contents up to inlineOutputBytes are copied into the message;
// larger ones are referenced where they are. encodeResponse takes r's lent
// memory (core.Response.Lent): when the message refers to none of it, it
// is freed before encodeResponse returns; otherwise the message holds it
// until gRPC has written it (loan.go), or until free for a message that is
// never sent.
func encodeResponse(h responseHeader, r *core.Response, fin final, streamed bool, errMsg string) *encodedMessage {
	return encodeIn(nil, h, r, fin, streamed, errMsg)
}

// encodeIn is encodeResponse into a stream's arena (nil: a
// standaloneMessage). A message of the arena is tracked: its own bytes are
// a segment of the arena when they fit one (nothing is allocated),
// otherwise a marker segment ends it.
func encodeIn(a *streamArena, h responseHeader, r *core.Response, fin final, streamed bool, errMsg string) *encodedMessage {
	var params []core.Parameter
	var outputs []core.Output
	if r != nil {
		params, outputs = r.Parameters, r.Outputs
	}
	lent := r != nil && r.Lent != nil
	referenced := func(data []byte) bool {
		return len(data) > inlineOutputBytes && (!lent || lendsBuffer(len(data)))
	}
	// Sizes first, so each buffer is allocated once.
	inner := h.fieldsSize()
	for _, p := range params {
		inner += lenSize(fRespParameters, paramEntrySize(p.Name, p))
	}
	var finalEntry []byte
	switch fin {
	case isFinal:
		finalEntry = finalEntries[1]
	case notFinal:
		finalEntry = finalEntries[0]
	}
	inner += len(finalEntry)
	large, referencedBytes := 0, 0
	for i := range outputs {
		inner += lenSize(fRespOutputs, tensorSize(&outputs[i]))
		inner += lenSize(fRespRawOutput, len(outputs[i].Data))
		if referenced(outputs[i].Data) {
			large++
			referencedBytes += len(outputs[i].Data)
		}
	}
	total := inner
	if streamed {
		total = strSize(fStreamErrorMessage, errMsg) + lenSize(fStreamInferResponse, inner)
	}

	// The message's own bytes: everything but the contents it refers to.
	own := total - referencedBytes
	var m *encodedMessage
	var buf []byte
	var seg *arenaSegment
	switch weight := int64(total + messageHeaderBytes); {
	case a != nil && large == 0 && own <= arenaMaxMessageBytes:
		seg = a.segment(own, weight)
		m, buf = &seg.msg, seg.data[:0:own]
	case a != nil:
		seg = a.segment(0, weight) // marks the end of the message
		m, buf = &seg.msg, make([]byte, 0, own)
	case large == 0 && !mem.IsBelowBufferPoolingThreshold(own):
		p := newPooledMessage(own)
		m, buf = &p.encodedMessage, (*p.data)[:0]
	default:
		sm := &standaloneMessage{}
		m, buf = &sm.encodedMessage, sm.small[:0]
		if own > len(sm.small) {
			buf = make([]byte, 0, own)
		}
	}
	if streamed {
		buf = appendStr(buf, fStreamErrorMessage, errMsg)
		buf = protowire.AppendTag(buf, fStreamInferResponse, protowire.BytesType)
		buf = protowire.AppendVarint(buf, uint64(inner))
	}
	buf = h.appendFields(buf)
	for _, p := range params {
		buf = appendParamEntry(buf, p.Name, p)
	}
	buf = append(buf, finalEntry...)
	for i := range outputs {
		buf = appendTensor(buf, &outputs[i])
	}
	m.withContents(buf, r, outputs, large, referenced, seg)
	return m
}

// withContents appends the outputs' contents (raw_output_contents) to buf,
// the message so far, and makes the message of it: one buffer when every
// output is copied, else buffers of the message's own bytes around the
// large outputs, referenced where they are. It takes r's lent memory (see
// encodeResponse). seg, if not nil, is the message's arena segment: it
// holds buf's bytes when buf is its memory, else it ends the message.
func (m *encodedMessage) withContents(buf []byte, r *core.Response, outputs []core.Output, large int, referenced func([]byte) bool, seg *arenaSegment) {
	m.tracked = seg != nil
	if large == 0 {
		for i := range outputs {
			buf = protowire.AppendTag(buf, fRespRawOutput, protowire.BytesType)
			buf = protowire.AppendBytes(buf, outputs[i].Data)
		}
		r.Free() // nothing of it is referenced
		switch {
		case seg == nil && m.pooled != nil:
			m.pooled.buffer(buf)
		case seg == nil:
			m.single(buf)
		case len(buf) == len(seg.data) && (len(buf) == 0 || &buf[0] == &seg.data[0]): // buf is the segment's memory
			m.parts[0] = seg.buffer(len(buf))
			m.bufs = m.parts[:1]
		default: // the segment only marks the end
			m.head = buf
			m.parts[0], m.parts[1] = &m.head, seg.buffer(0)
			m.bufs = m.parts[:2]
		}
		return
	}
	var loan *wireLoan
	if r.Lent != nil {
		loan = newWireLoan(r, large)
	}
	bufs := make(mem.BufferSlice, 0, 2*large+2)
	for i := range outputs {
		data := outputs[i].Data
		buf = protowire.AppendTag(buf, fRespRawOutput, protowire.BytesType)
		if !referenced(data) {
			buf = protowire.AppendBytes(buf, data)
			continue
		}
		buf = protowire.AppendVarint(buf, uint64(len(data)))
		if loan != nil {
			bufs = append(bufs, mem.SliceBuffer(buf), loan.buffer(data))
		} else {
			bufs = append(bufs, mem.SliceBuffer(buf), mem.SliceBuffer(data))
		}
		buf = buf[len(buf):]
	}
	if len(buf) > 0 {
		bufs = append(bufs, mem.SliceBuffer(buf))
	}
	if seg != nil {
		bufs = append(bufs, seg.buffer(0))
	}
	m.bufs = bufs
}

func strSize(num protowire.Number, s string) int {
	if s == "" {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(len(s))
}

func appendStr(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// lenSize is the size of a length-delimited field of n bytes (always
// present: repeated elements and map entries are written even when empty).
func lenSize(num protowire.Number, n int) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}

func paramValueSize(p core.Parameter) int {
	switch p.Type {
	case core.ParamBool:
		return protowire.SizeTag(fParamBool) + 1
	case core.ParamInt:
		return protowire.SizeTag(fParamInt64) + protowire.SizeVarint(uint64(p.Int))
	case core.ParamDouble:
		return protowire.SizeTag(fParamDouble) + 8
	case core.ParamBytes:
		return lenSize(fParamString, len(p.Bytes))
	}
	return lenSize(fParamString, len(p.String))
}

func paramEntrySize(key string, p core.Parameter) int {
	return strSize(fMapKey, key) + lenSize(fMapValue, paramValueSize(p))
}

func appendParamEntry(b []byte, key string, p core.Parameter) []byte {
	valueSize := paramValueSize(p)
	b = protowire.AppendTag(b, fRespParameters, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(strSize(fMapKey, key)+lenSize(fMapValue, valueSize)))
	b = appendStr(b, fMapKey, key)
	b = protowire.AppendTag(b, fMapValue, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(valueSize))
	switch p.Type {
	case core.ParamBool:
		b = protowire.AppendTag(b, fParamBool, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeBool(p.Bool))
	case core.ParamInt:
		b = protowire.AppendTag(b, fParamInt64, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(p.Int))
	case core.ParamDouble:
		b = protowire.AppendTag(b, fParamDouble, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(p.Double))
	case core.ParamBytes:
		b = protowire.AppendTag(b, fParamString, protowire.BytesType)
		b = protowire.AppendBytes(b, p.Bytes)
	default:
		b = protowire.AppendTag(b, fParamString, protowire.BytesType)
		b = protowire.AppendString(b, p.String)
	}
	return b
}

func shapeSize(shape []int64) int {
	n := 0
	for _, d := range shape {
		n += protowire.SizeVarint(uint64(d))
	}
	return n
}

func tensorSize(o *core.Output) int {
	return tensorSizeWith(o, shapeSize(o.Shape))
}

// tensorSizeWith is tensorSize with the shape's packed size known.
func tensorSizeWith(o *core.Output, shapeBytes int) int {
	n := strSize(fTensorName, o.Name) + strSize(fTensorDatatype, o.DataType.String())
	if len(o.Shape) > 0 {
		n += lenSize(fTensorShape, shapeBytes)
	}
	return n
}

func appendTensor(b []byte, o *core.Output) []byte {
	shapeBytes := shapeSize(o.Shape)
	b = protowire.AppendTag(b, fRespOutputs, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(tensorSizeWith(o, shapeBytes)))
	b = appendStr(b, fTensorName, o.Name)
	b = appendStr(b, fTensorDatatype, o.DataType.String())
	if len(o.Shape) > 0 {
		b = protowire.AppendTag(b, fTensorShape, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(shapeBytes))
		for _, d := range o.Shape {
			b = protowire.AppendVarint(b, uint64(d))
		}
	}
	return b
}

func versionString(v int64) string { return strconv.FormatInt(v, 10) }
