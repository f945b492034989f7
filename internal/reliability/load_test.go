package reliability

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// repeatRequest asks repeat_int32 for n responses, OUT = base+i with
// IDX = i, ending with an empty final.
func repeatRequest(id string, base int32, n int) client.Request {
	in := make([]int32, n)
	delay := make([]uint32, n)
	for i := range in {
		in[i] = base + int32(i)
	}
	return client.Request{Model: "repeat_int32", ID: id, Inputs: []client.Tensor{
		client.Int32s("IN", []int64{int64(n)}, in...),
		client.Uint32s("DELAY", []int64{int64(n)}, delay...),
		client.Uint32s("WAIT", []int64{1}, 0),
	}, Params: map[string]any{client.EmptyFinalParam: true}}
}

// exactlyOnce checks what one stream received for the requests it sent:
// for each id, OUT = base+i and IDX = i in order, then one final, nothing
// after it.
type exactlyOnce struct {
	want map[string]expectation
	got  map[string]*received
}

type expectation struct {
	base int32
	n    int
}

type received struct {
	next  int
	final bool
}

func (e *exactlyOnce) add(id string, base int32, n int) {
	e.want[id] = expectation{base, n}
	e.got[id] = &received{}
}

func (e *exactlyOnce) take(res client.Result) error {
	if res.Err != nil {
		return fmt.Errorf("request %q failed: %v", res.ID, res.Err)
	}
	w, ok := e.want[res.ID]
	if !ok {
		return fmt.Errorf("a response for request %q, which this stream never sent", res.ID)
	}
	g := e.got[res.ID]
	if g.final {
		return fmt.Errorf("request %q: a response after its final", res.ID)
	}
	if outs, _ := client.Outputs(res.Response); len(outs) > 0 {
		out, err := client.Output(res.Response, "OUT")
		if err != nil {
			return fmt.Errorf("request %q: %v", res.ID, err)
		}
		idx, err := client.Output(res.Response, "IDX")
		if err != nil {
			return fmt.Errorf("request %q: %v", res.ID, err)
		}
		v, _ := out.AsInt32s()
		i, _ := idx.AsUint32s()
		if len(v) != 1 || len(i) != 1 || int(i[0]) != g.next || v[0] != w.base+int32(g.next) {
			return fmt.Errorf("request %q: response %d is OUT=%v IDX=%v, want OUT=%d IDX=%d", res.ID, g.next, v, i, w.base+int32(g.next), g.next)
		}
		g.next++
	}
	if res.Final {
		g.final = true
		if g.next != w.n {
			return fmt.Errorf("request %q: final after %d of %d responses", res.ID, g.next, w.n)
		}
	}
	return nil
}

func (e *exactlyOnce) complete() error {
	for id, g := range e.got {
		if !g.final {
			return fmt.Errorf("request %q: %d of %d responses and no final", id, g.next, e.want[id].n)
		}
	}
	return nil
}

// runStream sends requests requests on one stream while reading, and
// checks the exchange.
func runStream(ctx context.Context, c pb.GRPCInferenceServiceClient, stream, requests int) (int, error) {
	st, err := client.OpenStream(ctx, c)
	if err != nil {
		return 0, err
	}
	check := &exactlyOnce{want: map[string]expectation{}, got: map[string]*received{}}
	sent := make(chan error, 1)
	for r := range requests {
		check.add(fmt.Sprintf("%d-%d", stream, r), int32(stream*1000+r*10), r%4+1)
	}
	go func() {
		for r := range requests {
			id := fmt.Sprintf("%d-%d", stream, r)
			if err := st.Send(repeatRequest(id, int32(stream*1000+r*10), r%4+1)); err != nil {
				sent <- err
				return
			}
		}
		sent <- st.CloseSend()
	}()
	messages := 0
	for {
		res, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return messages, fmt.Errorf("stream %d: %v", stream, err)
		}
		messages++
		if err := check.take(res); err != nil {
			return messages, fmt.Errorf("stream %d: %v", stream, err)
		}
	}
	if err := <-sent; err != nil {
		return messages, fmt.Errorf("stream %d: send: %v", stream, err)
	}
	return messages, check.complete()
}

// TestManyStreamsGetEveryResponseExactlyOnce: many streams at once over a
// few connections, each pipelining requests to a decoupled model; every
// response arrives once, in order, and each request ends with one final.
func TestManyStreamsGetEveryResponseExactlyOnce(t *testing.T) {
	srv := start(t, "")
	streams, requests := scale(100, 1000), scale(20, 100)
	const connections = 8
	clients := make([]pb.GRPCInferenceServiceClient, connections)
	for i := range clients {
		_, clients[i] = srv.Dial(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(scale(2, 15))*time.Minute)
	defer cancel()
	begin := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	errs := make(chan error, streams)
	for s := range streams {
		wg.Go(func() {
			n, err := runStream(ctx, clients[s%connections], s, requests)
			mu.Lock()
			total += n
			mu.Unlock()
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d streams x %d requests: %d messages in %v, each exactly once; server threads %d, RSS %d MiB",
		streams, requests, total, time.Since(begin).Round(time.Millisecond),
		srv.ProcStatus(t, "Threads"), srv.ProcStatus(t, "VmHWM")>>20)
}
