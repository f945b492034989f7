package grpcserver

import (
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// Decoding a protobuf message can take many times its size in memory: a
// packed uint64 of one wire byte becomes eight, an empty input tensor of
// two wire bytes a struct of a hundred. So a ModelInferRequest is checked
// on the wire, before it is decoded, against the limits below; one that
// breaks them is refused on its own (the stream goes on) and costs no more
// than its wire bytes, which gRPC has read already.

// requestLimits bound what one ModelInferRequest may ask the server to
// decode.
type requestLimits struct {
	// maxMessageBytes is the largest message handled (--grpc-max-message-size).
	maxMessageBytes int
	// maxDecodedContents bounds the memory typed contents (*_contents of
	// every input) may take once decoded.
	maxDecodedContents int
}

// inboundRequest is a ModelInferRequest as the server received it: decoded,
// or, when it broke a limit, only its header (model, version and id, for
// the answer) and why it was refused.
//
// Received off the wire (decodeInbound), its tensor data is not decoded:
// msg.RawInputContents are slices of the received message, and each
// input's typed contents stay encoded in contents until the request's
// model has been looked up and the input found to take them (see
// contentsData). The received message must therefore live as long as the
// request: it is not returned to a pool. Built by a Go caller (msg only,
// contents nil), the inputs' Contents fields are used as they are.
type inboundRequest struct {
	msg     *pb.ModelInferRequest
	refused error
	// contents holds, per input of msg, the encoded InferTensorContents
	// of the input (one slice per occurrence of the field; none when the
	// input has no contents field); nil when msg was not received.
	contents []wireContents

	// receiver, when set, offers the codec a buffer of the request's model
	// to receive a large message into (Service.receiveBuffer); buffer is
	// the one it was received into, the request's until resolve hands it
	// on to the request's memory, released with the call otherwise
	// (releaseBuffer).
	receiver *Service
	buffer   core.InputBuffer

	// The memory of a received request of one input and one raw contents
	// entry, the common case, which then takes one allocation: msg,
	// msg.RawInputContents, contents, and msg.Inputs with the input's
	// shape when it has eight dimensions at most.
	received     pb.ModelInferRequest
	rawOne       [1][]byte
	contentsOne  [1]wireContents
	inputWireOne [1][]byte
	inputOne     [1]pb.ModelInferRequest_InferInputTensor
	inputPtrOne  [1]*pb.ModelInferRequest_InferInputTensor
	shapeOne     [8]int64
	// resolved is the request ready to submit (Service.resolve).
	resolved resolved
}

// minReceiveBuffer is the smallest message the codec offers its model's
// buffer (inboundRequest.receiver): a smaller one is not worth a lookup of
// its model before it is decoded.
const minReceiveBuffer = 1 << 20

// receiveInto returns where the codec puts data, a received message of
// in: a buffer of its model's (in.buffer) when in.receiver gives one,
// else memory of its own.
func receiveInto(data mem.BufferSlice, in *inboundRequest) []byte {
	if in.receiver != nil && data.Len() >= minReceiveBuffer && len(data) > 0 {
		if model, version, ok := peekModel(data[0].ReadOnlyData()); ok {
			if b := in.receiver.receiveBuffer(model, version, data.Len()); b != nil {
				in.buffer = b
				data.CopyTo(b.Bytes())
				return b.Bytes()[:data.Len()]
			}
		}
	}
	return data.Materialize()
}

// peekModel reads model_name and model_version (fields 1 and 2, which
// clients write first) from the start of an encoded ModelInferRequest,
// b; ok is false when they are not there, or not whole in b.
func peekModel(b []byte) (name, version string, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType || (num != 1 && num != 2) {
			break
		}
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return "", "", false
		}
		if num == 1 {
			name = string(v)
		} else {
			version = string(v)
		}
		b = b[n+m:]
	}
	return name, version, name != ""
}

// releaseBuffer releases the buffer the request was received into, unless
// resolve handed it on.
func (in *inboundRequest) releaseBuffer() {
	if in.buffer != nil {
		in.buffer.Release()
		in.buffer = nil
	}
}

// limitError refuses a request that is too large: RESOURCE_EXHAUSTED, as
// gRPC refuses a message over its limit, but for this request only.
type limitError string

func (e limitError) Error() string { return string(e) }

// GRPCStatus gives the error its gRPC status.
func (e limitError) GRPCStatus() *status.Status {
	return status.New(codes.ResourceExhausted, string(e))
}

// decodeInbound checks a received message against the limits, then decodes
// it into in (or only its header, when refused).
// A message that cannot be decoded is refused the same way: its stream goes
// on. decodeInbound itself never fails.
//
// An accepted message's raw_input_contents and typed contents are not
// decoded (see inboundRequest): b must not be reused while the request
// lives.
func decodeInbound(b []byte, in *inboundRequest, lim requestLimits) error {
	in.msg = &in.received
	err := checkRequestWire(b, lim)
	if err == nil {
		if err = decodeWithoutData(b, in); err == nil {
			return nil
		}
		in.msg, in.contents = new(pb.ModelInferRequest), nil
	}
	decodeHeader(b, in.msg)
	in.refused = fmt.Errorf("model %q: %w", in.msg.GetModelName(), err)
	return nil
}

