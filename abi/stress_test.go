package abi_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/loader"
)

// The stress backend (testdata/stress.c) answers every request from one of
// its 8 worker threads per instance; these tests send requests from many
// goroutines while another unloads and reloads the model (or stops the
// server), and check that every accepted request gets exactly its
// responses, in order, and one final, that the backend saw each request
// released once, and that nothing is left behind.

const stressModel = "stress"

const stressConfig = `name: "stress"
backend: "stress"
max_batch_size: 0
model_transaction_policy { decoupled: true }
instance_group [ { kind: KIND_CPU count: 2 } ]
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 3 ] } ]
output [
  { name: "SEQ" data_type: TYPE_INT32 dims: [ 1 ] },
  { name: "IDX" data_type: TYPE_INT32 dims: [ 1 ] }
]
`

// Mode bits of the third element of IN (see stress.c).
const (
	stressSlow           = 1
	stressUntilCancelled = 2
	stressFinalWithLast  = 4
	stressStatsBurst     = 8
	stressFirstFromReq   = 16
	stressReschedule     = 32
)

func TestStressResponsesWhileReloading(t *testing.T) {
	runStress(t, stressPlan{clients: stressClients(), cancel: false, reschedule: true})
}

func TestStressCancelledRequestsWhileReloading(t *testing.T) {
	runStress(t, stressPlan{clients: stressClients(), cancel: true, reschedule: true})
}

func TestStressServerStopsWhileResponsesStream(t *testing.T) {
	runStress(t, stressPlan{clients: stressClients(), cancel: true, stop: true, reschedule: true})
}

type stressPlan struct {
	clients int
	cancel  bool // cancel some requests midway
	stop    bool // stop the server halfway instead of reloading the model
	// reschedule: the backend releases some requests with
	// RELEASE_RESCHEDULE once; they must run again even while their model
	// unloads.
	reschedule bool
}

// stressClients is how many goroutines send requests: STRESS_CLIENTS, or 8.
func stressClients() int {
	if n, err := strconv.Atoi(os.Getenv("STRESS_CLIENTS")); err == nil && n > 0 {
		return n
	}
	return 8
}

// stressDuration is how long clients send and the model is reloaded:
// STRESS_DURATION (a time.Duration) for a longer soak, else 3s (1s with
// -short).
func stressDuration() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("STRESS_DURATION")); err == nil && d > 0 {
		return d
	}
	if testing.Short() {
		return time.Second
	}
	return 3 * time.Second
}

func runStress(t *testing.T, plan stressPlan) {
	lib := testenv.SharedLibrary(t, "triton_stress", "-pthread", filepath.Join("testdata", "stress.c"))
	repo := testenv.Repository(t, testenv.Model{Name: stressModel, Config: stressConfig, Files: []string{lib}})
	logs := &stressLog{}
	srv := startServer(t, repo, func(co *core.Options, lo *loader.Options) {
		logger := serverlog.New(logs)
		logger.SetVerbose(1) // the backend logs every response at VERBOSE
		co.Logger, lo.Logger = logger, logger
		co.ExplicitModelControl = true
		co.StartupModels = []string{stressModel}
	})
	if v := srv.Versions(stressModel); len(v) != 1 {
		t.Fatalf("the stress model did not load: %+v\n%s", srv.RepositoryIndex(), logs)
	}

	var (
		st       stressTally
		seq      atomic.Int32
		wg       sync.WaitGroup
		deadline = time.Now().Add(stressDuration())
	)
	for c := range plan.clients {
		wg.Go(func() { stressClient(srv, plan, &seq, &st, deadline, uint64(c)) })
	}
	if plan.stop {
		wg.Go(func() {
			time.Sleep(time.Until(deadline) / 2)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := srv.Stop(ctx); err != nil {
				st.fail("Stop: %v", err)
			}
		})
	} else {
		wg.Go(func() { stressReloader(srv, &st, deadline) })
	}
	wg.Go(func() { stressObserver(srv, &st, deadline) })
	wg.Wait()

	if !plan.stop {
		// Unload once more so every model version logs its summary.
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := srv.UnloadModel(ctx, stressModel); err != nil {
			st.fail("final UnloadModel: %v", err)
		}
	}
	checkStress(t, srv, logs, &st, plan)
	if t.Failed() {
		t.Logf("server log (per-response lines left out):\n%s", logs)
	}
}

