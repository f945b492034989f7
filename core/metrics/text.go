package metrics

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ContentType is the media type of the text WriteText writes.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// WriteText gathers the registry and writes it to w in the Prometheus text
// exposition format (version 0.0.4); see the function WriteText. Families
// without series are left out.
func (r *Registry) WriteText(w io.Writer) error {
	return WriteText(w, r.Gather())
}

// WriteText writes families in the Prometheus text exposition format: for
// each family a # HELP line (left out when the help is empty) and a # TYPE
// line, then one line per series, labels sorted by name. A histogram series
// is written as cumulative <name>_bucket lines with an "le" label, the last
// one le="+Inf", then <name>_sum and <name>_count.
func WriteText(w io.Writer, families []FamilySnapshot) error {
	bw := bufio.NewWriter(w)
	for i := range families {
		if err := writeFamily(bw, &families[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func writeFamily(w *bufio.Writer, f *FamilySnapshot) error {
	if f.Help != "" {
		fmt.Fprintf(w, "# HELP %s %s\n", f.Name, escapeHelp(f.Help))
	}
	fmt.Fprintf(w, "# TYPE %s %v\n", f.Name, f.Kind)
	for i := range f.Series {
		s := &f.Series[i]
		switch f.Kind {
		case KindCounter, KindGauge:
			writeLine(w, f.Name, s.Labels, "", formatFloat(s.Sample.Value))
		case KindHistogram:
			if err := writeHistogram(w, f.Name, s); err != nil {
				return err
			}
		default:
			return fmt.Errorf("metrics: family %q has unsupported kind %v", f.Name, f.Kind)
		}
	}
	return nil
}

func writeHistogram(w *bufio.Writer, name string, s *SeriesSnapshot) error {
	sm := &s.Sample
	if len(sm.Counts) != len(sm.Bounds)+1 {
		return fmt.Errorf("metrics: histogram %q: %d bucket counts for %d bounds", name, len(sm.Counts), len(sm.Bounds))
	}
	var cum uint64
	for i, c := range sm.Counts {
		cum += c
		le := "+Inf"
		if i < len(sm.Bounds) {
			le = formatFloat(sm.Bounds[i])
		}
		writeLine(w, name+"_bucket", s.Labels, le, strconv.FormatUint(cum, 10))
	}
	writeLine(w, name+"_sum", s.Labels, "", formatFloat(sm.Sum))
	writeLine(w, name+"_count", s.Labels, "", strconv.FormatUint(cum, 10))
	return nil
}

// writeLine writes one sample line; le, when not empty, is added as the
// last label.
func writeLine(w *bufio.Writer, name string, labels []Label, le, value string) {
	w.WriteString(name)
	if len(labels) > 0 || le != "" {
		w.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(l.Name)
			w.WriteString(`="`)
			w.WriteString(escapeLabelValue(l.Value))
			w.WriteByte('"')
		}
		if le != "" {
			if len(labels) > 0 {
				w.WriteByte(',')
			}
			w.WriteString(`le="`)
			w.WriteString(le)
			w.WriteByte('"')
		}
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	w.WriteString(value)
	w.WriteByte('\n')
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// escapeHelp escapes a help text: backslash and line feed.
func escapeHelp(s string) string { return helpEscaper.Replace(s) }

// escapeLabelValue escapes a label value: backslash, double quote and line
// feed.
func escapeLabelValue(s string) string { return labelEscaper.Replace(s) }

// formatFloat writes a value as Prometheus parses it: +Inf, -Inf, NaN, or
// the shortest representation that reads back exactly.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
