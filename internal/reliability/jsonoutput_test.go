package reliability

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// identityBytes is a model that answers its BYTES input as its output.
const identityBytes = `name: "identity_bytes"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
`

// bytesTensor is a BYTES tensor of about size bytes, serialized as Triton
// sends it (each element a 4-byte little-endian length, then its bytes),
// with its element count. "empty" is size/4 empty elements, the most
// elements a body of that size can hold; "control" is one element of
// control characters, which JSON writes six bytes each.
func bytesTensor(kind string, size int) ([]byte, int64) {
	switch kind {
	case "empty":
		return make([]byte, size/4*4), int64(size / 4)
	case "control":
		data := bytes.Repeat([]byte{1}, size)
		binary.LittleEndian.PutUint32(data, uint32(size-4))
		return data, 1
	}
	panic(kind)
}

// postBytesAsJSON sends data as the BYTES input of identity_bytes in
// binary form and asks for the output as JSON; it returns the status and
// how many bytes the answer had.
func postBytesAsJSON(ctx context.Context, addr string, data []byte, count int64) (int, int64, error) {
	header := fmt.Sprintf(`{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[%d],"parameters":{"binary_data_size":%d}}],`+
		`"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":false}}]}`, count, len(data))
	body := io.MultiReader(bytes.NewReader([]byte(header)), bytes.NewReader(data))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v2/models/identity_bytes/infer", body)
	if err != nil {
		return 0, 0, err
	}
	req.ContentLength = int64(len(header) + len(data))
	req.Header.Set("Inference-Header-Content-Length", strconv.Itoa(len(header)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, n, err
}

// TestBytesAnsweredAsJSONStayWithinAFewTimesTheirSize: a BYTES input sent
// as binary data and answered as JSON, whose JSON text is up to six times
// its size, costs the server a few times the request's size, not the
// JSON's: three such requests at once, of the most elements a body can
// hold or of one element of control characters, over HTTP; and the same
// tensors over gRPC.
func TestBytesAnsweredAsJSONStayWithinAFewTimesTheirSize(t *testing.T) {
	size := scale(16<<20, 64<<20)
	const clients = 3
	repo := testenv.Repository(t, testenv.Model{Name: "identity_bytes", Config: identityBytes})
	for _, tc := range []struct {
		kind, protocol string
		jsonBytes      int64 // the answer's size at least
	}{
		{"empty", "HTTP", int64(size/4) * 3},
		{"control", "HTTP", int64(size) * 6},
		{"empty", "gRPC", 0},
		{"control", "gRPC", 0},
	} {
		t.Run(tc.kind+"/"+tc.protocol, func(t *testing.T) {
			srv := start(t, repo, "--grpc-max-message-size", strconv.Itoa(2*size))
			addr := srv.HTTP
			data, count := bytesTensor(tc.kind, size)
			_, c := srv.Dial(t)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			before := srv.ProcStatus(t, "VmHWM")
			var wg sync.WaitGroup
			for range clients {
				wg.Go(func() {
					if tc.protocol == "gRPC" {
						resp, err := c.ModelInfer(ctx, &pb.ModelInferRequest{ModelName: "identity_bytes",
							Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "BYTES", Shape: []int64{count}}},
							RawInputContents: [][]byte{data}})
						if err != nil {
							t.Errorf("gRPC: %v", err)
						} else if got := len(resp.GetRawOutputContents()[0]); got != len(data) {
							t.Errorf("gRPC: the output has %d bytes, want %d", got, len(data))
						}
						return
					}
					status, n, err := postBytesAsJSON(ctx, addr, data, count)
					if err != nil || status != http.StatusOK || n < tc.jsonBytes {
						t.Errorf("HTTP: status %d, %d bytes of JSON (want at least %d), %v", status, n, tc.jsonBytes, err)
					}
				})
			}
			wg.Wait()
			peak := srv.ProcStatus(t, "VmHWM")
			growth := peak - before
			t.Logf("%d requests at once of %d MiB (%d elements) over %s: peak RSS %d MiB -> %d MiB (+%.1f times their size)",
				clients, size>>20, count, tc.protocol, before>>20, peak>>20, float64(growth)/float64(clients*size))
			if limit := int64(4 * clients * size); growth > limit {
				t.Errorf("the peak RSS grew by %d MiB, more than %d MiB (4 times the requests' size)", growth>>20, limit>>20)
			}
		})
	}
}
