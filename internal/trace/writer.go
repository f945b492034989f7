package trace

import (
	"bufio"
	"fmt"
	"os"
	"strconv"

	"github.com/tritonhost/tritonhost/core"
)

// writer is the manager's one goroutine that writes traces: to the trace
// file in ModeTriton, to the Exporter in ModeOpenTelemetry. The trace file
// is Triton's: a JSON array of objects, each trace an object naming it
// (id, model_name, model_version, request_id, parent_id), then one object
// per timestamp, then one per tensor. With a setting's log_frequency N,
// every N of its traces go to a new file <file>.<n> (n counting from 0 for
// each file path); with 0 they go to <file> itself, which is closed (its
// array ended) when the manager closes. A setting that is replaced, or
// whose count runs out, has its last traces written to a file of their
// own, as Triton does. Every byte the files are to hold, written or
// pending, is counted against Options.MaxFileBytes (admit).
type writer struct {
	m       *Manager
	bytes   int64                 // of trace files written and of traces pending, this run
	full    bool                  // a trace has been dropped for the bound (logged once)
	files   map[string]*traceFile // by path
	pending map[*snapshot]*pendingTraces
	retired map[*snapshot]bool // replaced settings whose traces are not all in
	scratch []byte             // one trace, for the file itself
	spare   []byte             // a flushed buffer, for the next pending traces
}

// pendingTraces are a setting's traces not yet written to an indexed file.
type pendingTraces struct {
	buf []byte
	n   uint32
}

// traceFile is one trace file path: the file itself, opened on the first
// trace that goes there, and the next index of its indexed files.
type traceFile struct {
	path  string
	f     *os.File
	w     *bufio.Writer
	first bool // nothing written to f yet
	index int
}

func newWriter(m *Manager) *writer {
	return &writer{m: m, files: map[string]*traceFile{}, pending: map[*snapshot]*pendingTraces{}, retired: map[*snapshot]bool{}}
}

// run writes traces until the manager stops, then writes what is queued
// and closes everything.
func (w *writer) run() {
	defer close(w.m.done)
	for {
		select {
		case f := <-w.m.queue:
			w.write(f)
		case <-w.m.poke:
			w.retire()
		case <-w.m.stop:
			for {
				select {
				case f := <-w.m.queue:
					w.write(f)
					continue
				default:
				}
				break
			}
			w.closeAll()
			return
		}
	}
}

// write writes (or exports) one finished trace.
func (w *writer) write(f finished) {
	snap := f.data.snap
	defer snap.collected.Add(1)
	if snap.Mode == ModeOpenTelemetry {
		w.m.opts.Exporter.Export(f.t, f.data.started)
		return
	}
	if snap.LogFrequency == 0 {
		w.scratch = appendTrace(w.scratch[:0], f.t)
		tf := w.file(snap.File)
		// A separator or the array's brackets, besides the trace.
		if w.admit(int64(len(w.scratch)) + 1 + 2*btoi(tf.f == nil)) {
			tf.append(w, w.scratch)
		}
	} else {
		p := w.pending[snap]
		if p == nil {
			p = &pendingTraces{buf: w.spare}
			w.spare = nil
			w.pending[snap] = p
		}
		before := len(p.buf)
		if p.n > 0 {
			p.buf = append(p.buf, ',')
		}
		p.buf = appendTrace(p.buf, f.t)
		if !w.admit(int64(len(p.buf)-before) + 2*btoi(p.n == 0)) {
			p.buf = p.buf[:before]
		} else if p.n++; p.n >= snap.LogFrequency {
			w.flush(snap)
		}
	}
	if w.done(snap, 1) {
		w.flush(snap)
		delete(w.retired, snap)
	}
}