// checkStress compares what the clients saw with what the backend reports,
// and checks that nothing is left behind.
func checkStress(t *testing.T, srv *testServer, logs *stressLog, st *stressTally, plan stressPlan) {
	t.Helper()
	sum := logs.summary(t)
	t.Logf("%d requests accepted, %d refused, %d rescheduled, %d responses, %d cancelled in the backend, %d in the queue; "+
		"%d unloads, %d in-place reloads; %d requests still being answered when their instance began to finalize",
		st.accepted.Load(), st.refused.Load(), sum["rescheduled"], st.responses.Load(), st.cancelErrors.Load(),
		st.hostCancelled.Load(), st.unloads.Load(), st.reloads.Load(), sum["drained"])
	for _, p := range st.problems() {
		t.Error(p)
	}
	for _, r := range st.done {
		for _, p := range r.verify() { // again: nothing may arrive after the final
			t.Errorf("request %d (n=%d mode=%d cancelAfter=%d) after the test: %s", r.seq, r.n, r.mode, r.cancelAfter, p)
		}
	}
	if bugs := logs.bugLines(); len(bugs) > 0 {
		t.Errorf("the backend found bugs:\n%s", strings.Join(bugs, "\n"))
	}
	executed := uint64(st.accepted.Load() - st.hostCancelled.Load())
	want := map[string]uint64{
		"executed":  executed,
		"released":  executed,
		"finals":    executed,
		"responses": uint64(st.responses.Load()),
		"cancels":   uint64(st.cancelErrors.Load()),
		"bugs":      0,
	}
	for k, w := range want {
		if sum[k] != w {
			t.Errorf("backend summary %s = %d, want %d (summary %v)", k, sum[k], w, sum)
		}
	}
	if lines := logs.responseLines.Load(); lines < st.responses.Load() {
		t.Errorf("%d VERBOSE response lines reached the log, want at least %d", lines, st.responses.Load())
	}
	cycles := st.unloads.Load() + st.reloads.Load()
	if !plan.stop && (cycles < 3 || !testing.Short() && sum["drained"] == 0) {
		t.Errorf("%d unloads and reloads, %d requests in flight at finalization: the test did not stress unloading",
			cycles, sum["drained"])
	}
	if !testenv.Eventually(func() bool { return srv.LiveRequests() == 0 }) {
		t.Errorf("gave up waiting for no live request: %d live", srv.LiveRequests())
	}
	if !testenv.Eventually(func() bool { return srv.host.Live().Zero() }) {
		t.Errorf("gave up waiting for every backend API object released: %s", srv.host.Live().String())
	}
}

// stressClient sends requests one after another until the deadline, each
// checked by its own stressRequest.
func stressClient(srv *testServer, plan stressPlan, seq *atomic.Int32, st *stressTally, deadline time.Time, id uint64) {
	rng := rand.New(rand.NewPCG(id, uint64(time.Now().UnixNano())))
	for time.Now().Before(deadline) {
		r := newStressRequest(rng, seq.Add(1), plan)
		ctx, cancel := context.WithCancel(context.Background())
		r.cancel = cancel
		err := srv.Infer(ctx, &core.Submission{
			Model:  stressModel,
			ID:     strconv.Itoa(int(r.seq)),
			Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{3}, int32s(r.seq, r.n, r.mode))},
		}, r.onResponse)
		if err != nil {
			cancel()
			if c := core.CodeOf(err); c != core.CodeUnavailable && c != core.CodeNotFound {
				st.fail("request %d: Infer: %v (code %v), want UNAVAILABLE or NOT_FOUND while the model reloads", r.seq, err, c)
			}
			st.refused.Add(1)
			if !srv.Live() {
				return // stopped for good
			}
			time.Sleep(time.Millisecond)
			continue
		}
		st.accepted.Add(1)
		if r.cancelNow {
			cancel()
		}
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
			buf := make([]byte, 1<<20)
			st.fail("request %d (n=%d mode=%d) got no final within 20s; goroutines:\n%s", r.seq, r.n, r.mode, buf[:runtime.Stack(buf, true)])
			cancel()
			return
		}
		cancel()
		for _, p := range r.verify() {
			st.fail("request %d (n=%d mode=%d cancelAfter=%d): %s", r.seq, r.n, r.mode, r.cancelAfter, p)
		}
		st.add(r)
	}
}

// newStressRequest draws the shape of one request: how many responses,
// which backend modes, and (with cancel) whether and when the client
// cancels it.
func newStressRequest(rng *rand.Rand, seq int32, plan stressPlan) *stressRequest {
	r := &stressRequest{seq: seq, n: rng.Int32N(9), done: make(chan struct{})}
	for _, m := range []struct {
		bit   int32
		oneIn int
	}{{stressSlow, 4}, {stressFinalWithLast, 3}, {stressStatsBurst, 8}, {stressFirstFromReq, 4}} {
		if rng.IntN(m.oneIn) == 0 {
			r.mode |= m.bit
		}
	}
	if plan.reschedule && rng.IntN(4) == 0 {
		r.mode |= stressReschedule
	}
	if !plan.cancel {
		return r
	}
	switch rng.IntN(6) {
	case 0, 1: // streams until cancelled: the backend must notice
		r.mode |= stressUntilCancelled
		r.cancelAfter = 1 + rng.Int32N(4)
	case 2: // cancelled midway; it may also finish first
		if r.n > 1 {
			r.mode |= stressSlow
			r.cancelAfter = 1 + rng.Int32N(r.n-1)
		}
	case 3: // cancelled at once: in the queue or in the backend
		r.cancelNow = true
		if rng.IntN(2) == 0 {
			r.mode |= stressUntilCancelled
		}
	}
	return r
}

