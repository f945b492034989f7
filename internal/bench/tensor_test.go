package bench

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/client"
)

// memStats are the server's allocation counters (runtime.MemStats
// TotalAlloc and Mallocs), read from its --debug-address.
type memStats struct{ bytes, mallocs uint64 }

// serverMemStats reads the counters from the heap profile's text form,
// which ends with runtime.MemStats.
func serverMemStats(b *testing.B, p *process) memStats {
	b.Helper()
	resp, err := http.Get("http://" + p.debug + "/debug/pprof/heap?debug=1")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var m memStats
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		for prefix, dst := range map[string]*uint64{"# TotalAlloc = ": &m.bytes, "# Mallocs = ": &m.mallocs} {
			if v, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				if *dst, err = strconv.ParseUint(v, 10, 64); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if m.mallocs == 0 {
		b.Fatal("the server's heap profile has no MemStats")
	}
	return m
}

// BenchmarkUnaryTensors: identity_int32 through ModelInfer with tensors of
// 1 KiB and 1 MiB from 16 concurrent clients, and of 64 MiB from 2,
// against a plain unary echo of a message of the same size. One op is a
// 2-second window of each. It also reports what the server allocated per
// request (its runtime.MemStats through --debug-address, read between
// windows): server-B/req and server-allocs/req, and the same of the plain
// grpc-go server (ceiling-B/req, ceiling-allocs/req).
func BenchmarkUnaryTensors(b *testing.B) {
	for _, bc := range []struct {
		name    string
		bytes   int
		clients int
	}{{"1KiB", 1 << 10, concurrency}, {"1MiB", 1 << 20, concurrency}, {"64MiB", 64 << 20, 2}} {
		b.Run(bc.name, func(b *testing.B) {
			triton, echo := startTritonhost(b, true), startEcho(b, "-debug-address", "127.0.0.1:0")
			if triton.debug == "" || echo.debug == "" {
				b.Fatal("a server announced no diagnostics address")
			}
			msg, err := client.Request{Model: "identity_int32",
				Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{int64(bc.bytes / 4)}, make([]int32, bc.bytes/4)...)}}.Message()
			if err != nil {
				b.Fatal(err)
			}
			tritonReq, _ := proto.Marshal(msg)
			echoReq, _ := proto.Marshal(wrapBytes(make([]byte, bc.bytes)))

			const method = "/inference.GRPCInferenceService/ModelInfer"
			unaryRun(b, triton.conn, method, tritonReq, bc.clients)
			var ours, ceiling float64
			var calls, echoCalls int64
			var took time.Duration
			before, echoBefore := serverMemStats(b, triton), serverMemStats(b, echo)
			b.ResetTimer()
			for b.Loop() {
				n, d := unaryRun(b, triton.conn, method, tritonReq, bc.clients)
				calls, took = calls+n, took+d
				n, d = unaryRun(b, echo.conn, "/bench.Echo/Echo", echoReq, bc.clients)
				ceiling += float64(n) / d.Seconds()
				echoCalls += n
			}
			b.StopTimer()
			after, echoAfter := serverMemStats(b, triton), serverMemStats(b, echo)
			ours = float64(calls) / took.Seconds()
			report(b, fmt.Sprintf("identity unary %s at concurrency %d", bc.name, bc.clients), "requests/s", ours, ceiling/float64(b.N))
			perReq := func(v uint64) float64 { return float64(v) / float64(calls) }
			b.ReportMetric(perReq(after.bytes-before.bytes), "server-B/req")
			b.ReportMetric(perReq(after.mallocs-before.mallocs), "server-allocs/req")
			perEcho := func(v uint64) float64 { return float64(v) / float64(echoCalls) }
			b.ReportMetric(perEcho(echoAfter.bytes-echoBefore.bytes), "ceiling-B/req")
			b.ReportMetric(perEcho(echoAfter.mallocs-echoBefore.mallocs), "ceiling-allocs/req")
			fmt.Printf("identity unary %s: tritonhost allocated %.0f bytes in %.1f allocations per request, plain grpc-go %.0f bytes in %.1f\n",
				bc.name, perReq(after.bytes-before.bytes), perReq(after.mallocs-before.mallocs),
				perEcho(echoAfter.bytes-echoBefore.bytes), perEcho(echoAfter.mallocs-echoBefore.mallocs))
		})
	}
}
