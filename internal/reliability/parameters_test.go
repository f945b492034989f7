package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// cpuTime is the CPU time the process pid has used, user and system.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from its end. utime and stime are fields 14 and 15, in ticks of
	// 1/100 s (USER_HZ on Linux).
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("/proc/%d/stat: %q", pid, s)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// resetPeakRSS starts a new peak for VmHWM (Linux's clear_refs 5); it
// reports whether the kernel took it.
func resetPeakRSS(pid int) bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
}

// manyMembers returns a JSON object of members "p0":0, "p1":0, ... of
// about size bytes (names repeat every `distinct` members when distinct
// is positive: duplicate keys).
func manyMembers(size, distinct int) []byte {
	b := make([]byte, 0, size+32)
	b = append(b, '{')
	for i := 0; len(b) < size; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		n := i
		if distinct > 0 {
			n = i % distinct
		}
		b = append(b, `"p`...)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, `":0`...)
	}
	return append(b, '}')
}

// manyValues returns a JSON array of about size bytes of elem, repeated.
func manyValues(size int, elem string) []byte {
	var b bytes.Buffer
	b.Grow(size + len(elem) + 2)
	b.WriteByte('[')
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(elem)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// TestHTTPCountsWhileDecoding: a request body of tens of MiB that names
// millions of parameters (of the request, of an input or an output, of a
// generate request at the top or under "parameters", of a load request),
// inputs, or dimensions is refused with 400 naming the bound, at the cost
// of reading its bytes: the server counts while it decodes and stops at
// the bound, rather than building millions of entries first. Each case
// runs on a server of its own and logs the server's CPU time and peak RSS
// growth.
func TestHTTPCountsWhileDecoding(t *testing.T) {
	t.Parallel()
	size := scale(24<<20, 200<<20)
	repo := testenv.Repository(t, identityModel(t, "identity_int32"))
	params := manyMembers(size, 0)
	input := func(extra string) string {
		return `{"name":"INPUT0","datatype":"INT32","shape":[4],"data":[1,2,3,4]` + extra + `}`
	}
	cases := []struct {
		name, path string
		body       []byte
		want       string // in the error
	}{
		{"infer request parameters", "/v2/models/identity_int32/infer",
			fmt.Appendf(nil, `{"parameters":%s,"inputs":[%s]}`, params, input("")), "the request has more than the 1024 parameters"},
		{"infer request parameters, duplicate names", "/v2/models/identity_int32/infer",
			fmt.Appendf(nil, `{"parameters":%s,"inputs":[%s]}`, manyMembers(size, 1000), input("")), ""},
		{"infer input parameters", "/v2/models/identity_int32/infer",
			fmt.Appendf(nil, `{"inputs":[%s]}`, input(`,"parameters":`+string(params))), `input "INPUT0" has more than the 1024 parameters`},
		{"infer output parameters", "/v2/models/identity_int32/infer",
			fmt.Appendf(nil, `{"inputs":[%s],"outputs":[{"name":"OUTPUT0","parameters":%s}]}`, input(""), params), `output "OUTPUT0" has more than the 1024 parameters`},
		{"infer inputs", "/v2/models/identity_int32/infer",
			fmt.Appendf(nil, `{"inputs":%s}`, manyValues(size, input(""))), "the request has more than the 4096 inputs"},
		{"infer outputs", "/v2/models/identity_int32/infer",
			fmt.Appendf(nil, `{"inputs":[%s],"outputs":%s}`, input(""), manyValues(size, `{"name":"OUTPUT0"}`)), "the request has more than the 4096 requested outputs"},
		{"infer shape", "/v2/models/identity_int32/infer",
			fmt.Appendf(nil, `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":%s,"data":[1]}]}`, manyValues(size, "1")), `input "INPUT0" has more than the 64 dimensions`},
		{"generate parameters", "/v2/models/identity_int32/generate",
			fmt.Appendf(nil, `{"INPUT0":[1,2,3,4],"parameters":%s}`, params), "the request has more than the 5120 inputs and parameters"},
		{"generate members", "/v2/models/identity_int32/generate", params, "the request has more than the 5120 inputs and parameters"},
		{"load parameters", "/v2/repository/models/identity_int32/load",
			fmt.Appendf(nil, `{"parameters":%s}`, params), "the load request has more than the 1024 parameters"},
		{"unload parameters", "/v2/repository/models/identity_int32/unload",
			fmt.Appendf(nil, `{"parameters":%s}`, params), "the unload request has more than the 1024 parameters"},
		{"log settings", "/v2/logging", params, "the log settings request has more than the 1024 settings"},
	}
	cl := &http.Client{Timeout: 5 * time.Minute}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := start(t, repo, "--model-control-mode", "explicit", "--load-model", "identity_int32")
			rss := srv.ProcStatus(t, "VmRSS")
			hwm := resetPeakRSS(srv.PID())
			cpu := cpuTime(t, srv.PID())
			began := time.Now()
			resp, err := cl.Post("http://"+srv.HTTP+c.path, "application/json", bytes.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			took, used := time.Since(began), cpuTime(t, srv.PID())-cpu
			peak := srv.ProcStatus(t, "VmRSS")
			if hwm {
				peak = srv.ProcStatus(t, "VmHWM")
			}
			grew := peak - rss
			t.Logf("%d MiB body: %d %.120s in %v; server CPU %v, RSS %d MiB -> peak %d MiB (+%d MiB)",
				len(c.body)>>20, resp.StatusCode, answer, took.Round(time.Millisecond), used, rss>>20, peak>>20, grew>>20)
			var refusal struct{ Error string }
			_ = json.Unmarshal(answer, &refusal)
			if c.want != "" && (resp.StatusCode != http.StatusBadRequest || !strings.Contains(refusal.Error, c.want)) {
				t.Errorf("answered %d %.200s; want 400 with %q", resp.StatusCode, answer, c.want)
			}
			// The body is held whole (its buffer at most twice what arrived,
			// exactly its length when declared); decoding may add a little.
			if limit := 2*int64(len(c.body)) + 64<<20; grew > limit {
				t.Errorf("RSS grew by %d MiB for a %d MiB body (bound %d MiB): decoding built what it should have counted",
					grew>>20, len(c.body)>>20, limit>>20)
			}
			// Reading the body and counting is a few passes over its bytes.
			if limit := time.Second * time.Duration(1+len(c.body)>>25); used > limit {
				t.Errorf("the server spent %v of CPU on a %d MiB body (bound %v)", used, len(c.body)>>20, limit)
			}
		})
	}
}

