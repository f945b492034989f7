package abi

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// internBytes interns b as the C side's bytes would be: from memory that
// is not the string's.
func internBytes(b []byte) string {
	if len(b) == 0 {
		return internString(nil, 0)
	}
	return internString(unsafe.Pointer(&b[0]), len(b))
}

func TestInternStringReturnsOneStringPerText(t *testing.T) {
	for _, text := range []string{"", "a", "abc", "abcd", "param0", "param1", "seven77", "eight888", "nine99999",
		"an example string parameter", strings.Repeat("x", maxParameterStringBytes)} {
		t.Run(fmt.Sprintf("%d bytes", len(text)), func(t *testing.T) {
			first := internBytes([]byte(text))
			second := internBytes([]byte(text)) // other bytes, same text
			if first != text || second != text {
				t.Fatalf("interned %q and %q, want %q", first, second, text)
			}
			if len(text) > 0 && unsafe.StringData(first) != unsafe.StringData(second) {
				t.Errorf("%q interned twice gave two strings", text)
			}
			if n := testing.AllocsPerRun(100, func() { internBytes([]byte(text)) }); n != 0 {
				t.Errorf("interning %q again allocates %v times, want 0", text, n)
			}
		})
	}
}

func TestInternStringCopiesLongStrings(t *testing.T) {
	text := strings.Repeat("y", maxParameterStringBytes+1)
	b := []byte(text)
	first, second := internBytes(b), internBytes(b)
	if first != text || second != text {
		t.Fatalf("got %q and %q, want %q", first, second, text)
	}
	if unsafe.StringData(first) == unsafe.StringData(second) || unsafe.StringData(first) == &b[0] {
		t.Errorf("a string of %d bytes was interned or not copied", len(text))
	}
}

// TestInternStringKeepsCollidingStrings interns texts that share a slot
// of the cache in turn: each lookup must return its own text, without
// allocating once interned.
func TestInternStringKeepsCollidingStrings(t *testing.T) {
	bySlot := map[uint64][]string{}
	var a, b string
	for i := 0; a == ""; i++ {
		text := fmt.Sprintf("collide%d", i)
		slot := recentSlot(unsafe.Pointer(unsafe.StringData(text)), len(text))
		if prev := bySlot[slot]; len(prev) > 0 {
			a, b = prev[0], text
		}
		bySlot[slot] = append(bySlot[slot], text)
	}
	for range 3 {
		for _, text := range []string{a, b} {
			if got := internBytes([]byte(text)); got != text {
				t.Fatalf("interned %q, want %q", got, text)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { internBytes([]byte(a)); internBytes([]byte(b)) }); n != 0 {
		t.Errorf("alternating two interned strings of one slot allocates %v times, want 0", n)
	}
}

// TestInternStringStopsAtItsBound fills the table and checks that later
// texts are still returned right, as copies, and that the table stays at
// its bound. The table and cache are the process's: they are put back.
func TestInternStringStopsAtItsBound(t *testing.T) {
	parameterStrings.mu.Lock()
	saved := parameterStrings.table.Load()
	parameterStrings.table.Store(nil)
	parameterStrings.mu.Unlock()
	clearRecent := func() {
		for i := range recentStrings {
			recentStrings[i].Store(nil)
		}
	}
	clearRecent()
	t.Cleanup(func() {
		parameterStrings.mu.Lock()
		parameterStrings.table.Store(saved)
		parameterStrings.mu.Unlock()
		clearRecent()
	})
	for i := range maxParameterStrings + 10 {
		text := fmt.Sprintf("bound%d", i)
		if got := internBytes([]byte(text)); got != text {
			t.Fatalf("interned %q, want %q", got, text)
		}
	}
	if n := len(*parameterStrings.table.Load()); n != maxParameterStrings {
		t.Errorf("the table holds %d strings, want its bound %d", n, maxParameterStrings)
	}
	over := []byte(fmt.Sprintf("bound%d", maxParameterStrings+5))
	if first, second := internBytes(over), internBytes(over); first != string(over) || second != string(over) ||
		unsafe.StringData(first) == unsafe.StringData(second) {
		t.Errorf("a text past the bound gave %q and %q, want two copies of %q", first, second, over)
	}
}

func BenchmarkInternString(b *testing.B) {
	texts := [][]byte{[]byte("param0"), []byte("param1"), []byte("param2"), []byte("an example string parameter")}
	for _, text := range texts {
		internBytes(text)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, text := range texts {
			internBytes(text)
		}
	}
}
