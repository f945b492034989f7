package reliability

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// stallTimeout is the --grpc-stream-stall-timeout the tests of
// non-reading clients run with.
const stallTimeout = 2 * time.Second

// bystander calls model with req every period until stop closes, and
// returns the latency of each call; a failed call is an error.
type bystander struct {
	mu        sync.Mutex
	latencies []time.Duration
	errs      []error
}

func (b *bystander) run(ctx context.Context, call func(context.Context) error, period time.Duration, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(period):
		}
		begin := time.Now()
		err := call(ctx)
		b.mu.Lock()
		b.latencies = append(b.latencies, time.Since(begin))
		if err != nil {
			b.errs = append(b.errs, err)
		}
		b.mu.Unlock()
	}
}

// summary returns the calls' count, median and maximum latency.
func (b *bystander) summary() (int, time.Duration, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.latencies) == 0 {
		return 0, 0, 0
	}
	l := slices.Clone(b.latencies)
	slices.Sort(l)
	return len(l), l[len(l)/2], l[len(l)-1]
}

func unaryIdentity(c pb.GRPCInferenceServiceClient) func(context.Context) error {
	req, _ := client.Request{Model: "identity_int32", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{4}, 1, 2, 3, 4)}}.Message()
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, err := c.ModelInfer(ctx, req)
		return err
	}
}

// cutOffLogged is what the server logs when it cuts off a stream whose
// client does not read (grpcserver's inferStream.cutOff).
const cutOffLogged = "its stream is cut off"

// cutOffWait bounds the waits for a cut-off: filling a stream, then the
// stall timeout, then reading what the client had buffered, on a machine
// under load.
const cutOffWait = 2 * time.Minute

// bystanderWindow is the least time a bystander is measured for beside a
// client that does not read: the stream fills, stalls for stallTimeout and
// is cut off, and the bystander goes on after that.
const bystanderWindow = 3*stallTimeout + time.Second

// waitCutOff waits until the server has cut off a stream, at most
// testenv.StartPatience, and until window (nil: none) has fired. Only then may the
// test read the non-reading stream: reading it earlier would drain the
// very buffers whose filling the cut-off needs.
func waitCutOff(t *testing.T, srv *testenv.Server, window <-chan time.Time) {
	t.Helper()
	srv.AwaitOutput(t, "the cut-off of the non-reading stream", func(log string) bool { return strings.Contains(log, cutOffLogged) })
	if window != nil {
		<-window
	}
}

// cutOffCode reads what is left of a stream that the server has cut off
// and returns the status it ended with and how many messages came before.
// It reads for at most cutOffWait: then it ends the stream with end (its
// context's cancel), so that a stream that goes on fails the test with
// Canceled rather than hanging it.
func cutOffCode(st *client.Stream, end context.CancelFunc) (codes.Code, int) {
	timer := time.AfterFunc(cutOffWait, end)
	defer timer.Stop()
	n := 0
	for {
		_, err := st.Recv()
		if err != nil {
			return status.Code(err), n
		}
		n++
	}
}

// peakThreads samples the server's thread count until stop closes.
func peakThreads(t *testing.T, srv *testenv.Server, stop <-chan struct{}) <-chan int64 {
	peak := make(chan int64, 1)
	go func() {
		var max int64
		for {
			if n := srv.ProcStatus(t, "Threads"); n > max {
				max = n
			}
			select {
			case <-stop:
				peak <- max
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return peak
}

// TestNonReadingClientIsCutOffAndOthersAreServed: a client pipelines large
// identity requests on a stream and never reads. identity answers inside
// Execute, so once the stream's buffers are full the model's one instance
// waits, but never longer than the stall timeout: then the stream ends
// with RESOURCE_EXHAUSTED, its requests are cancelled, and a bystander's
// unary calls to the same model go on. The client sends until the server
// ends the stream, however long filling its buffers takes (some 380
// requests of 256 KiB: the stream's 64 MiB bound, what the server has read
// and what HTTP/2 flow control and the sockets hold).
func TestNonReadingClientIsCutOffAndOthersAreServed(t *testing.T) {
	srv := start(t, "", "--grpc-stream-stall-timeout", fmt.Sprint(stallTimeout.Milliseconds()))
	_, hostile := srv.Dial(t)
	_, polite := srv.Dial(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	st, err := client.OpenStream(ctx, hostile)
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]int32, 64<<10) // 256 KiB a request
	var sent atomic.Int64
	sendDone := make(chan struct{})
	go func() {
		defer close(sendDone)
		for i := 0; ; i++ {
			req := client.Request{Model: "identity_int32", ID: fmt.Sprint(i), Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{int64(len(payload))}, payload...)}}
			if st.Send(req) != nil {
				return // the stream ended
			}
			sent.Add(1)
		}
	}()

	stop := make(chan struct{})
	var by bystander
	done := make(chan struct{})
	window := time.After(bystanderWindow)
	go func() { by.run(ctx, unaryIdentity(polite), 10*time.Millisecond, stop); close(done) }()
	waitCutOff(t, srv, window)
	close(stop)
	<-done

	code, buffered := cutOffCode(st, cancel)
	cancel()
	<-sendDone
	if code != codes.ResourceExhausted {
		t.Errorf("the non-reading stream ended with %v, want ResourceExhausted", code)
	}
	calls, median, max := by.summary()
	for _, err := range by.errs {
		t.Errorf("bystander call failed: %v", err)
	}
	if calls < 10 {
		t.Errorf("the bystander completed only %d calls", calls)
	}
	if bound := stallTimeout + 3*time.Second; max > bound {
		t.Errorf("the bystander waited up to %v, more than the stall timeout allows (%v)", max, bound)
	}
	t.Logf("non-reading client: sent %d requests, read %d responses, then %v; bystander: %d calls, median %v, max %v (stall timeout %v)",
		sent.Load(), buffered, code, calls, median.Round(time.Microsecond), max.Round(time.Millisecond), stallTimeout)

	// The model serves as before.
	if err := unaryIdentity(polite)(context.Background()); err != nil {
		t.Fatalf("identity after the cut-off: %v", err)
	}
}

