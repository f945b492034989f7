package inferencepb_test

// These tests hold Triton's published gRPC protocol as data (tables of
// upstream facts taken from triton-inference-server/common
// protobuf/grpc_service.proto, 2024 revision) and compare the generated
// descriptors against them in both directions, then decode and encode
// golden messages written field by field with protowire the way Triton's
// Python client and server put them on the wire. A renamed, renumbered or
// retyped field, a lost RPC or a stray extra field fails here.

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"sort"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/internal/inferencepb"
)

const serviceName = "inference.GRPCInferenceService"

// rpcFact is one RPC of GRPCInferenceService as upstream declares it.
type rpcFact struct {
	name            string
	input, output   string // message full names
	clientStreaming bool
	serverStreaming bool
}

// upstreamRPCs is every RPC of upstream's GRPCInferenceService.
var upstreamRPCs = []rpcFact{
	{"ServerLive", "inference.ServerLiveRequest", "inference.ServerLiveResponse", false, false},
	{"ServerReady", "inference.ServerReadyRequest", "inference.ServerReadyResponse", false, false},
	{"ModelReady", "inference.ModelReadyRequest", "inference.ModelReadyResponse", false, false},
	{"ServerMetadata", "inference.ServerMetadataRequest", "inference.ServerMetadataResponse", false, false},
	{"ModelMetadata", "inference.ModelMetadataRequest", "inference.ModelMetadataResponse", false, false},
	{"ModelInfer", "inference.ModelInferRequest", "inference.ModelInferResponse", false, false},
	{"ModelStreamInfer", "inference.ModelInferRequest", "inference.ModelStreamInferResponse", true, true},
	{"ModelConfig", "inference.ModelConfigRequest", "inference.ModelConfigResponse", false, false},
	{"ModelStatistics", "inference.ModelStatisticsRequest", "inference.ModelStatisticsResponse", false, false},
	{"RepositoryIndex", "inference.RepositoryIndexRequest", "inference.RepositoryIndexResponse", false, false},
	{"RepositoryModelLoad", "inference.RepositoryModelLoadRequest", "inference.RepositoryModelLoadResponse", false, false},
	{"RepositoryModelUnload", "inference.RepositoryModelUnloadRequest", "inference.RepositoryModelUnloadResponse", false, false},
	{"SystemSharedMemoryStatus", "inference.SystemSharedMemoryStatusRequest", "inference.SystemSharedMemoryStatusResponse", false, false},
	{"SystemSharedMemoryRegister", "inference.SystemSharedMemoryRegisterRequest", "inference.SystemSharedMemoryRegisterResponse", false, false},
	{"SystemSharedMemoryUnregister", "inference.SystemSharedMemoryUnregisterRequest", "inference.SystemSharedMemoryUnregisterResponse", false, false},
	{"CudaSharedMemoryStatus", "inference.CudaSharedMemoryStatusRequest", "inference.CudaSharedMemoryStatusResponse", false, false},
	{"CudaSharedMemoryRegister", "inference.CudaSharedMemoryRegisterRequest", "inference.CudaSharedMemoryRegisterResponse", false, false},
	{"CudaSharedMemoryUnregister", "inference.CudaSharedMemoryUnregisterRequest", "inference.CudaSharedMemoryUnregisterResponse", false, false},
	{"TraceSetting", "inference.TraceSettingRequest", "inference.TraceSettingResponse", false, false},
	{"LogSettings", "inference.LogSettingsRequest", "inference.LogSettingsResponse", false, false},
}

// fieldFact is one field as upstream declares it. typ is the scalar kind
// ("string", "int64", ...), a message's full name, or "map<K,V>"; card is
// the cardinality (proto3 singular fields are Optional, maps Repeated);
// oneof names the enclosing oneof, if any.
type fieldFact struct {
	num   protowire.Number
	name  string
	typ   string
	card  protoreflect.Cardinality
	oneof string
}