// stressReloader unloads and reloads the model until the deadline, and
// every third time reloads it in place (LoadModel of a loaded model). It
// always leaves the model loaded.
func stressReloader(srv *testServer, st *stressTally, deadline time.Time) {
	rng := rand.New(rand.NewPCG(0xdead, uint64(time.Now().UnixNano())))
	for i := 0; time.Now().Before(deadline); i++ {
		time.Sleep(time.Duration(10+rng.IntN(40)) * time.Millisecond)
		if i%3 == 2 {
			if err := srv.LoadModel(stressModel); err != nil {
				st.fail("in-place LoadModel: %v", err)
			}
			st.reloads.Add(1)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		err := srv.UnloadModel(ctx, stressModel)
		cancel()
		if err != nil {
			st.fail("UnloadModel: %v", err)
		}
		st.unloads.Add(1)
		time.Sleep(time.Duration(2+rng.IntN(10)) * time.Millisecond)
		if err := srv.LoadModel(stressModel); err != nil {
			st.fail("LoadModel after unload: %v", err)
		}
	}
}

// stressObserver reads the statistics and the repository index while the
// model comes and goes (or the server stops), as a metrics scraper would.
func stressObserver(srv *testServer, st *stressTally, deadline time.Time) {
	for time.Now().Before(deadline) && srv.Live() {
		stats, err := srv.Statistics(stressModel, 0)
		switch {
		case err != nil && core.CodeOf(err) != core.CodeNotFound:
			st.fail("Statistics: %v", err)
		case err == nil && (len(stats) != 1 || stats[0].Name != stressModel):
			st.fail("Statistics returned %+v", stats)
		}
		if idx := srv.RepositoryIndex(); srv.Live() && (len(idx) != 1 || idx[0].Name != stressModel) {
			st.fail("RepositoryIndex returned %+v", idx)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// stressTally is what the clients saw, in total.
type stressTally struct {
	accepted, refused       atomic.Int64
	responses, cancelErrors atomic.Int64
	hostCancelled           atomic.Int64 // cancelled before they reached the backend
	unloads, reloads        atomic.Int64

	mu   sync.Mutex
	errs []string
	done []*stressRequest
}

func (s *stressTally) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) < 20 {
		s.errs = append(s.errs, fmt.Sprintf(format, args...))
	}
}

func (s *stressTally) add(r *stressRequest) {
	r.mu.Lock()
	s.responses.Add(int64(r.next))
	if r.cancelErr {
		s.cancelErrors.Add(1)
	}
	if r.hostCancelled {
		s.hostCancelled.Add(1)
	}
	r.mu.Unlock()
	s.mu.Lock()
	s.done = append(s.done, r)
	s.mu.Unlock()
}

func (s *stressTally) problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}

// stressRequest checks the responses of one request as they arrive.
type stressRequest struct {
	seq, n, mode int32
	cancelAfter  int32 // cancel once this many responses arrived (0: never)
	cancelNow    bool  // cancel as soon as Infer accepted it
	cancel       context.CancelFunc
	done         chan struct{} // closed at the first final

	mu        sync.Mutex
	next      int32 // the IDX the next response must carry
	cancelErr bool  // the backend's CANCELLED error response arrived
	// hostCancelled: the server completed the request with a CANCELLED error
	// before the backend got it.
	hostCancelled bool
	finals        int
	finalResp     bool // the final came with a response
	problems      []string
}

func (r *stressRequest) onResponse(resp *core.Response, final bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finals > 0 {
		r.problem("an event after the final: resp=%+v final=%v", resp, final)
	}
	if resp != nil {
		r.check(resp)
	}
	if final {
		r.finals++
		r.finalResp = resp != nil
		if r.finals == 1 {
			close(r.done)
		}
	}
}

func (r *stressRequest) check(resp *core.Response) {
	if resp.Err != nil {
		if core.CodeOf(resp.Err) == core.CodeCancelled && !r.cancelErr && !r.hostCancelled &&
			(r.cancelNow || r.cancelAfter > 0 && r.next >= r.cancelAfter) {
			if strings.Contains(resp.Err.Error(), "stress: request cancelled") {
				r.cancelErr = true
			} else {
				r.hostCancelled = true
			}
			return
		}
		r.problem("error response after %d responses: %v", r.next, resp.Err)
		return
	}
	if r.cancelErr || r.hostCancelled {
		r.problem("a response after the CANCELLED error")
	}
	seq, okSeq := outputInt32(resp, "SEQ")
	idx, okIdx := outputInt32(resp, "IDX")
	switch {
	case !okSeq || !okIdx || len(resp.Outputs) != 2:
		r.problem("malformed response %+v", resp.Outputs)
	case len(resp.Parameters) != 1 || resp.Parameters[0].Name != "seq" || resp.Parameters[0].Type != core.ParamInt ||
		resp.Parameters[0].Int != int64(r.seq):
		r.problem("response parameters %+v", resp.Parameters)
	case seq != r.seq:
		r.problem("response of request %d", seq)
	case idx != r.next:
		r.problem("response index %d, want %d", idx, r.next)
	case r.mode&stressUntilCancelled == 0 && idx >= r.n:
		r.problem("response index %d of only %d", idx, r.n)
	}
	r.next++
	if r.next == r.cancelAfter {
		r.cancel()
	}
}

// verify returns what is wrong with the request once it completed.
func (r *stressRequest) verify() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.problems...)
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if r.finals != 1 {
		bad("%d finals", r.finals)
	}
	if want := r.mode&stressFinalWithLast != 0 && (r.next > 0 || r.cancelErr); r.finals == 1 && !r.hostCancelled && r.finalResp != want {
		bad("the final came with a response: %v, want %v", r.finalResp, want)
	}
	switch {
	case r.hostCancelled:
		if r.next != 0 || !r.finalResp {
			bad("the server's CANCELLED error came after %d responses (final with it: %v)", r.next, r.finalResp)
		}
	case r.mode&stressUntilCancelled != 0:
		if !r.cancelErr {
			bad("the backend never reported seeing the cancellation (%d responses)", r.next)
		}
	case r.cancelAfter > 0 || r.cancelNow:
		if r.cancelErr == (r.next == r.n) {
			bad("%d of %d responses, CANCELLED error %v: want all of them or a CANCELLED error", r.next, r.n, r.cancelErr)
		}
	default:
		if r.next != r.n || r.cancelErr {
			bad("%d of %d responses (CANCELLED error %v)", r.next, r.n, r.cancelErr)
		}
	}
	return out
}