// admit counts n more bytes of trace files, or refuses them, dropping the
// trace, when they would take the files past Options.MaxFileBytes.
func (w *writer) admit(n int64) bool {
	if max := w.m.opts.MaxFileBytes; w.bytes+n > max {
		w.m.dropped.Add(1)
		if !w.full {
			w.full = true
			w.m.log.Warnf("tracing: the trace files have reached their bound of %d bytes (--trace-file-max-size); a trace that would pass it is dropped, and counted in %s",
				max, DroppedMetric)
		}
		return false
	}
	w.bytes += n
	return true
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// done reports whether every trace of snap is in (with extra being written
// now) and no more will come: it was replaced, or its count ran out.
func (w *writer) done(snap *snapshot, extra uint64) bool {
	snap.mu.Lock()
	created, out := snap.created, snap.remaining == 0
	snap.mu.Unlock()
	return (out || w.retired[snap]) && snap.collected.Load()+extra >= created
}

// retire notes the settings the manager replaced and writes out those
// whose traces are all in.
func (w *writer) retire() {
	for _, s := range w.m.takeRetired() {
		w.retired[s] = true
		if w.done(s, 0) {
			w.flush(s)
			delete(w.retired, s)
		}
	}
}

// flush writes the pending traces of snap to the next indexed file.
func (w *writer) flush(snap *snapshot) {
	p := w.pending[snap]
	delete(w.pending, snap)
	if p == nil || p.n == 0 {
		return
	}
	tf := w.file(snap.File)
	name := tf.path + "." + strconv.Itoa(tf.index)
	tf.index++
	// Written aside and renamed, so that a reader never sees half a file.
	f, err := os.Create(name + ".tmp")
	if err == nil {
		bw := bufio.NewWriter(f)
		_ = bw.WriteByte('[')
		_, _ = bw.Write(p.buf)
		_ = bw.WriteByte(']')
		err = bw.Flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(name+".tmp", name)
		}
	}
	if err != nil {
		w.m.log.Errorf("failed creating trace file: %v", err)
	}
	w.spare = p.buf[:0]
}

func (w *writer) file(path string) *traceFile {
	tf := w.files[path]
	if tf == nil {
		tf = &traceFile{path: path, first: true}
		w.files[path] = tf
	}
	return tf
}

// append adds one trace to the file itself, opening it (and its array)
// on the first.
func (tf *traceFile) append(w *writer, b []byte) {
	if tf.f == nil {
		f, err := os.Create(tf.path)
		if err != nil {
			w.m.log.Errorf("failed creating trace file: %v", err)
			return
		}
		tf.f, tf.w = f, bufio.NewWriter(f)
		_ = tf.w.WriteByte('[')
	}
	if !tf.first {
		_ = tf.w.WriteByte(',')
	}
	tf.first = false
	_, _ = tf.w.Write(b)
	if err := tf.w.Flush(); err != nil {
		w.m.log.Errorf("failed writing trace file %s: %v", tf.path, err)
	}
}

// closeAll writes every pending trace to indexed files and ends the
// array of each trace file written to.
func (w *writer) closeAll() {
	for snap := range w.pending {
		w.flush(snap)
	}
	for _, tf := range w.files {
		if tf.f == nil {
			continue
		}
		_ = tf.w.WriteByte(']')
		err := tf.w.Flush()
		if cerr := tf.f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			w.m.log.Errorf("failed closing trace file %s: %v", tf.path, err)
		}
	}
}

// appendTrace appends one trace as the objects of Triton's trace file.
func appendTrace(b []byte, t *core.Trace) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, t.ID, 10)
	b = append(b, `,"model_name":`...)
	b = appendJSONString(b, t.Model)
	b = append(b, `,"model_version":`...)
	b = strconv.AppendInt(b, t.Version, 10)
	if t.RequestID != "" {
		b = append(b, `,"request_id":`...)
		b = appendJSONString(b, t.RequestID)
	}
	if t.ParentID != 0 {
		b = append(b, `,"parent_id":`...)
		b = strconv.AppendUint(b, t.ParentID, 10)
	}
	b = append(b, '}')
	for _, a := range t.Activities() {
		b = append(b, `,{"id":`...)
		b = strconv.AppendUint(b, t.ID, 10)
		b = append(b, `,"timestamps":[{"name":`...)
		b = appendJSONString(b, a.Name)
		b = append(b, `,"ns":`...)
		b = strconv.AppendUint(b, a.Timestamp, 10)
		b = append(b, `}]}`...)
	}
	for _, tt := range t.Tensors() {
		b = append(b, `,{"id":`...)
		b = strconv.AppendUint(b, t.ID, 10)
		b = append(b, `,"activity":`...)
		b = appendJSONString(b, tt.Activity)
		b = append(b, `,"tensor":{"name":`...)
		b = appendJSONString(b, tt.Name)
		b = append(b, `,"data":`...)
		b = appendJSONString(b, tensorText(tt))
		b = append(b, `,"shape":`...)
		b = appendJSONString(b, shapeText(tt.Shape))
		b = append(b, `,"dtype":`...)
		b = appendJSONString(b, tt.DataType.String())
		b = append(b, `}}`...)
	}
	return b
}

func shapeText(shape []int64) string {
	var b []byte
	for i, d := range shape {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, d, 10)
	}
	return string(b)
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		if c == '"' || c == '\\' {
			b = append(b, '\\', c)
		} else {
			b = fmt.Appendf(b, `\u%04x`, c)
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
