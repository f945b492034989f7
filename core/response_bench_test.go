package core

import (
	"testing"
	"time"
)

// BenchmarkResponderSend sends a decoupled request's responses to a
// ResponseFunc that takes work long (spinning, as a frontend queueing a
// response would): from one sender, and from several at once, which
// contend for the request.
func BenchmarkResponderSend(b *testing.B) {
	for _, work := range []time.Duration{0, time.Microsecond} {
		fn := func(*Response, bool) {
			for start := time.Now(); time.Since(start) < work; {
			}
		}
		b.Run("work="+work.String()+"/one", func(b *testing.B) {
			b.ReportAllocs()
			p := newResponder(&Model{name: "m", decoupled: true}, "r", nil, false, fn)
			resp := &Response{}
			for b.Loop() {
				if err := p.Send(resp, false); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("work="+work.String()+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			p := newResponder(&Model{name: "m", decoupled: true}, "r", nil, false, fn)
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				resp := &Response{}
				for pb.Next() {
					if err := p.Send(resp, false); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkResponseStatistics records the statistics of decoupled
// responses, as a backend reports one per response: from one request, and
// from requests on several goroutines at once (a stream each), which
// report into the same model.
func BenchmarkResponseStatistics(b *testing.B) {
	b.Run("one", func(b *testing.B) {
		m := &Model{name: "m", decoupled: true}
		p := newResponder(m, "r", nil, false, func(*Response, bool) {})
		for b.Loop() {
			m.stats.response(p, 1, 2, 3, ResponseSucceeded)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		m := &Model{name: "m", decoupled: true}
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			p := newResponder(m, "r", nil, false, func(*Response, bool) {})
			for pb.Next() {
				m.stats.response(p, 1, 2, 3, ResponseSucceeded)
				if p.statsIndex == 64 { // a stream's 64 responses, then the next request's
					p = newResponder(m, "r", nil, false, func(*Response, bool) {})
				}
			}
		})
	})
}
