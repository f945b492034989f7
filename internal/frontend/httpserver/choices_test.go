package httpserver

import (
	"strconv"
	"testing"
)

// TestOutputChoicesKeepTheLastChoiceOfEachName: choices of any number of
// outputs, some made twice, read back as a map of them reads.
func TestOutputChoicesKeepTheLastChoiceOfEachName(t *testing.T) {
	for _, n := range []int{0, 1, listedChoices - 1, listedChoices, listedChoices + 1, 5 * listedChoices} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var c outputChoices
			want := map[string]bool{}
			for i := range n {
				name := "out" + strconv.Itoa(i%(n/2+1))
				c.set(name, i%3 == 0)
				want[name] = i%3 == 0
			}
			for i := range n + 2 {
				name := "out" + strconv.Itoa(i)
				got, set := c.get(name)
				w, wantSet := want[name]
				if got != w || set != wantSet {
					t.Errorf("%s: %v, set %v; want %v, set %v", name, got, set, w, wantSet)
				}
			}
		})
	}
}
