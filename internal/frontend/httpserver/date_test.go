package httpserver

import (
	"net/http"
	"testing"
	"time"
)

// TestHTTPDateIsTheCurrentSecond: the Date header reads as net/http
// writes it, names the second it is asked in, is shared within that
// second and follows the clock into the next.
func TestHTTPDateIsTheCurrentSecond(t *testing.T) {
	check := func() []string {
		before := time.Now().Truncate(time.Second)
		h := httpDate()
		after := time.Now()
		at, err := http.ParseTime(h[0])
		if err != nil || h[0] != at.UTC().Format(http.TimeFormat) {
			t.Fatalf("Date %q: %v, or not in http.TimeFormat", h[0], err)
		}
		if at.Before(before) || at.After(after) {
			t.Fatalf("Date %q, asked between %v and %v", h[0], before, after)
		}
		return h
	}
	first := check()
	for range 100 {
		check()
	}
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
	if next := check(); next[0] == first[0] {
		t.Fatalf("Date %q a second later", next[0])
	}
}

func BenchmarkHTTPDate(b *testing.B) {
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			httpDate()
		}
	})
	b.Run("net/http", func(b *testing.B) {
		var buf [len(http.TimeFormat)]byte
		for b.Loop() {
			time.Now().UTC().AppendFormat(buf[:0], http.TimeFormat)
		}
	})
}
