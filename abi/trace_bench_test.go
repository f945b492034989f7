package abi_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/scheduling"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/internal/trace"
	"github.com/tritonhost/tritonhost/loader"
)

// BenchmarkIdentityRequestTraced is BenchmarkIdentityRequest's
// shared-library case (16 INT32 elements) with the server's tracer, as
// serve makes it: "off" (Triton's default setting, level OFF), "sampled"
// (TIMESTAMPS, one request in 1000, to Triton's trace file) and "every"
// (TIMESTAMPS, every request traced and written to the file). The traces
// are written on the tracer's goroutine, so a writer that cannot keep up
// costs dropped traces, not time here.
func BenchmarkIdentityRequestTraced(b *testing.B) {
	for _, bc := range []struct {
		name  string
		level core.TraceLevel
		rate  uint32
	}{{"off", core.TraceLevelDisabled, trace.DefaultRate}, {"sampled", core.TraceLevelTimestamps, 1000}, {"every", core.TraceLevelTimestamps, 1}} {
		b.Run(bc.name, func(b *testing.B) {
			s := trace.DefaultSetting()
			s.Level, s.Rate, s.File = bc.level, bc.rate, filepath.Join(b.TempDir(), "trace.json")
			s.LogFrequency = 1000
			tracer, err := trace.New(trace.Options{Setting: s})
			if err != nil {
				b.Fatal(err)
			}
			host := abi.NewHost(abi.HostOptions{})
			b.Cleanup(host.Close)
			provider := loader.New(loader.Options{Opener: host, BackendDirectory: testenv.BackendDir(b), Logger: serverlog.Discard()})
			repo := testenv.Repository(b, testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(b, "identity_int32")})
			srv, err := core.NewServer(core.Options{ModelRepositories: []string{repo}, Backends: provider, Schedulers: scheduling.New, Tracer: tracer})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() {
				_ = srv.Stop(context.Background())
				_ = tracer.Close(context.Background())
			})
			data := make([]byte, 64)
			done := make(chan struct{}, 1)
			fn := func(resp *core.Response, final bool) {
				resp.Free()
				if final {
					done <- struct{}{}
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU(b)
			for b.Loop() {
				req := &core.Submission{Model: "identity_int32", FreesResponses: true,
					Inputs: []core.Input{core.NewInput("INPUT0", core.TypeInt32, []int64{16}, data)}}
				if err := srv.Infer(context.Background(), req, fn); err != nil {
					b.Fatal(err)
				}
				<-done
			}
			reportCPU(b, cpu)
			b.ReportMetric(float64(tracer.Dropped()), "dropped")
		})
	}
}
