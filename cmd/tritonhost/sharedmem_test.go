package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// shmRegion is a POSIX shared-memory object this test process creates,
// as Triton's client's shared_memory utilities do (shm_open, ftruncate,
// mmap): the test reads and writes it through the file.
type shmRegion struct {
	key string
	f   *os.File
}

func createShm(t *testing.T, key string, size int64) *shmRegion {
	t.Helper()
	f, err := os.OpenFile(filepath.Join("/dev/shm", strings.TrimPrefix(key, "/")), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Skipf("POSIX shared memory is not available here: %v", err)
	}
	t.Cleanup(func() { f.Close(); os.Remove(f.Name()) })
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return &shmRegion{key: key, f: f}
}

func (r *shmRegion) setInt32s(t *testing.T, offset int64, vals []int32) {
	t.Helper()
	b := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	if _, err := r.f.WriteAt(b, offset); err != nil {
		t.Fatal(err)
	}
}

func (r *shmRegion) int32s(t *testing.T, offset int64, n int) []int32 {
	t.Helper()
	b := make([]byte, 4*n)
	if _, err := r.f.ReadAt(b, offset); err != nil {
		t.Fatal(err)
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func shmParams(region string, byteSize, offset int64) map[string]*pb.InferParameter {
	p := map[string]*pb.InferParameter{
		"shared_memory_region":    {ParameterChoice: &pb.InferParameter_StringParam{StringParam: region}},
		"shared_memory_byte_size": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: byteSize}},
	}
	if offset != 0 { // the Python client sends no offset when it is 0
		p["shared_memory_offset"] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: offset}}
	}
	return p
}

// TestSimpleGRPCShmClientPasses does what Triton's simple_grpc_shm_client
// (client repository, src/python/examples) does against the "simple"
// model: clear every region, create and register an output region and an
// input region holding INPUT0 and INPUT1, infer with the inputs and the
// outputs in the regions, read the sums and differences from the output
// region, list the regions, unregister them all.
func TestSimpleGRPCShmClientPasses(t *testing.T) {
	srv := startServer(t, "")
	ctx := ctxFor(t)
	if _, err := srv.Client.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatalf("unregister_system_shared_memory: %v", err)
	}
	if _, err := srv.Client.CudaSharedMemoryUnregister(ctx, &pb.CudaSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatalf("unregister_cuda_shared_memory: %v", err)
	}
	const byteSize = 16 * 4
	suffix := fmt.Sprintf("_%d", os.Getpid())
	out := createShm(t, "/output_simple"+suffix, 2*byteSize)
	if _, err := srv.Client.SystemSharedMemoryRegister(ctx, &pb.SystemSharedMemoryRegisterRequest{Name: "output_data", Key: out.key, ByteSize: 2 * byteSize}); err != nil {
		t.Fatalf("register output_data: %v", err)
	}
	in := createShm(t, "/input_simple"+suffix, 2*byteSize)
	in0, in1 := make([]int32, 16), make([]int32, 16)
	for i := range 16 {
		in0[i], in1[i] = int32(i), 1
	}
	in.setInt32s(t, 0, in0)
	in.setInt32s(t, byteSize, in1)
	if _, err := srv.Client.SystemSharedMemoryRegister(ctx, &pb.SystemSharedMemoryRegisterRequest{Name: "input_data", Key: in.key, ByteSize: 2 * byteSize}); err != nil {
		t.Fatalf("register input_data: %v", err)
	}

	if n := mapsOf(t, srv, in.f.Name()); n != 1 {
		t.Errorf("the server maps the input region %d time(s), want 1", n)
	}
	resp, err := srv.Client.ModelInfer(ctx, &pb.ModelInferRequest{
		ModelName: "simple",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}, Parameters: shmParams("input_data", byteSize, 0)},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}, Parameters: shmParams("input_data", byteSize, byteSize)},
		},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{
			{Name: "OUTPUT0", Parameters: shmParams("output_data", byteSize, 0)},
			{Name: "OUTPUT1", Parameters: shmParams("output_data", byteSize, byteSize)},
		},
	})
	if err != nil {
		t.Fatalf("infer: %v", err)
	}
	// The client reads each output's data type and shape from the
	// response, and its values from the region.
	offsets := map[string]int64{"OUTPUT0": 0, "OUTPUT1": byteSize}
	got := map[string][]int32{}
	for _, o := range resp.GetOutputs() {
		if o.GetDatatype() != "INT32" || len(o.GetShape()) != 2 || o.GetShape()[0] != 1 || o.GetShape()[1] != 16 {
			t.Errorf("%s is %s %v, want INT32 [1 16]", o.GetName(), o.GetDatatype(), o.GetShape())
		}
		got[o.GetName()] = out.int32s(t, offsets[o.GetName()], 16)
	}
	for i := range 16 {
		if len(got["OUTPUT0"]) != 16 || len(got["OUTPUT1"]) != 16 {
			t.Fatalf("OUTPUT0 or OUTPUT1 is missing in the response: %v", resp)
		}
		if got["OUTPUT0"][i] != in0[i]+in1[i] || got["OUTPUT1"][i] != in0[i]-in1[i] {
			t.Fatalf("shm infer error: %d: sum %d, difference %d", i, got["OUTPUT0"][i], got["OUTPUT1"][i])
		}
	}

	st, err := srv.Client.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{})
	if err != nil || len(st.GetRegions()) != 2 || st.GetRegions()["input_data"].GetKey() != in.key ||
		st.GetRegions()["output_data"].GetByteSize() != 2*byteSize {
		t.Errorf("get_system_shared_memory_status: %v %v", st, err)
	}
	if _, err := srv.Client.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatalf("unregister_system_shared_memory: %v", err)
	}
	if st, err := srv.Client.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{}); err != nil || len(st.GetRegions()) != 0 {
		t.Errorf("status after unregistering: %v %v", st, err)
	}
	for _, r := range []*shmRegion{in, out} {
		// A region a request leased is unmapped by its last lease, which
		// the request releases just after its response was sent.
		testenv.Eventually(func() bool { return mapsOf(t, srv, r.f.Name()) == 0 })
		if n := mapsOf(t, srv, r.f.Name()); n != 0 {
			t.Errorf("the server still maps %s %d time(s) after the regions were unregistered", r.f.Name(), n)
		}
	}
}

