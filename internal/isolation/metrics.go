package isolation

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/tritonhost/tritonhost/internal/frontend/metricsserver"
	"github.com/tritonhost/tritonhost/internal/wire"
)

// The metric families a backend registers (TRITONSERVER_MetricFamilyNew)
// live in its worker; the server's metrics endpoint serves them beside
// its own. When scraped, the Provider (a prometheus.Collector) asks every
// serving worker for its families (msgCollect); each answers with them in
// Prometheus' delimited protobuf format (msgCollected), and the provider
// hands them on as they are. A worker that does not answer within
// collectTimeout is left out of that scrape.

// collectTimeout bounds how long a scrape waits for a worker's families.
const collectTimeout = 2 * time.Second

// maxFamiliesBytes bounds the families one worker may send.
const maxFamiliesBytes = 64 << 20

// protoDelim is the format the families travel in.
var protoDelim = expfmt.NewFormat(expfmt.TypeProtoDelim)

var _ prometheus.Collector = (*Provider)(nil)

// Describe implements prometheus.Collector: the families come and go with
// the workers' backends, so the provider describes none ahead (unchecked).
func (p *Provider) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector: the families of every serving
// worker, gathered at once.
func (p *Provider) Collect(ch chan<- prometheus.Metric) {
	var procs []*process
	p.mu.Lock()
	for mod := range p.models {
		if pr, err := mod.current(); err == nil {
			procs = append(procs, pr)
		}
	}
	p.mu.Unlock()
	results := make([][]*dto.MetricFamily, len(procs))
	var wg sync.WaitGroup
	for i, pr := range procs {
		wg.Go(func() {
			fams, err := pr.collect(collectTimeout)
			if err != nil {
				p.opts.Logger.Verbosef(1, "model %q: its worker's metric families: %v", pr.model.m.Name(), err)
				return
			}
			results[i] = fams
		})
	}
	wg.Wait()
	for _, fams := range results {
		for _, f := range fams {
			emitFamily(ch, f)
		}
	}
}

// emitFamily hands on the series of a family a worker gathered.
func emitFamily(ch chan<- prometheus.Metric, f *dto.MetricFamily) {
	descs := map[string]*prometheus.Desc{} // by label names
	for _, m := range f.GetMetric() {
		names := make([]string, len(m.GetLabel()))
		key := ""
		for i, l := range m.GetLabel() {
			names[i] = l.GetName()
			key += l.GetName() + ","
		}
		d := descs[key]
		if d == nil {
			d = prometheus.NewDesc(f.GetName(), f.GetHelp(), names, nil)
			descs[key] = d
		}
		ch <- gatheredMetric{desc: d, m: m}
	}
}

// gatheredMetric is a series as a worker's registry wrote it.
type gatheredMetric struct {
	desc *prometheus.Desc
	m    *dto.Metric
}

func (g gatheredMetric) Desc() *prometheus.Desc { return g.desc }

func (g gatheredMetric) Write(out *dto.Metric) error {
	out.Label = g.m.Label
	out.Gauge, out.Counter, out.Summary, out.Untyped, out.Histogram = g.m.Gauge, g.m.Counter, g.m.Summary, g.m.Untyped, g.m.Histogram
	out.TimestampMs = g.m.TimestampMs
	return nil
}

// collect asks the worker for its backend's families and waits for them,
// at most timeout.
func (pr *process) collect(timeout time.Duration) ([]*dto.MetricFamily, error) {
	done := make(chan []byte, 1)
	pr.mu.Lock()
	if pr.dead {
		pr.mu.Unlock()
		return nil, errors.New("the worker is gone")
	}
	pr.nextCollect++
	id := pr.nextCollect
	if pr.collecting == nil {
		pr.collecting = map[uint64]chan []byte{}
	}
	pr.collecting[id] = done
	pr.mu.Unlock()
	defer func() {
		pr.mu.Lock()
		delete(pr.collecting, id)
		pr.mu.Unlock()
	}()
	e := wire.NewEncoder(nil)
	encodeKey(e, msgCollect, id, 0)
	if err := pr.conn.Send(e.Bytes()); err != nil {
		return nil, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case data := <-done:
		return decodeFamilies(data)
	case <-t.C:
		return nil, fmt.Errorf("no answer within %v", timeout)
	}
}

// collected hands the families of collection id to its waiter.
func (pr *process) collected(id uint64, data []byte) {
	pr.mu.Lock()
	done := pr.collecting[id]
	delete(pr.collecting, id)
	pr.mu.Unlock()
	if done != nil {
		done <- append([]byte(nil), data...)
	}
}

// decodeFamilies reads families in the delimited protobuf format.
func decodeFamilies(data []byte) ([]*dto.MetricFamily, error) {
	dec := expfmt.NewDecoder(bytes.NewReader(data), protoDelim)
	var fams []*dto.MetricFamily
	for {
		f := &dto.MetricFamily{}
		if err := dec.Decode(f); err != nil {
			if errors.Is(err, io.EOF) {
				return fams, nil
			}
			return nil, fmt.Errorf("decode the families: %w", err)
		}
		fams = append(fams, f)
	}
}

// sendFamilies answers the server's msgCollect id with the families of the
// worker's backend.
func (w *worker) sendFamilies(id uint64) {
	w.familiesOnce.Do(func() {
		w.families = prometheus.NewRegistry()
		if err := w.families.Register(metricsserver.NewCustomCollector(w.host.Metrics(), w.log)); err != nil {
			w.log.Errorf("worker: metric families: %v", err)
		}
	})
	var buf bytes.Buffer
	fams, err := w.families.Gather()
	if err != nil {
		w.log.Verbosef(1, "worker: metric families: %v", err)
	}
	enc := expfmt.NewEncoder(&buf, protoDelim)
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			w.log.Errorf("worker: encode the metric family %q: %v", f.GetName(), err)
			buf.Reset()
			break
		}
	}
	if buf.Len() > maxFamiliesBytes {
		w.log.Errorf("worker: the backend's metric families take %d bytes, more than the %d the server takes; none are sent", buf.Len(), maxFamiliesBytes)
		buf.Reset()
	}
	e := wire.NewEncoder(nil)
	p, err := newPayload(buf.Len())
	if err != nil {
		w.log.Errorf("worker: metric families: %v", err)
		p, buf = &payload{}, bytes.Buffer{}
	}
	header(e, msgCollected, p)
	e.Uint(id)
	p.put(e, buf.Bytes())
	w.send(e, p)
}
