package coretest

import (
	"slices"
	"time"

	"github.com/tritonhost/tritonhost/core"
)

// Behaviour is what a model of the fake backend does with one execution. It
// runs where BackendInstance.Execute does, and its
// return value is Execute's: nil passes ownership of every request to the
// backend, an error leaves it with the server.
//
// The behaviours here decide who answers and when the requests are
// released; the Answer they take decides what each request is sent.
type Behaviour func(x *Exec) error

// Echo answers every request with one response echoing its inputs (see
// EchoResponse), then releases it.
func Echo() Behaviour { return Answering(Once()) }

// Answering answers each request of the batch in turn on the instance's
// goroutine, then releases it.
func Answering(a Answer) Behaviour {
	return func(x *Exec) error {
		for _, r := range x.Batch {
			answerAndRelease(a, x, r)
		}
		return nil
	}
}

// Detached keeps the requests and returns at once; each is answered, then
// released, on a goroutine of its own. With an Answer that waits (After,
// AwaitCancel) the backend holds the request unreleased until then.
func Detached(a Answer) Behaviour {
	return func(x *Exec) error {
		for _, r := range x.Batch {
			go answerAndRelease(a, x, r)
		}
		return nil
	}
}

func answerAndRelease(a Answer, x *Exec, r *core.Request) {
	a(x, r)
	_ = x.Release(r, core.ReleaseAll)
}

// Async releases each request at once, holding it (Request.Hold), and
// answers it on a goroutine of its own, dropping the hold afterwards: the
// way a decoupled backend answers from its own threads.
func Async(a Answer) Behaviour {
	return func(x *Exec) error {
		for _, r := range x.Batch {
			x.Hold(r)
			_ = x.Release(r, core.ReleaseAll)
			go func() {
				a(x, r)
				x.Drop(r)
			}()
		}
		return nil
	}
}

// Fail returns err from Execute without touching the requests.
func Fail(err error) Behaviour {
	return func(*Exec) error { return err }
}

// Gated waits for g before running b, when the batch holds one of ids, or
// always when ids is empty: the instance stays busy until the test opens g.
func Gated(g *Gate, b Behaviour, ids ...string) Behaviour {
	return func(x *Exec) error {
		for _, r := range x.Batch {
			if len(ids) == 0 || slices.Contains(ids, r.ID()) {
				g.Wait()
				break
			}
		}
		return b(x)
	}
}

// Delayed sleeps for d before running b.
func Delayed(d time.Duration, b Behaviour) Behaviour {
	return func(x *Exec) error {
		time.Sleep(d)
		return b(x)
	}
}

// Inspect calls f with every request of the batch, then runs b.
func Inspect(f func(r *core.Request), b Behaviour) Behaviour {
	return func(x *Exec) error {
		for _, r := range x.Batch {
			f(r)
		}
		return b(x)
	}
}

// Reporting reports statistics for every request of the batch (a success
// or a failure) and for the execution, then runs b. The timestamps are
// offsets from the execution's start, so durations are known exactly: a
// request's compute input, infer and output take 10, 20 and 30 ns, the
// batch's 100, 200 and 300 ns.
func Reporting(success bool, b Behaviour) Behaviour {
	return func(x *Exec) error {
		start := core.Nanotime()
		var size uint64
		for _, r := range x.Batch {
			x.Instance.ReportStatistics(r, success, start, start+10, start+30, start+60)
			size += r.BatchSize()
		}
		x.Instance.ReportBatchStatistics(size, start, start+100, start+300, start+600)
		return b(x)
	}
}