// TestGRPCLoadParametersAreCountedOnTheWire: a RepositoryModelLoad request
// of tens of MiB naming millions of parameters is refused as past the
// bound of 1024 at the cost of its bytes: the server counts the
// parameters on the wire and decodes no more than one past the bound,
// where protobuf would build a map entry of a hundred bytes for every 8
// bytes of message. (ModelInfer requests are counted on the wire the same
// way before they are decoded.)
func TestGRPCLoadParametersAreCountedOnTheWire(t *testing.T) {
	t.Parallel()
	size := scale(24<<20, 200<<20)
	srv := start(t, testenv.Repository(t, identityModel(t, "identity_int32")), "--model-control-mode", "explicit")
	// The message as protobuf encodes it, made here without building the
	// map (slow under the race detector): model_name, then entries of
	// distinct keys and empty values.
	msg := protowire.AppendString(protowire.AppendTag(nil, 2, protowire.BytesType), "identity_int32")
	params := 0
	for ; len(msg) < size; params++ {
		var entry []byte
		entry = protowire.AppendTag(entry, 1, protowire.BytesType)
		entry = protowire.AppendBytes(entry, strconv.AppendInt(nil, int64(params), 10))
		entry = protowire.AppendTag(entry, 2, protowire.BytesType)
		entry = protowire.AppendVarint(entry, 0)
		msg = protowire.AppendBytes(protowire.AppendTag(msg, 3, protowire.BytesType), entry)
	}
	wire := len(msg)
	rss := srv.ProcStatus(t, "VmRSS")
	hwm := resetPeakRSS(srv.PID())
	cpu := cpuTime(t, srv.PID())
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Invoke(t.Context(), "/inference.GRPCInferenceService/RepositoryModelLoad", msg, new(pb.RepositoryModelLoadResponse),
		grpc.ForceCodecV2(encodedCodec{}), grpc.MaxCallSendMsgSize(256<<20))
	used := cpuTime(t, srv.PID()) - cpu
	peak := srv.ProcStatus(t, "VmRSS")
	if hwm {
		peak = srv.ProcStatus(t, "VmHWM")
	}
	grew := peak - rss
	t.Logf("%d MiB load request of %d parameters: %v; server CPU %v, RSS %d MiB -> peak %d MiB (+%d MiB)",
		wire>>20, params, err, used, rss>>20, peak>>20, grew>>20)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "the load request has more than the 1024 parameters") {
		t.Errorf("answered %v; want INVALID_ARGUMENT saying the load request has more than the 1024 parameters", err)
	}
	// gRPC holds the message (and a copy, decoding it); a map past the
	// bound would take far more.
	if limit := 3*int64(wire) + 64<<20; grew > limit {
		t.Errorf("RSS grew by %d MiB for a %d MiB message (bound %d MiB): decoding built what it should have counted", grew>>20, wire>>20, limit>>20)
	}
	if limit := time.Second * time.Duration(1+wire>>25); used > limit {
		t.Errorf("the server spent %v of CPU on a %d MiB message (bound %v)", used, wire>>20, limit)
	}
}

// encodedCodec sends a message given as its protobuf bytes as it is, and
// decodes answers as protobuf does.
type encodedCodec struct{}

func (encodedCodec) Marshal(v any) (mem.BufferSlice, error) {
	if b, ok := v.([]byte); ok {
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	return encoding.GetCodecV2(grpcproto.Name).Marshal(v)
}

func (encodedCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return encoding.GetCodecV2(grpcproto.Name).Unmarshal(data, v)
}

func (encodedCodec) Name() string { return grpcproto.Name }