const (
	one = protoreflect.Optional // proto3 singular field
	rep = protoreflect.Repeated

	sd     = "inference.StatisticDuration"
	param  = "map<string,inference.InferParameter>"
	rparam = "map<string,inference.ModelRepositoryParameter>"
	choice = "parameter_choice"
)

// upstreamMessages is every message of upstream's grpc_service.proto (map
// entries aside), keyed by full name, with all of its fields.
var upstreamMessages = map[protoreflect.FullName][]fieldFact{
	// Health.
	"inference.ServerLiveRequest":   {},
	"inference.ServerLiveResponse":  {{1, "live", "bool", one, ""}},
	"inference.ServerReadyRequest":  {},
	"inference.ServerReadyResponse": {{1, "ready", "bool", one, ""}},
	"inference.ModelReadyRequest": {
		{1, "name", "string", one, ""},
		{2, "version", "string", one, ""},
	},
	"inference.ModelReadyResponse": {{1, "ready", "bool", one, ""}},

	// Metadata.
	"inference.ServerMetadataRequest": {},
	"inference.ServerMetadataResponse": {
		{1, "name", "string", one, ""},
		{2, "version", "string", one, ""},
		{3, "extensions", "string", rep, ""},
	},
	"inference.ModelMetadataRequest": {
		{1, "name", "string", one, ""},
		{2, "version", "string", one, ""},
	},
	"inference.ModelMetadataResponse": {
		{1, "name", "string", one, ""},
		{2, "versions", "string", rep, ""},
		{3, "platform", "string", one, ""},
		{4, "inputs", "inference.ModelMetadataResponse.TensorMetadata", rep, ""},
		{5, "outputs", "inference.ModelMetadataResponse.TensorMetadata", rep, ""},
	},
	"inference.ModelMetadataResponse.TensorMetadata": {
		{1, "name", "string", one, ""},
		{2, "datatype", "string", one, ""},
		{3, "shape", "int64", rep, ""},
	},

	// Inference.
	"inference.InferParameter": {
		{1, "bool_param", "bool", one, choice},
		{2, "int64_param", "int64", one, choice},
		{3, "string_param", "string", one, choice},
		{4, "double_param", "double", one, choice},
		{5, "uint64_param", "uint64", one, choice},
	},
	"inference.InferTensorContents": {
		{1, "bool_contents", "bool", rep, ""},
		{2, "int_contents", "int32", rep, ""},
		{3, "int64_contents", "int64", rep, ""},
		{4, "uint_contents", "uint32", rep, ""},
		{5, "uint64_contents", "uint64", rep, ""},
		{6, "fp32_contents", "float", rep, ""},
		{7, "fp64_contents", "double", rep, ""},
		{8, "bytes_contents", "bytes", rep, ""},
	},
	"inference.ModelInferRequest": {
		{1, "model_name", "string", one, ""},
		{2, "model_version", "string", one, ""},
		{3, "id", "string", one, ""},
		{4, "parameters", param, rep, ""},
		{5, "inputs", "inference.ModelInferRequest.InferInputTensor", rep, ""},
		{6, "outputs", "inference.ModelInferRequest.InferRequestedOutputTensor", rep, ""},
		{7, "raw_input_contents", "bytes", rep, ""},
	},
	"inference.ModelInferRequest.InferInputTensor": {
		{1, "name", "string", one, ""},
		{2, "datatype", "string", one, ""},
		{3, "shape", "int64", rep, ""},
		{4, "parameters", param, rep, ""},
		{5, "contents", "inference.InferTensorContents", one, ""},
	},
	"inference.ModelInferRequest.InferRequestedOutputTensor": {
		{1, "name", "string", one, ""},
		{2, "parameters", param, rep, ""},
	},
	"inference.ModelInferResponse": {
		{1, "model_name", "string", one, ""},
		{2, "model_version", "string", one, ""},
		{3, "id", "string", one, ""},
		{4, "parameters", param, rep, ""},
		{5, "outputs", "inference.ModelInferResponse.InferOutputTensor", rep, ""},
		{6, "raw_output_contents", "bytes", rep, ""},
	},
	"inference.ModelInferResponse.InferOutputTensor": {
		{1, "name", "string", one, ""},
		{2, "datatype", "string", one, ""},
		{3, "shape", "int64", rep, ""},
		{4, "parameters", param, rep, ""},
		{5, "contents", "inference.InferTensorContents", one, ""},
	},
	"inference.ModelStreamInferResponse": {
		{1, "error_message", "string", one, ""},
		{2, "infer_response", "inference.ModelInferResponse", one, ""},
	},

	// Configuration.
	"inference.ModelConfigRequest": {
		{1, "name", "string", one, ""},
		{2, "version", "string", one, ""},
	},
	"inference.ModelConfigResponse": {{1, "config", "inference.ModelConfig", one, ""}},

	// Statistics.
	"inference.ModelStatisticsRequest": {
		{1, "name", "string", one, ""},
		{2, "version", "string", one, ""},
	},
	"inference.StatisticDuration": {
		{1, "count", "uint64", one, ""},
		{2, "ns", "uint64", one, ""},
	},
	"inference.InferStatistics": {
		{1, "success", sd, one, ""},
		{2, "fail", sd, one, ""},
		{3, "queue", sd, one, ""},
		{4, "compute_input", sd, one, ""},
		{5, "compute_infer", sd, one, ""},
		{6, "compute_output", sd, one, ""},
		{7, "cache_hit", sd, one, ""},
		{8, "cache_miss", sd, one, ""},
	},
	"inference.InferResponseStatistics": {
		{1, "compute_infer", sd, one, ""},
		{2, "compute_output", sd, one, ""},
		{3, "success", sd, one, ""},
		{4, "fail", sd, one, ""},
		{5, "empty_response", sd, one, ""},
		{6, "cancel", sd, one, ""},
	},
	"inference.InferBatchStatistics": {
		{1, "batch_size", "uint64", one, ""},
		{2, "compute_input", sd, one, ""},
		{3, "compute_infer", sd, one, ""},
		{4, "compute_output", sd, one, ""},
	},
	"inference.MemoryUsage": {
		{1, "type", "string", one, ""},
		{2, "id", "int64", one, ""},
		{3, "byte_size", "uint64", one, ""},
	},
	"inference.ModelStatistics": {
		{1, "name", "string", one, ""},
		{2, "version", "string", one, ""},
		{3, "last_inference", "uint64", one, ""},
		{4, "inference_count", "uint64", one, ""},
		{5, "execution_count", "uint64", one, ""},
		{6, "inference_stats", "inference.InferStatistics", one, ""},
		{7, "batch_stats", "inference.InferBatchStatistics", rep, ""},
		{8, "memory_usage", "inference.MemoryUsage", rep, ""},
		{9, "response_stats", "map<string,inference.InferResponseStatistics>", rep, ""},
	},
	"inference.ModelStatisticsResponse": {
		{1, "model_stats", "inference.ModelStatistics", rep, ""},
	},

	// Model repository.
	"inference.ModelRepositoryParameter": {
		{1, "bool_param", "bool", one, choice},
		{2, "int64_param", "int64", one, choice},
		{3, "string_param", "string", one, choice},
		{4, "bytes_param", "bytes", one, choice},
	},
	"inference.RepositoryIndexRequest": {
		{1, "repository_name", "string", one, ""},
		{2, "ready", "bool", one, ""},
	},
	"inference.RepositoryIndexResponse": {
		{1, "models", "inference.RepositoryIndexResponse.ModelIndex", rep, ""},
	},
	"inference.RepositoryIndexResponse.ModelIndex": {
		{1, "name", "string", one, ""},
		{2, "version", "string", one, ""},
		{3, "state", "string", one, ""},
		{4, "reason", "string", one, ""},
	},
	"inference.RepositoryModelLoadRequest": {
		{1, "repository_name", "string", one, ""},
		{2, "model_name", "string", one, ""},
		{3, "parameters", rparam, rep, ""},
	},
	"inference.RepositoryModelLoadResponse": {},
	"inference.RepositoryModelUnloadRequest": {
		{1, "repository_name", "string", one, ""},
		{2, "model_name", "string", one, ""},
		{3, "parameters", rparam, rep, ""},
	},
	"inference.RepositoryModelUnloadResponse": {},

	// System shared memory.
	"inference.SystemSharedMemoryStatusRequest": {{1, "name", "string", one, ""}},
	"inference.SystemSharedMemoryStatusResponse": {
		{1, "regions", "map<string,inference.SystemSharedMemoryStatusResponse.RegionStatus>", rep, ""},
	},
	"inference.SystemSharedMemoryStatusResponse.RegionStatus": {
		{1, "name", "string", one, ""},
		{2, "key", "string", one, ""},
		{3, "offset", "uint64", one, ""},
		{4, "byte_size", "uint64", one, ""},
	},
	"inference.SystemSharedMemoryRegisterRequest": {
		{1, "name", "string", one, ""},
		{2, "key", "string", one, ""},
		{3, "offset", "uint64", one, ""},
		{4, "byte_size", "uint64", one, ""},
	},
	"inference.SystemSharedMemoryRegisterResponse":   {},
	"inference.SystemSharedMemoryUnregisterRequest":  {{1, "name", "string", one, ""}},
	"inference.SystemSharedMemoryUnregisterResponse": {},

	// CUDA shared memory. device_id is uint64 in the status and int64 in
	// the register request: upstream's types.
	"inference.CudaSharedMemoryStatusRequest": {{1, "name", "string", one, ""}},
	"inference.CudaSharedMemoryStatusResponse": {
		{1, "regions", "map<string,inference.CudaSharedMemoryStatusResponse.RegionStatus>", rep, ""},
	},
	"inference.CudaSharedMemoryStatusResponse.RegionStatus": {
		{1, "name", "string", one, ""},
		{2, "device_id", "uint64", one, ""},
		{3, "byte_size", "uint64", one, ""},
	},
	"inference.CudaSharedMemoryRegisterRequest": {
		{1, "name", "string", one, ""},
		{2, "raw_handle", "bytes", one, ""},
		{3, "device_id", "int64", one, ""},
		{4, "byte_size", "uint64", one, ""},
	},
	"inference.CudaSharedMemoryRegisterResponse":   {},
	"inference.CudaSharedMemoryUnregisterRequest":  {{1, "name", "string", one, ""}},
	"inference.CudaSharedMemoryUnregisterResponse": {},

	// Trace and log settings.
	"inference.TraceSettingRequest": {
		{1, "settings", "map<string,inference.TraceSettingRequest.SettingValue>", rep, ""},
		{2, "model_name", "string", one, ""},
	},
	"inference.TraceSettingRequest.SettingValue": {{1, "value", "string", rep, ""}},
	"inference.TraceSettingResponse": {
		{1, "settings", "map<string,inference.TraceSettingResponse.SettingValue>", rep, ""},
	},
	"inference.TraceSettingResponse.SettingValue": {{1, "value", "string", rep, ""}},
	"inference.LogSettingsRequest": {
		{1, "settings", "map<string,inference.LogSettingsRequest.SettingValue>", rep, ""},
	},
	"inference.LogSettingsRequest.SettingValue": {
		{1, "bool_param", "bool", one, choice},
		{2, "uint32_param", "uint32", one, choice},
		{3, "string_param", "string", one, choice},
	},
	"inference.LogSettingsResponse": {
		{1, "settings", "map<string,inference.LogSettingsResponse.SettingValue>", rep, ""},
	},
	"inference.LogSettingsResponse.SettingValue": {
		{1, "bool_param", "bool", one, choice},
		{2, "uint32_param", "uint32", one, choice},
		{3, "string_param", "string", one, choice},
	},
}