// mapsOf counts the server process's mappings of path.
func mapsOf(t *testing.T, srv *serverProcess, path string) int {
	t.Helper()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", srv.PID()))
	if err != nil {
		t.Skipf("cannot read the server's mappings: %v", err)
	}
	return strings.Count(string(maps), " "+path+"\n")
}

// TestSimpleHTTPShmClientSharesRegionsWithGRPC does what Triton's
// simple_http_shm_client does against "simple", over HTTP: clear the
// regions, register an input and an output region, infer with the tensors
// in them, read the results from the output region. The regions are one
// registry for both protocols: gRPC's status lists those HTTP registered,
// and gRPC's unregister removes them for HTTP too.
func TestSimpleHTTPShmClientSharesRegionsWithGRPC(t *testing.T) {
	srv := startServer(t, "")
	ctx := ctxFor(t)
	post := func(path, body string) []byte {
		t.Helper()
		status, _, out := srv.httpCall(t, "POST", path, []byte(body))
		if status != 200 {
			t.Fatalf("POST %s: %d %s", path, status, out)
		}
		return out
	}
	post("/v2/systemsharedmemory/unregister", "")
	post("/v2/cudasharedmemory/unregister", "")
	const byteSize = 16 * 4
	suffix := fmt.Sprintf("_http_%d", os.Getpid())
	out := createShm(t, "/output_simple"+suffix, 2*byteSize)
	in := createShm(t, "/input_simple"+suffix, 2*byteSize)
	in0, in1 := make([]int32, 16), make([]int32, 16)
	for i := range 16 {
		in0[i], in1[i] = int32(i), 1
	}
	in.setInt32s(t, 0, in0)
	in.setInt32s(t, byteSize, in1)
	post("/v2/systemsharedmemory/region/output_data/register", fmt.Sprintf(`{"key":%q,"offset":0,"byte_size":%d}`, out.key, 2*byteSize))
	post("/v2/systemsharedmemory/region/input_data/register", fmt.Sprintf(`{"key":%q,"offset":0,"byte_size":%d}`, in.key, 2*byteSize))

	shm := func(region string, offset int) string {
		return fmt.Sprintf(`{"shared_memory_region":%q,"shared_memory_byte_size":%d,"shared_memory_offset":%d}`, region, byteSize, offset)
	}
	resp := post("/v2/models/simple/infer", `{"inputs":[`+
		`{"name":"INPUT0","datatype":"INT32","shape":[1,16],"parameters":`+shm("input_data", 0)+`},`+
		`{"name":"INPUT1","datatype":"INT32","shape":[1,16],"parameters":`+shm("input_data", byteSize)+`}],`+
		`"outputs":[{"name":"OUTPUT0","parameters":`+shm("output_data", 0)+`},{"name":"OUTPUT1","parameters":`+shm("output_data", byteSize)+`}]}`)
	if !strings.Contains(string(resp), `{"name":"OUTPUT0","datatype":"INT32","shape":[1,16]}`) || strings.Contains(string(resp), `"data"`) {
		t.Errorf("response %s: want OUTPUT0 and OUTPUT1 named without data", resp)
	}
	sum, diff := out.int32s(t, 0, 16), out.int32s(t, byteSize, 16)
	for i := range 16 {
		if sum[i] != in0[i]+in1[i] || diff[i] != in0[i]-in1[i] {
			t.Fatalf("shm infer error: %d: sum %d, difference %d", i, sum[i], diff[i])
		}
	}

	st, err := srv.Client.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{})
	if err != nil || len(st.GetRegions()) != 2 || st.GetRegions()["input_data"].GetKey() != in.key {
		t.Errorf("gRPC status of the regions HTTP registered: %v %v", st, err)
	}
	if _, err := srv.Client.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{Name: "input_data"}); err != nil {
		t.Fatal(err)
	}
	status, _, body := srv.httpCall(t, "GET", "/v2/systemsharedmemory/status", nil)
	if status != 200 || strings.Contains(string(body), "input_data") || !strings.Contains(string(body), `"name":"output_data"`) {
		t.Errorf("HTTP status after gRPC unregistered input_data: %d %s", status, body)
	}
	post("/v2/systemsharedmemory/unregister", "")
	for _, r := range []*shmRegion{in, out} {
		// A region a request leased is unmapped by its last lease, which
		// the request releases just after its response was sent.
		testenv.Eventually(func() bool { return mapsOf(t, srv, r.f.Name()) == 0 })
		if n := mapsOf(t, srv, r.f.Name()); n != 0 {
			t.Errorf("the server still maps %s %d time(s) after the regions were unregistered", r.f.Name(), n)
		}
	}
}
