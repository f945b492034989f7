package grpcserver

import (
	"slices"

	"github.com/tritonhost/tritonhost/core"
)

// A decoupled model's responses to one request usually differ only in
// their outputs' contents: square's k responses carry the same header,
// the same final flag and one output of the same name, datatype, shape
// and size. The bytes of such a message before its first
// raw_output_contents are then the same every time; a request's
// streamPrefix keeps them, taken from its second response, and the
// responses after it that match copy them instead of encoding them again.
// A request's first response is encoded in full (most requests have no
// second one), and a response that does not match is too.

// maxPrefixOutputs is the most outputs a response may have for its
// message to come from a prefix.
const maxPrefixOutputs = 4

// streamPrefix is the start of the messages of a request's responses
// like the one it was taken from. Immutable once made.
type streamPrefix struct {
	fin     final
	outputs []prefixOutput
	bytes   []byte // the message before its first raw_output_contents
	total   int    // the whole message: bytes and the raw_output_contents fields
}

// prefixOutput is what one output of a matching response has.
type prefixOutput struct {
	name     string
	datatype core.DataType
	shape    []int64
	size     int // bytes of its contents
}

// noPrefix is the prefix of a request whose message could not give one
// (it does not fit one arena segment): it matches nothing, and no other
// is made.
var noPrefix = &streamPrefix{}

// prefixable reports whether r's message may start with a prefix: it has
// outputs (at most maxPrefixOutputs), every one copied into the message,
// and no parameters and no error.
func prefixable(r *core.Response) bool {
	if r == nil || r.Err != nil || len(r.Parameters) > 0 || len(r.Outputs) == 0 || len(r.Outputs) > maxPrefixOutputs {
		return false
	}
	for i := range r.Outputs {
		if len(r.Outputs[i].Data) > inlineOutputBytes {
			return false
		}
	}
	return true
}

// matches reports whether r's message, with final flag fin, starts with
// p's bytes. r must be prefixable.
func (p *streamPrefix) matches(r *core.Response, fin final) bool {
	if p.fin != fin || len(r.Outputs) != len(p.outputs) {
		return false
	}
	for i := range r.Outputs {
		o, want := &r.Outputs[i], &p.outputs[i]
		if len(o.Data) != want.size || o.DataType != want.datatype || o.Name != want.name || !slices.Equal(o.Shape, want.shape) {
			return false
		}
	}
	return true
}

// describe returns a prefix without bytes for messages like r's, with
// final flag fin: what matches checks, copied, since r's memory may be
// lent and go with it.
func describe(r *core.Response, fin final) *streamPrefix {
	p := &streamPrefix{fin: fin, outputs: make([]prefixOutput, len(r.Outputs))}
	for i := range r.Outputs {
		o := &r.Outputs[i]
		p.outputs[i] = prefixOutput{name: o.Name, datatype: o.DataType, shape: slices.Clone(o.Shape), size: len(o.Data)}
	}
	return p
}

// withBytesOf completes p with the start of m, the message encoded for
// the response p describes; noPrefix when m is not one arena segment.
func (p *streamPrefix) withBytesOf(m *encodedMessage) *streamPrefix {
	if len(m.bufs) != 1 {
		return noPrefix
	}
	if _, ok := m.bufs[0].(*arenaSegment); !ok {
		return noPrefix
	}
	b := m.bufs[0].ReadOnlyData()
	contents := 0
	for _, o := range p.outputs {
		contents += lenSize(fRespRawOutput, o.size)
	}
	if contents > len(b) {
		return noPrefix
	}
	p.bytes, p.total = slices.Clone(b[:len(b)-contents]), len(b)
	return p
}

// encode returns the message of r, which p matches, in arena a: p's bytes
// and r's contents. It takes r's lent memory as encodeIn does.
func (p *streamPrefix) encode(a *streamArena, r *core.Response) *encodedMessage {
	seg := a.segment(p.total, int64(p.total+messageHeaderBytes))
	buf := append(seg.data[:0:p.total], p.bytes...)
	seg.msg.withContents(buf, r, r.Outputs, 0, nil, seg)
	return &seg.msg
}

// encodeStreamed encodes r, a response to sr with final flag fin, in the
// stream's arena: from sr's prefix when it matches, else in full (see
// the top of this file).
func (st *inferStream) encodeStreamed(sr *streamRequest, r *core.Response, fin final) *encodedMessage {
	if !prefixable(r) {
		return encodeIn(&st.arena, sr.header, r, fin, true, "")
	}
	if p := sr.prefix.Load(); p != nil {
		if p.matches(r, fin) {
			return p.encode(&st.arena, r)
		}
		return encodeIn(&st.arena, sr.header, r, fin, true, "")
	}
	if sr.unprefixed.Add(1) < 2 {
		return encodeIn(&st.arena, sr.header, r, fin, true, "")
	}
	p := describe(r, fin)
	m := encodeIn(&st.arena, sr.header, r, fin, true, "")
	sr.prefix.CompareAndSwap(nil, p.withBytesOf(m))
	return m
}