func serviceDescriptor(t *testing.T) protoreflect.ServiceDescriptor {
	t.Helper()
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(serviceName)
	if err != nil {
		t.Fatalf("find %s: %v", serviceName, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		t.Fatalf("%s is a %T, not a service", serviceName, d)
	}
	return sd
}

func TestFileIsTritonsGrpcServiceProto(t *testing.T) {
	fd := inferencepb.File_grpc_service_proto
	if got, want := fd.Path(), "grpc_service.proto"; got != want {
		t.Errorf("file path = %q, want %q (the path Triton's clients and reflection use)", got, want)
	}
	if got, want := fd.Package(), protoreflect.FullName("inference"); got != want {
		t.Errorf("package = %q, want %q", got, want)
	}
	if got, want := fd.Syntax(), protoreflect.Proto3; got != want {
		t.Errorf("syntax = %v, want %v", got, want)
	}
	imports := fd.Imports()
	if imports.Len() != 1 || imports.Get(0).Path() != "model_config.proto" {
		var paths []string
		for i := 0; i < imports.Len(); i++ {
			paths = append(paths, imports.Get(i).Path())
		}
		t.Errorf("imports = %q, want exactly [model_config.proto]", paths)
	}
	if fd.Services().Len() != 1 || fd.Services().Get(0).FullName() != serviceName {
		t.Errorf("services: want exactly %s", serviceName)
	}
}

func TestModelConfigResponseUsesConfigpb(t *testing.T) {
	// One descriptor for inference.ModelConfig in the process: the field's
	// message must be the very descriptor core/configpb registered.
	var _ *configpb.ModelConfig = (&inferencepb.ModelConfigResponse{}).GetConfig()
	field := (&inferencepb.ModelConfigResponse{}).ProtoReflect().Descriptor().Fields().ByName("config")
	if field == nil {
		t.Fatal("ModelConfigResponse has no field config")
	}
	if got, want := field.Message(), (&configpb.ModelConfig{}).ProtoReflect().Descriptor(); got != want {
		t.Errorf("ModelConfigResponse.config is %s from %s, want configpb's %s from %s",
			got.FullName(), got.ParentFile().Path(), want.FullName(), want.ParentFile().Path())
	}
}

func TestServiceMatchesUpstreamRPCs(t *testing.T) {
	sd := serviceDescriptor(t)
	methods := sd.Methods()
	for _, want := range upstreamRPCs {
		t.Run(want.name, func(t *testing.T) {
			m := methods.ByName(protoreflect.Name(want.name))
			if m == nil {
				t.Fatalf("RPC %s missing", want.name)
			}
			if got := m.Input().FullName(); string(got) != want.input {
				t.Errorf("request type = %s, want %s", got, want.input)
			}
			if got := m.Output().FullName(); string(got) != want.output {
				t.Errorf("response type = %s, want %s", got, want.output)
			}
			if got := m.IsStreamingClient(); got != want.clientStreaming {
				t.Errorf("client streaming = %v, want %v", got, want.clientStreaming)
			}
			if got := m.IsStreamingServer(); got != want.serverStreaming {
				t.Errorf("server streaming = %v, want %v", got, want.serverStreaming)
			}
		})
	}
	known := make(map[string]bool, len(upstreamRPCs))
	for _, r := range upstreamRPCs {
		known[r.name] = true
	}
	for i := 0; i < methods.Len(); i++ {
		if name := string(methods.Get(i).Name()); !known[name] {
			t.Errorf("RPC %s is not in upstream's service", name)
		}
	}
}

func TestGrpcServiceDescMatchesUpstreamRPCs(t *testing.T) {
	// The ServiceDesc is what a grpc.Server registers; its names make the
	// HTTP/2 paths "/inference.GRPCInferenceService/<RPC>" clients call.
	desc := inferencepb.GRPCInferenceService_ServiceDesc
	if desc.ServiceName != serviceName {
		t.Errorf("ServiceName = %q, want %q", desc.ServiceName, serviceName)
	}
	var wantUnary, wantStreams, gotUnary, gotStreams []string
	for _, r := range upstreamRPCs {
		if r.clientStreaming || r.serverStreaming {
			wantStreams = append(wantStreams, fmt.Sprintf("%s client=%v server=%v", r.name, r.clientStreaming, r.serverStreaming))
		} else {
			wantUnary = append(wantUnary, r.name)
		}
	}
	for _, m := range desc.Methods {
		gotUnary = append(gotUnary, m.MethodName)
	}
	for _, s := range desc.Streams {
		gotStreams = append(gotStreams, fmt.Sprintf("%s client=%v server=%v", s.StreamName, s.ClientStreams, s.ServerStreams))
	}
	sort.Strings(wantUnary)
	sort.Strings(gotUnary)
	if fmt.Sprint(gotUnary) != fmt.Sprint(wantUnary) {
		t.Errorf("unary methods = %v\nwant %v", gotUnary, wantUnary)
	}
	if fmt.Sprint(gotStreams) != fmt.Sprint(wantStreams) {
		t.Errorf("streams = %v, want %v", gotStreams, wantStreams)
	}
	if desc.Metadata != "grpc_service.proto" {
		t.Errorf("Metadata = %v, want grpc_service.proto", desc.Metadata)
	}
}

// describe renders a field descriptor in the vocabulary of fieldFact.
func describe(fd protoreflect.FieldDescriptor) fieldFact {
	f := fieldFact{num: fd.Number(), name: string(fd.Name()), typ: typeName(fd), card: fd.Cardinality()}
	if fd.IsMap() {
		f.typ = fmt.Sprintf("map<%s,%s>", typeName(fd.MapKey()), typeName(fd.MapValue()))
	}
	if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
		f.oneof = string(od.Name())
	}
	return f
}