// decodeWithoutData decodes a ModelInferRequest checked by
// checkRequestWire, except its tensor data: protobuf decodes a copy of the
// message without raw_input_contents and without the inputs' contents (the
// tensor descriptions, parameters and header: small), the raw contents are
// slices of b, and each input's encoded contents go to in.contents.
func decodeWithoutData(b []byte, in *inboundRequest) error {
	buf := restBuffers.Get().(*[]byte)
	defer putRestBuffer(buf)
	var (
		rest     = (*buf)[:0] // the message without its inputs and tensor data
		raw      = in.rawOne[:0]
		contents = in.contentsOne[:0]
		inputs   = in.inputWireOne[:0] // the inputs without their contents
	)
	err := walkFields(b, func(num protowire.Number, typ protowire.Type, v, field []byte) error {
		switch {
		case num == 7 && typ == protowire.BytesType: // raw_input_contents
			raw = append(raw, v)
		case num == 5 && typ == protowire.BytesType: // inputs
			input, c, err := splitContents(v)
			if err != nil {
				return err
			}
			contents = append(contents, c)
			inputs = append(inputs, input)
		default:
			rest = append(rest, field...)
		}
		return nil
	})
	if err != nil {
		return err
	}
	*buf = rest
	if err := proto.Unmarshal(rest, in.msg); err != nil {
		return core.Errorf(core.CodeInvalidArg, "the request is not a valid ModelInferRequest: %v", err)
	}
	if err := decodeInputs(in, inputs); err != nil {
		return core.Errorf(core.CodeInvalidArg, "the request is not a valid ModelInferRequest: %v", err)
	}
	if len(raw) > 0 {
		in.msg.RawInputContents = raw
	}
	in.contents = contents
	return nil
}

// decodeInputs decodes the inputs' tensor descriptions (without their
// contents) into in.msg.Inputs, in order, as protobuf decodes the inputs
// field: each into a new tensor, of in's own memory for a single input.
func decodeInputs(in *inboundRequest, inputs [][]byte) error {
	if len(inputs) == 0 {
		return nil
	}
	tensors, ptrs := in.inputOne[:], in.inputPtrOne[:0]
	if len(inputs) > len(in.inputOne) {
		tensors = make([]pb.ModelInferRequest_InferInputTensor, len(inputs))
		ptrs = make([]*pb.ModelInferRequest_InferInputTensor, 0, len(inputs))
	} else {
		tensors[0].Shape = in.shapeOne[:0] // merged into: the shape's dimensions are appended
	}
	for i, b := range inputs {
		t := &tensors[i]
		if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(b, t); err != nil {
			return err
		}
		if len(t.Shape) == 0 {
			t.Shape = nil // as protobuf leaves a shape with no dimensions
		}
		ptrs = append(ptrs, t)
	}
	in.msg.Inputs = ptrs
	return nil
}

// restBuffers hold the messages decodeWithoutData hands to protobuf. A
// buffer is free again once the message is decoded: proto.Unmarshal
// copies every string and bytes field (and unknown field) it keeps.
var restBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledRestBytes is the largest buffer that goes back to restBuffers;
// a larger one (a request of many tensors) is left to the collector.
const maxPooledRestBytes = 16 << 10

func putRestBuffer(buf *[]byte) {
	if cap(*buf) <= maxPooledRestBytes {
		restBuffers.Put(buf)
	}
}

// splitContents separates an encoded InferInputTensor from its contents
// fields: it returns the tensor without them (input itself when it has
// none) and their values, slices of input.
func splitContents(input []byte) ([]byte, wireContents, error) {
	var (
		rest     []byte
		contents wireContents
		at       int // how much of input rest holds, while it is input's prefix
	)
	copied := false
	err := walkFields(input, func(num protowire.Number, typ protowire.Type, v, field []byte) error {
		if num == 5 && typ == protowire.BytesType {
			contents = append(contents, v)
			if !copied {
				rest, copied = append([]byte(nil), input[:at]...), true
			}
		} else if copied {
			rest = append(rest, field...)
		}
		at += len(field)
		return nil
	})
	if !copied {
		rest = input
	}
	return rest, contents, err
}

