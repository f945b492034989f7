package grpcserver

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// le is the little-endian encoding of values of the given byte size.
func le(size int, values ...uint64) []byte {
	var out []byte
	for _, v := range values {
		switch size {
		case 1:
			out = append(out, byte(v))
		case 2:
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
		case 4:
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		default:
			out = binary.LittleEndian.AppendUint64(out, v)
		}
	}
	return out
}

// TestContentsDataDecodesEveryTypeFromTheWire: typed contents, as protobuf
// encodes them (packed), give the tensor's little-endian bytes, including
// negative and extreme values.
func TestContentsDataDecodesEveryTypeFromTheWire(t *testing.T) {
	negOne := uint64(math.MaxUint64)
	for _, tc := range []struct {
		dt   core.DataType
		c    *pb.InferTensorContents
		want []byte
	}{
		{core.TypeBool, &pb.InferTensorContents{BoolContents: []bool{true, false, true}}, []byte{1, 0, 1}},
		{core.TypeInt8, &pb.InferTensorContents{IntContents: []int32{-1, 127, -128}}, []byte{0xff, 0x7f, 0x80}},
		{core.TypeInt16, &pb.InferTensorContents{IntContents: []int32{-2, 32767}}, le(2, negOne-1, 32767)},
		{core.TypeInt32, &pb.InferTensorContents{IntContents: []int32{-1, math.MaxInt32, math.MinInt32}}, le(4, negOne, math.MaxInt32, 1<<31)},
		{core.TypeInt64, &pb.InferTensorContents{Int64Contents: []int64{-1, math.MaxInt64}}, le(8, negOne, math.MaxInt64)},
		{core.TypeUint8, &pb.InferTensorContents{UintContents: []uint32{255, 0}}, []byte{255, 0}},
		{core.TypeUint16, &pb.InferTensorContents{UintContents: []uint32{65535}}, le(2, 65535)},
		{core.TypeUint32, &pb.InferTensorContents{UintContents: []uint32{math.MaxUint32, 7}}, le(4, math.MaxUint32, 7)},
		{core.TypeUint64, &pb.InferTensorContents{Uint64Contents: []uint64{math.MaxUint64, 0}}, le(8, math.MaxUint64, 0)},
		{core.TypeFP32, &pb.InferTensorContents{Fp32Contents: []float32{1.5, float32(math.Inf(-1))}},
			le(4, uint64(math.Float32bits(1.5)), uint64(math.Float32bits(float32(math.Inf(-1)))))},
		{core.TypeFP64, &pb.InferTensorContents{Fp64Contents: []float64{-2.25}}, le(8, math.Float64bits(-2.25))},
		{core.TypeBytes, &pb.InferTensorContents{BytesContents: [][]byte{[]byte("ab"), {}, []byte("c")}},
			[]byte{2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0, 1, 0, 0, 0, 'c'}},
	} {
		t.Run(tc.dt.String(), func(t *testing.T) {
			b, err := proto.Marshal(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			got, err := contentsData("m", "IN", tc.dt, wireContents{b})
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Errorf("contentsData = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestContentsDataReadsUnpackedAndSplitValues: values sent unpacked, or
// spread over several occurrences of the contents field (which protobuf
// merges), are read in order.
func TestContentsDataReadsUnpackedAndSplitValues(t *testing.T) {
	var unpacked []byte
	for _, v := range []int32{5, -6} {
		unpacked = protowire.AppendTag(unpacked, intContents, protowire.VarintType)
		unpacked = protowire.AppendVarint(unpacked, uint64(int64(v)))
	}
	packed, err := proto.Marshal(&pb.InferTensorContents{IntContents: []int32{7}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := contentsData("m", "IN", core.TypeInt32, wireContents{unpacked, packed})
	if want := le(4, 5, uint64(math.MaxUint64-5), 7); err != nil || !bytes.Equal(got, want) {
		t.Errorf("contentsData = %v, %v; want %v", got, err, want)
	}
}

// TestContentsDataRefusesByTritonsRules: two fields, or a field of another
// data type, are refused with Triton's texts; a truncated packed run is a
// malformed request; empty contents give no data.
func TestContentsDataRefusesByTritonsRules(t *testing.T) {
	two, _ := proto.Marshal(&pb.InferTensorContents{IntContents: []int32{1}, Int64Contents: []int64{2}})
	other, _ := proto.Marshal(&pb.InferTensorContents{Fp32Contents: []float32{1}})
	truncated := protowire.AppendTag(nil, fp64Contents, protowire.BytesType)
	truncated = protowire.AppendBytes(truncated, []byte{1, 2, 3})
	for _, tc := range []struct {
		name string
		c    []byte
		code core.Code
		want string
	}{
		{"two fields", two, core.CodeInvalidArg, "unexpected explicit tensor data for input tensor 'IN' for model 'm', binary data was already supplied."},
		{"another type", other, core.CodeInvalidArg, "unexpected explicit tensor data for input tensor 'IN' for model 'm' of type 'FP32', expected datatype 'INT32'"},
		{"truncated", truncated, core.CodeInvalidArg, "model 'm': the contents of input 'IN' are not a valid InferTensorContents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := contentsData("m", "IN", core.TypeInt32, wireContents{tc.c})
			if err == nil || core.CodeOf(err) != tc.code || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Errorf("error %v, want %v %q", err, tc.code, tc.want)
			}
		})
	}
	if got, err := contentsData("m", "IN", core.TypeInt32, wireContents{nil}); got != nil || err != nil {
		t.Errorf("empty contents: %v, %v; want no data", got, err)
	}
}