func typeName(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return string(fd.Message().FullName())
	case protoreflect.EnumKind:
		return string(fd.Enum().FullName())
	default:
		return fd.Kind().String()
	}
}

// fileMessages lists every message declared in the file, nested ones
// included, except the entry messages protoc synthesizes for maps.
func fileMessages(msgs protoreflect.MessageDescriptors, into map[protoreflect.FullName]protoreflect.MessageDescriptor) {
	for i := 0; i < msgs.Len(); i++ {
		m := msgs.Get(i)
		if m.IsMapEntry() {
			continue
		}
		into[m.FullName()] = m
		fileMessages(m.Messages(), into)
	}
}

func TestMessagesMatchUpstreamFields(t *testing.T) {
	ours := map[protoreflect.FullName]protoreflect.MessageDescriptor{}
	fileMessages(inferencepb.File_grpc_service_proto.Messages(), ours)

	for name := range ours {
		if _, ok := upstreamMessages[name]; !ok {
			t.Errorf("message %s is not in upstream's proto", name)
		}
	}
	for name, want := range upstreamMessages {
		t.Run(string(name), func(t *testing.T) {
			md, ok := ours[name]
			if !ok {
				t.Fatalf("message %s missing", name)
			}
			fields := md.Fields()
			byNum := make(map[protowire.Number]bool, len(want))
			for _, w := range want {
				byNum[w.num] = true
				fd := fields.ByNumber(w.num)
				if fd == nil {
					t.Errorf("field %d %s missing", w.num, w.name)
					continue
				}
				if got := describe(fd); got != w {
					t.Errorf("field %d:\n got %s\nwant %s", w.num, render(got), render(w))
				}
				if fd.HasOptionalKeyword() {
					t.Errorf("field %d %s uses proto3 'optional'; upstream does not", w.num, w.name)
				}
				// proto3 packs repeated scalars by default and upstream does
				// not turn that off; Triton's clients send them packed.
				if w.card == rep && !fd.IsMap() && fd.Kind() != protoreflect.StringKind &&
					fd.Kind() != protoreflect.BytesKind && fd.Kind() != protoreflect.MessageKind && !fd.IsPacked() {
					t.Errorf("field %d %s is not packed", w.num, w.name)
				}
			}
			for i := 0; i < fields.Len(); i++ {
				if fd := fields.Get(i); !byNum[fd.Number()] {
					t.Errorf("field %s is not in upstream's message", render(describe(fd)))
				}
			}
		})
	}
}