// squareRequest asks square_int32 for n responses.
func squareRequest(id string, n int32) client.Request {
	return client.Request{Model: "square_int32", ID: id, Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, n)}}
}

// TestPipelinedRequestsWithoutReadingHoldBoundedThreads: a client
// pipelines tens of thousands of square requests and never reads. square
// starts a thread per request; the stream stops reading at its pending
// limit, so the threads stay bounded by it, and after the stall timeout
// the stream is cut off and they end. A bystander streaming square on
// another connection keeps being answered. Its requests queue for square's
// one instance behind those of the pipeline the server has read, each a
// thread start: the pending limit is 256 in `make test` (a 2-core machine
// under load starts 1024 in more than the bystander's bound), and the
// default, 1024, under -soak.
func TestPipelinedRequestsWithoutReadingHoldBoundedThreads(t *testing.T) {
	pendingLimit := int64(scale(256, 1024))
	srv := start(t, "", "--grpc-stream-stall-timeout", fmt.Sprint(stallTimeout.Milliseconds()),
		"--grpc-max-stream-pending-requests", fmt.Sprint(pendingLimit))
	_, hostile := srv.Dial(t)
	_, polite := srv.Dial(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := srv.ProcStatus(t, "Threads")

	stop := make(chan struct{})
	window := time.After(bystanderWindow)
	peak := peakThreads(t, srv, stop)
	st, err := client.OpenStream(ctx, hostile)
	if err != nil {
		t.Fatal(err)
	}
	pipelined := scale(5000, 35000)
	var sent atomic.Int64
	sendDone := make(chan struct{})
	go func() {
		defer close(sendDone)
		for i := range pipelined {
			if st.Send(squareRequest(fmt.Sprint(i), 64)) != nil {
				return
			}
			sent.Add(1)
		}
	}()

	// The bystander: one request of 4 responses at a time on its own stream.
	bySt, err := client.OpenStream(ctx, polite)
	if err != nil {
		t.Fatal(err)
	}
	var by bystander
	byDone := make(chan struct{})
	go func() {
		by.run(ctx, func(context.Context) error {
			if err := bySt.Send(squareRequest("by", 4)); err != nil {
				return err
			}
			for got := 0; got < 4; {
				res, err := bySt.Recv()
				if err != nil {
					return err
				}
				if res.Err != nil {
					return res.Err
				}
				if !res.Final || res.Response != nil {
					got++
				}
			}
			return nil
		}, 10*time.Millisecond, stop)
		close(byDone)
	}()
	waitCutOff(t, srv, window)
	close(stop)
	<-byDone
	maxThreads := <-peak

	code, buffered := cutOffCode(st, cancel)
	if code != codes.ResourceExhausted {
		t.Errorf("the non-reading stream ended with %v, want ResourceExhausted", code)
	}
	cancel()
	<-sendDone
	if maxThreads > before+pendingLimit+64 {
		t.Errorf("the server peaked at %d threads (%d before): more than the pending limit (%d) allows", maxThreads, before, pendingLimit)
	}
	// The threads end once the stream is gone.
	var after int64
	testenv.Eventually(func() bool {
		after = srv.ProcStatus(t, "Threads")
		return after <= before+16
	})
	if after > before+16 {
		t.Errorf("%d threads are left after the stream was cut off (%d before)", after, before)
	}
	calls, median, max := by.summary()
	for _, err := range by.errs {
		t.Errorf("bystander request failed: %v", err)
	}
	if calls < 10 {
		t.Errorf("the bystander completed only %d requests", calls)
	}
	if bound := 3 * time.Second; max > bound {
		t.Errorf("the bystander waited up to %v (bound %v)", max, bound)
	}
	t.Logf("pipelined %d of %d square requests without reading, read %d responses, then %v; server threads: %d before, peak %d, %d after; bystander: %d requests, median %v, max %v",
		sent.Load(), pipelined, buffered, code, before, maxThreads, after, calls, median.Round(time.Microsecond), max.Round(time.Millisecond))
}

// TestSlowReaderIsNotCutOff: a client that reads slowly but steadily,
// slower than square produces, gets every response: the stall timeout
// cuts off only a client that stops reading.
func TestSlowReaderIsNotCutOff(t *testing.T) {
	srv := start(t, "", "--grpc-stream-stall-timeout", "1000", "--grpc-max-response-pool-size", "64")
	_, c := srv.Dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := client.OpenStream(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1500
	if err := st.Send(squareRequest("slow", n)); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	got := 0
	for got < n {
		res, err := st.Recv()
		if err != nil {
			t.Fatalf("after %d responses: %v", got, err)
		}
		if res.Err != nil {
			t.Fatalf("after %d responses: %v", got, res.Err)
		}
		got++
		time.Sleep(time.Millisecond) // about 1000 responses a second
	}
	t.Logf("read %d responses at about 1/ms in %v with a 64-response buffer and a 1 s stall timeout", got, time.Since(begin).Round(time.Millisecond))
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("expected the stream to end after the last response, got %v", err)
	}
}
