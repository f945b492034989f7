package abi_test

import (
	"context"
	"encoding/binary"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/scheduling"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/loader"
)

// goBackends is a Go-native provider running the identity and square models
// behind the same core interfaces as the shared libraries. It is the
// baseline the C backends are measured against, and does what they do
// through core's Go API in place of the C one: the identity's response
// parameters, its clock reads and statistics of each request and batch,
// the square's cancellation check, clock read and statistics of each
// response. The difference is then the cost of the C boundary, not of
// work one side leaves out.
type goBackends struct{}

func (goBackends) LoadModel(m *core.Model) (core.BackendModel, error) { return goModel{m}, nil }
func (goBackends) Close() error                                       { return nil }

type goModel struct{ m *core.Model }

func (g goModel) NewInstance(inst *core.Instance) (core.BackendInstance, error) {
	return goInstance{g.m, inst}, nil
}
func (goModel) ParallelInstanceLoading() bool { return false }
func (goModel) Finalize() error               { return nil }

type goInstance struct {
	m    *core.Model
	inst *core.Instance
}

// identityParameters are the parameters the identity backend attaches to
// each response.
var identityParameters = []core.Parameter{
	{Name: "param0", Type: core.ParamString, String: "an example string parameter"},
	{Name: "param1", Type: core.ParamInt, Int: 42},
	{Name: "param2", Type: core.ParamBool, Bool: false},
}

func (g goInstance) Execute(batch []*core.Request) error {
	switch g.m.Config().GetBackend() {
	case "identity":
		execStart := core.Nanotime()
		computeStart := core.Nanotime()
		for _, r := range batch {
			in := r.Inputs()[0]
			data := append([]byte(nil), in.Buffers[0]...)
			params := append(make([]core.Parameter, 0, len(identityParameters)), identityParameters...)
			err := r.Responder().Send(&core.Response{Outputs: []core.Output{{Name: "OUTPUT0", DataType: in.DataType, Shape: in.Shape, Data: data}}, Parameters: params}, true)
			end := core.Nanotime()
			g.inst.ReportStatistics(r, err == nil, execStart, computeStart, end, end)
			_ = r.Release(core.ReleaseAll)
		}
		execEnd := core.Nanotime()
		g.inst.ReportBatchStatistics(uint64(len(batch)), execStart, computeStart, execEnd, execEnd)
	case "square":
		for _, r := range batch {
			k := int32(binary.LittleEndian.Uint32(r.Inputs()[0].Buffers[0]))
			p := r.Responder()
			r.Hold() // answers after the release, as a factory does
			_ = r.Release(core.ReleaseAll)
			go func() {
				defer r.Drop()
				start := core.Nanotime()
				for range k {
					if p.Cancelled() {
						break
					}
					out := make([]byte, 4)
					binary.LittleEndian.PutUint32(out, uint32(k))
					outcome := core.ResponseSucceeded
					if p.Send(&core.Response{Outputs: []core.Output{{Name: "OUT", DataType: core.TypeInt32, Shape: []int64{1}, Data: out}}}, false) != nil {
						outcome = core.ResponseFailed
					}
					end := core.Nanotime()
					g.inst.ReportResponseStatistics(p, start, start, end, outcome)
					start = end
				}
				_ = p.SendFinal()
			}()
		}
	}
	return nil
}
func (goInstance) Finalize() error { return nil }

// processCPU is the CPU time the process has used so far, on every thread
// (the backend's, the runtime's). Reported per op beside the wall time,
// it is the host's cost that other load on a shared machine disturbs
// least.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
}

// schedWakes estimates how many times the Go scheduler has started running
// a goroutine that was waiting: each hand-off between goroutines costs one.
// Reported per op beside the CPU time (wakes/op), it counts the hand-offs
// a request or response crosses. The runtime times one scheduling in
// schedSampling in its histogram /sched/latencies:seconds, whose count is
// scaled up accordingly.
func schedWakes() uint64 {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	var n uint64
	for _, c := range s[0].Value.Float64Histogram().Counts {
		n += c
	}
	return n * schedSampling
}

// schedSampling is the runtime's gTrackingPeriod: it records the latency
// of one scheduling of a goroutine in 8.
const schedSampling = 8