func render(f fieldFact) string {
	s := fmt.Sprintf("%d %s %s %s", f.num, f.name, f.card, f.typ)
	if f.oneof != "" {
		s += " in oneof " + f.oneof
	}
	return s
}

// Hand encoding, one protowire call per tag, so the golden bytes do not
// depend on the generated code under test.

func wireString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func wireBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func wireVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// wirePackedInt64 is a packed repeated int64 field, as proto3 writes shapes.
func wirePackedInt64(b []byte, num protowire.Number, vals ...int64) []byte {
	var packed []byte
	for _, v := range vals {
		packed = protowire.AppendVarint(packed, uint64(v))
	}
	return wireBytes(b, num, packed)
}

// wireBoolParam is one entry of a map<string, InferParameter> field holding
// a bool_param: entry {1: key, 2: InferParameter {1: bool}}.
func wireBoolParam(b []byte, num protowire.Number, key string, v bool) []byte {
	var value []byte
	if v {
		value = wireVarint(value, 1, 1)
	} else {
		value = wireVarint(value, 1, 0)
	}
	var entry []byte
	entry = wireString(entry, 1, key)
	entry = wireBytes(entry, 2, value)
	return wireBytes(b, num, entry)
}

// wireTensor is an InferInputTensor or InferOutputTensor with name,
// datatype and shape (their field numbers 1-3 coincide).
func wireTensor(name, datatype string, shape ...int64) []byte {
	var t []byte
	t = wireString(t, 1, name)
	t = wireString(t, 2, datatype)
	return wirePackedInt64(t, 3, shape...)
}