// checkRequestWire walks a ModelInferRequest on the wire and returns an
// error (a core error, to answer the request with) if decoding it would
// break the limits.
func checkRequestWire(b []byte, lim requestLimits) error {
	if len(b) > lim.maxMessageBytes {
		return limitError(fmt.Sprintf("request message of %d bytes is larger than the server's limit of %d bytes (--grpc-max-message-size)",
			len(b), lim.maxMessageBytes))
	}
	var tensors [3]int // inputs, outputs, raw contents
	params, contents := 0, 0
	err := walk(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch num {
		case 4:
			params++
		case 5:
			tensors[0]++
			n, err := inputDecodedSize(v)
			if err != nil {
				return err
			}
			contents += n
		case 6:
			tensors[1]++
			return checkParameterCount(v, 2)
		case 7:
			tensors[2]++
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, what := range []string{"inputs", "requested outputs", "raw_input_contents entries"} {
		if tensors[i] > protocol.MaxRequestTensors {
			return protocol.TooMany("the request", tensors[i], what, protocol.MaxRequestTensors)
		}
	}
	if params > protocol.MaxRequestParameters {
		return protocol.TooMany("the request", params, "parameters", protocol.MaxRequestParameters)
	}
	if contents > lim.maxDecodedContents {
		return limitError(fmt.Sprintf("the inputs' typed contents would take %d bytes once decoded, more than the server's limit of %d; send large tensors in raw_input_contents",
			contents, lim.maxDecodedContents))
	}
	return nil
}

// inputDecodedSize checks one InferInputTensor and returns the memory its
// typed contents take once decoded.
func inputDecodedSize(b []byte) (int, error) {
	dims, size := 0, 0
	err := walk(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch num {
		case 3: // shape
			dims += elements(typ, v, protowire.VarintType)
			if dims > protocol.MaxTensorDims {
				return protocol.TooMany("an input", dims, "dimensions", protocol.MaxTensorDims)
			}
		case 5:
			n, err := contentsDecodedSize(v)
			size += n
			return err
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := checkParameterCount(b, 4); err != nil {
		return 0, err
	}
	return size, nil
}

// contentsDecodedSize returns the memory an InferTensorContents takes once
// decoded into Go slices. Contents that protobuf could not decode (a
// packed run of fixed32 values whose length is not a multiple of 4, a
// varint cut short) are an error now, though they are decoded later and
// only for an input that takes them: such a message is refused whole, as
// protobuf refuses it.
func contentsDecodedSize(b []byte) (int, error) {
	if err := eachValue(wireContents{b}, 0, func(protowire.Number, uint64, []byte) {}); err != nil {
		return 0, err
	}
	size := 0
	err := walk(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch num {
		case 1: // bool
			size += elements(typ, v, protowire.VarintType)
		case 2, 4: // int32, uint32
			size += 4 * elements(typ, v, protowire.VarintType)
		case 3, 5: // int64, uint64
			size += 8 * elements(typ, v, protowire.VarintType)
		case 6: // float
			size += 4 * elements(typ, v, protowire.Fixed32Type)
		case 7: // double
			size += 8 * elements(typ, v, protowire.Fixed64Type)
		case 8: // bytes: a slice header and the bytes
			size += 24 + len(v)
		}
		return nil
	})
	return size, err
}

// checkParameterCount counts the entries of map field num (parameters) in a
// message and refuses too many.
func checkParameterCount(b []byte, num protowire.Number) error {
	n := 0
	err := walk(b, func(f protowire.Number, _ protowire.Type, _ []byte) error {
		if f == num {
			n++
		}
		return nil
	})
	if err == nil && n > protocol.MaxRequestParameters {
		err = protocol.TooMany("a tensor", n, "parameters", protocol.MaxRequestParameters)
	}
	return err
}

// elements counts the values of a repeated scalar field occurrence: one
// when it is not packed, every value of the packed run otherwise.
func elements(typ protowire.Type, v []byte, scalar protowire.Type) int {
	if typ != protowire.BytesType {
		return 1
	}
	switch scalar {
	case protowire.Fixed32Type:
		return len(v) / 4
	case protowire.Fixed64Type:
		return len(v) / 8
	}
	n := 0 // varints: one ends at every byte without the continuation bit
	for _, c := range v {
		if c < 0x80 {
			n++
		}
	}
	return n
}

// walk calls f for every field of a message on the wire, with the field's
// bytes (the value of a length-delimited field; nil for the others). A
// malformed message is an error.
func walk(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte) error) error {
	return walkFields(b, func(num protowire.Number, typ protowire.Type, v, _ []byte) error { return f(num, typ, v) })
}

// walkFields is walk that also gives f the whole field as encoded, tag
// included.
func walkFields(b []byte, f func(num protowire.Number, typ protowire.Type, v, field []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return malformed(n)
		}
		tagLen := n
		var v []byte
		if typ == protowire.BytesType {
			v, n = protowire.ConsumeBytes(b[tagLen:])
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b[tagLen:])
		}
		if n < 0 {
			return malformed(n)
		}
		field := b[:tagLen+n]
		b = b[tagLen+n:]
		if err := f(num, typ, v, field); err != nil {
			return err
		}
	}
	return nil
}

func malformed(n int) error {
	return core.Errorf(core.CodeInvalidArg, "the request is not a valid ModelInferRequest: %v", protowire.ParseError(n))
}

// decodeHeader reads model_name, model_version and id of a refused request,
// for its answer; whatever cannot be read stays empty.
func decodeHeader(b []byte, msg *pb.ModelInferRequest) {
	_ = walk(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch s := strings.ToValidUTF8(string(v), "\uFFFD"); num {
		case 1:
			msg.ModelName = s
		case 2:
			msg.ModelVersion = s
		case 3:
			msg.Id = s
		}
		return nil
	})
}

// String describes the refusal, for logs.
func (in *inboundRequest) String() string {
	return fmt.Sprintf("request %q: %v", in.msg.GetId(), in.refused) // refused names the model
}
