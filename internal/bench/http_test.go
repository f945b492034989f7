package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// httpRequest is one infer request over HTTP: its body, and the size of
// its JSON part when binary tensors follow it (0 for JSON alone).
type httpRequest struct {
	body       []byte
	headerSize int
}

// identityHTTPRequests are identity_int32's requests of 16 INT32 elements
// over HTTP: the tensor as binary data (asked back as binary data), and
// as JSON values.
func identityHTTPRequests() (bin, js httpRequest) {
	const n = 16
	head := `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[16],"parameters":{"binary_data_size":64}}],` +
		`"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`
	bin = httpRequest{body: []byte(head), headerSize: len(head)}
	js = httpRequest{body: []byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[16],"data":[`)}
	for i := range n {
		v := int32(i*1000 - 7000)
		bin.body = binary.LittleEndian.AppendUint32(bin.body, uint32(v))
		if i > 0 {
			js.body = append(js.body, ',')
		}
		js.body = strconv.AppendInt(js.body, int64(v), 10)
	}
	js.body = append(js.body, `]}]}`...)
	return bin, js
}

// httpClient keeps a connection open for each of the benchmark's clients.
func httpClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 2 * concurrency, MaxIdleConnsPerHost: 2 * concurrency}}
}

// httpRate runs concurrency clients posting req to url for the window
// and returns the answered requests per second, and how many were
// answered.
func httpRate(b *testing.B, c *http.Client, url string, req httpRequest) (rate, calls float64) {
	var answered atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), unaryWindow)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for range concurrency {
		wg.Go(func() {
			buf := make([]byte, 4096)
			for ctx.Err() == nil {
				r, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(req.body))
				if err != nil {
					b.Error(err)
					return
				}
				if req.headerSize > 0 {
					r.Header.Set("Inference-Header-Content-Length", strconv.Itoa(req.headerSize))
					r.Header.Set("Content-Type", "application/octet-stream")
				} else {
					r.Header.Set("Content-Type", "application/json")
				}
				resp, err := c.Do(r)
				if err != nil {
					b.Error(err)
					return
				}
				_, err = io.CopyBuffer(io.Discard, resp.Body, buf)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Errorf("POST %s: %d %v", url, resp.StatusCode, err)
					return
				}
				answered.Add(1)
			}
		})
	}
	wg.Wait()
	n := float64(answered.Load())
	return n / time.Since(start).Seconds(), n
}

// httpEchoRE is how echoserver announces its HTTP echo.
var httpEchoRE = regexp.MustCompile(`serving HTTP at (\S+)`)

// BenchmarkHTTPRequests: identity_int32 (16 INT32 elements) through
// tritonhost's HTTP/REST infer from 16 concurrent clients, its tensors as
// binary data and as JSON values, against echoserver's plain net/http
// echo of the same bodies (the ceiling of Go's HTTP stack). One op is a
// 2-second window of each; the ratio is tritonhost's rate over the echo's.
// It also reports each server's CPU time per request (server-us/req,
// ceiling-us/req) and their ratio, which a machine shared with other load
// moves far less than the rates.
func BenchmarkHTTPRequests(b *testing.B) {
	bin, err := testenv.BuildServer(b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	triton := testenv.StartServer(b, testenv.ServerConfig{Binary: bin, Args: []string{"--allow-metrics=false"}})
	tritonProc := &process{proc: triton.Process}
	echo := startEcho(b, "-http-address", "127.0.0.1:0")
	m := httpEchoRE.FindStringSubmatch(echo.proc.Log())
	if m == nil {
		b.Fatalf("echoserver did not announce its HTTP echo:\n%s", echo.proc.Log())
	}
	oursURL, echoURL := "http://"+triton.HTTP+"/v2/models/identity_int32/infer", "http://"+m[1]+"/v2/models/identity_int32/infer"
	binReq, jsonReq := identityHTTPRequests()
	for _, tc := range []struct {
		name string
		req  httpRequest
	}{{"binary", binReq}, {"JSON", jsonReq}} {
		b.Run(tc.name, func(b *testing.B) {
			c := httpClient()
			defer c.CloseIdleConnections()
			httpRate(b, c, oursURL, tc.req) // warm both up
			httpRate(b, c, echoURL, tc.req)
			var ours, ceiling, oursCalls, ceilingCalls float64
			oursCPU, echoCPU := &cpuMeter{p: tritonProc}, &cpuMeter{p: echo}
			b.ResetTimer()
			for b.Loop() {
				oursCPU.begin(b)
				r, n := httpRate(b, c, oursURL, tc.req)
				oursCPU.end(b)
				ours, oursCalls = ours+r, oursCalls+n
				echoCPU.begin(b)
				r, n = httpRate(b, c, echoURL, tc.req)
				echoCPU.end(b)
				ceiling, ceilingCalls = ceiling+r, ceilingCalls+n
			}
			n := float64(b.N)
			ours, ceiling = ours/n, ceiling/n
			oursUS := float64(oursCPU.total.Microseconds()) / oursCalls
			echoUS := float64(echoCPU.total.Microseconds()) / ceilingCalls
			b.ReportMetric(oursUS, "server-us/req")
			b.ReportMetric(echoUS, "ceiling-us/req")
			b.ReportMetric(oursUS/echoUS, "cpu-ratio")
			fmt.Fprintf(os.Stdout, "server CPU per request: tritonhost %.2f us, net/http echo %.2f us, CPU ratio %.2f\n", oursUS, echoUS, oursUS/echoUS)
			reportIdle(b, oursCPU, echoCPU, "net/http echo")
			b.ReportMetric(ours, "tritonhost-requests/s")
			b.ReportMetric(ceiling, "ceiling-requests/s")
			b.ReportMetric(ours/ceiling, "ratio")
			fmt.Fprintf(os.Stdout, "identity HTTP %s at concurrency %d: tritonhost %.0f requests/s, net/http echo %.0f requests/s, ratio %.2f\n",
				tc.name, concurrency, ours, ceiling, ours/ceiling)
		})
	}
}