func boolParam(v bool) *inferencepb.InferParameter {
	return &inferencepb.InferParameter{ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: v}}
}

// repeatRequestWire is the ModelInferRequest that tritonclient.grpc builds
// for the repeat example: async_stream_infer("repeat_int32", inputs,
// request_id="0", outputs=[OUT, IDX], enable_empty_final_response=True),
// with inputs from numpy arrays sent as raw little-endian bytes. Fields
// come in number order, as protobuf serializers write them.
func repeatRequestWire() []byte {
	var b []byte
	b = wireString(b, 1, "repeat_int32")
	// model_version "" is the proto3 default and is not written.
	b = wireString(b, 3, "0")
	b = wireBoolParam(b, 4, "triton_enable_empty_final_response", true)
	b = wireBytes(b, 5, wireTensor("IN", "INT32", 4))
	b = wireBytes(b, 5, wireTensor("DELAY", "UINT32", 4))
	b = wireBytes(b, 5, wireTensor("WAIT", "UINT32", 1))
	b = wireBytes(b, 6, wireString(nil, 1, "OUT"))
	b = wireBytes(b, 6, wireString(nil, 1, "IDX"))
	b = wireBytes(b, 7, []byte{4, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}) // IN: 4 2 0 1
	b = wireBytes(b, 7, []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}) // DELAY: 1 2 3 4
	b = wireBytes(b, 7, []byte{5, 0, 0, 0})                                     // WAIT: 5
	return b
}