// reportWakes reports the scheduler's wake-ups per op since start.
func reportWakes(b *testing.B, start uint64) {
	b.ReportMetric(float64(schedWakes()-start)/float64(b.N), "wakes/op")
}

func benchServer(b *testing.B, native bool, models ...string) *core.Server {
	b.Helper()
	var provider core.BackendProvider = goBackends{}
	if !native {
		host := abi.NewHost(abi.HostOptions{})
		b.Cleanup(host.Close)
		provider = loader.New(loader.Options{Opener: host, BackendDirectory: testenv.BackendDir(b), Logger: serverlog.Discard()})
	}
	repo := make([]testenv.Model, len(models))
	for i, m := range models {
		repo[i] = testenv.Model{Name: m, Config: testenv.ExampleConfig(b, m)}
	}
	srv, err := core.NewServer(core.Options{ModelRepositories: []string{testenv.Repository(b, repo...)}, Backends: provider, Schedulers: scheduling.New})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Stop(context.Background()) })
	return srv
}

// BenchmarkIdentityRequest is the host's cost of one request through the
// in-process API: Infer, schedule, Execute, response, release. One op is
// one request of 16 INT32 elements, or of a 64 MiB tensor (-64MiB), waited
// for before the next; -inline submits with core.Submission.Inline, so
// that the request runs on the benchmark's goroutine. The caller frees each response, as the gRPC
// frontend does, so the shared library's outputs are lent, not copied.
func BenchmarkIdentityRequest(b *testing.B) {
	for _, bc := range []struct {
		name   string
		native bool
		elems  int
		inline bool // Submission.Inline: the request runs on the benchmark's goroutine
	}{{"go-native", true, 16, false}, {"shared-library", false, 16, false},
		{"go-native-inline", true, 16, true}, {"shared-library-inline", false, 16, true},
		{"go-native-64MiB", true, 16 << 20, false}, {"shared-library-64MiB", false, 16 << 20, false}} {
		b.Run(bc.name, func(b *testing.B) {
			srv := benchServer(b, bc.native, "identity_int32")
			data := make([]byte, 4*bc.elems)
			for i := range data {
				data[i] = byte(i)
			}
			done := make(chan struct{}, 1)
			fn := func(resp *core.Response, final bool) {
				resp.Free()
				if final {
					done <- struct{}{}
				}
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			cpu, wakes := processCPU(b), schedWakes()
			for b.Loop() {
				req := &core.Submission{Model: "identity_int32", FreesResponses: true, Inline: bc.inline,
					Inputs: []core.Input{core.NewInput("INPUT0", core.TypeInt32, []int64{int64(bc.elems)}, data)}}
				if err := srv.Infer(context.Background(), req, fn); err != nil {
					b.Fatal(err)
				}
				<-done
			}
			reportCPU(b, cpu)
			reportWakes(b, wakes)
		})
	}
}

// BenchmarkSquareResponse is the host's cost of one decoupled response: one
// op is one response of a square request with k = 1000 (a request per 1000
// ops), sent from the backend's own thread. The caller frees each response,
// as the gRPC frontend does.
func BenchmarkSquareResponse(b *testing.B) {
	const k = 1000
	for _, bc := range []struct {
		name   string
		native bool
	}{{"go-native", true}, {"shared-library", false}} {
		b.Run(bc.name, func(b *testing.B) {
			srv := benchServer(b, bc.native, "square_int32")
			var wg sync.WaitGroup
			var count int
			fn := func(resp *core.Response, final bool) {
				if resp != nil {
					count++
					resp.Free()
				}
				if final {
					wg.Done()
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu, wakes := processCPU(b), schedWakes()
			for n := 0; n < b.N; n += k {
				wg.Add(1)
				req := &core.Submission{Model: "square_int32", FreesResponses: true,
					Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(k))}}
				if err := srv.Infer(context.Background(), req, fn); err != nil {
					b.Fatal(err)
				}
				wg.Wait()
			}
			b.StopTimer()
			reportCPU(b, cpu)
			reportWakes(b, wakes)
			if count < b.N {
				b.Fatalf("received %d responses, want at least %d", count, b.N)
			}
		})
	}
}