func (r *stressRequest) problem(format string, args ...any) {
	if len(r.problems) < 5 {
		r.problems = append(r.problems, fmt.Sprintf(format, args...))
	}
}

func outputInt32(resp *core.Response, name string) (int32, bool) {
	for _, o := range resp.Outputs {
		if o.Name == name && o.DataType == core.TypeInt32 && len(o.Data) == 4 {
			return int32(binary.LittleEndian.Uint32(o.Data)), true
		}
	}
	return 0, false
}

// stressLog is the server log of a stress test. The backend's per-response
// and per-request lines are only counted; the rest is kept (the last
// stressLogKeep lines), with the backend's summaries and bug reports.
type stressLog struct {
	responseLines atomic.Int64

	mu        sync.Mutex
	kept      []string
	summaries []string
	bugs      []string
}

const stressLogKeep = 2000

var stressSummary = regexp.MustCompile(`stress: summary ((?:\w+=\d+ ?)+)`)

func (l *stressLog) Write(p []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if line == "" {
			continue
		}
		switch {
		case strings.Contains(line, "stress: seq=") && strings.Contains(line, " response "):
			l.responseLines.Add(1)
			continue
		case strings.Contains(line, "stress: seq="):
			continue
		}
		l.mu.Lock()
		if strings.Contains(line, "stress: summary") {
			l.summaries = append(l.summaries, line)
		}
		if strings.Contains(line, "stress: BUG") {
			l.bugs = append(l.bugs, strings.TrimSpace(line))
		}
		l.kept = append(l.kept, line)
		if len(l.kept) > 2*stressLogKeep {
			l.kept = append(l.kept[:0], l.kept[len(l.kept)-stressLogKeep:]...)
		}
		l.mu.Unlock()
	}
	return len(p), nil
}

func (l *stressLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.kept, "")
}

func (l *stressLog) bugLines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.bugs...)
}

// summary adds up the counters of every model version's summary line.
func (l *stressLog) summary(t *testing.T) map[string]uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	sum := map[string]uint64{}
	for _, line := range l.summaries {
		m := stressSummary.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("unreadable summary line %q", line)
			continue
		}
		for _, kv := range strings.Fields(m[1]) {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseUint(v, 10, 64)
			sum[k] += n
		}
	}
	if len(l.summaries) == 0 {
		t.Error("no model version logged its summary")
	}
	return sum
}