func TestDecodePythonClientRepeatRequest(t *testing.T) {
	var got inferencepb.ModelInferRequest
	if err := proto.Unmarshal(repeatRequestWire(), &got); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	if len(got.ProtoReflect().GetUnknown()) != 0 {
		t.Errorf("unknown fields left over: %x", got.ProtoReflect().GetUnknown())
	}

	want := &inferencepb.ModelInferRequest{
		ModelName:  "repeat_int32",
		Id:         "0",
		Parameters: map[string]*inferencepb.InferParameter{"triton_enable_empty_final_response": boolParam(true)},
		Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{
			{Name: "IN", Datatype: "INT32", Shape: []int64{4}},
			{Name: "DELAY", Datatype: "UINT32", Shape: []int64{4}},
			{Name: "WAIT", Datatype: "UINT32", Shape: []int64{1}},
		},
		Outputs: []*inferencepb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUT"}, {Name: "IDX"}},
		RawInputContents: [][]byte{
			le32(4, 2, 0, 1),
			le32(1, 2, 3, 4),
			le32(5),
		},
	}
	if !proto.Equal(&got, want) {
		t.Errorf("decoded request:\n%s\nwant:\n%s", prototext.Format(&got), prototext.Format(want))
	}
	// The flag must arrive as a set bool_param, not as an absent oneof.
	p := got.GetParameters()["triton_enable_empty_final_response"]
	if _, ok := p.GetParameterChoice().(*inferencepb.InferParameter_BoolParam); !ok || !p.GetBoolParam() {
		t.Errorf("triton_enable_empty_final_response = %v, want bool_param true", p)
	}
}

// le32 is the little-endian bytes of 32-bit values, as numpy.tobytes()
// writes int32 and uint32 arrays on x86 and arm64.
func le32(vals ...uint32) []byte {
	b := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	return b
}

// streamResponseWire is a ModelStreamInferResponse for repeat_int32 as
// Triton writes it: infer_response {model_name, model_version, id,
// parameters {triton_final_response}, outputs..., raw_output_contents...};
// error_message "" is not written.
func streamResponseWire(final bool, outputs, raw [][]byte) []byte {
	var r []byte
	r = wireString(r, 1, "repeat_int32")
	r = wireString(r, 2, "1")
	r = wireString(r, 3, "0")
	r = wireBoolParam(r, 4, "triton_final_response", final)
	for _, o := range outputs {
		r = wireBytes(r, 5, o)
	}
	for _, c := range raw {
		r = wireBytes(r, 6, c)
	}
	return wireBytes(nil, 2, r)
}

func TestEncodeStreamResponseLikeTriton(t *testing.T) {
	tests := []struct {
		name string
		msg  *inferencepb.ModelStreamInferResponse
		wire []byte
	}{
		{
			// The last data response of a request: OUT=1 at IDX=3, not final
			// (the repeat backend sends FINAL separately). A false
			// bool_param is still written: oneof members have presence.
			name: "data response, not final",
			msg: &inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{
				ModelName: "repeat_int32", ModelVersion: "1", Id: "0",
				Parameters: map[string]*inferencepb.InferParameter{"triton_final_response": boolParam(false)},
				Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{
					{Name: "OUT", Datatype: "INT32", Shape: []int64{1}},
					{Name: "IDX", Datatype: "UINT32", Shape: []int64{1}},
				},
				RawOutputContents: [][]byte{le32(1), le32(3)},
			}},
			wire: streamResponseWire(false,
				[][]byte{wireTensor("OUT", "INT32", 1), wireTensor("IDX", "UINT32", 1)},
				[][]byte{{1, 0, 0, 0}, {3, 0, 0, 0}}),
		},
		{
			// The empty final response sent for a flags-only FINAL when the
			// request set triton_enable_empty_final_response.
			name: "empty final response",
			msg: &inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{
				ModelName: "repeat_int32", ModelVersion: "1", Id: "0",
				Parameters: map[string]*inferencepb.InferParameter{"triton_final_response": boolParam(true)},
			}},
			wire: streamResponseWire(true, nil, nil),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := proto.MarshalOptions{Deterministic: true}.Marshal(tt.msg)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			if !bytes.Equal(got, tt.wire) {
				t.Errorf("encoded:\n%s\nwant:\n%s", hex.Dump(got), hex.Dump(tt.wire))
			}

			var back inferencepb.ModelStreamInferResponse
			if err := proto.Unmarshal(tt.wire, &back); err != nil {
				t.Fatalf("unmarshal golden: %v", err)
			}
			if !proto.Equal(&back, tt.msg) {
				t.Errorf("decoded golden:\n%s\nwant:\n%s", prototext.Format(&back), prototext.Format(tt.msg))
			}
			p := back.GetInferResponse().GetParameters()["triton_final_response"]
			if _, ok := p.GetParameterChoice().(*inferencepb.InferParameter_BoolParam); !ok {
				t.Errorf("triton_final_response = %v, want a bool_param", p)
			}
		})
	}
}
