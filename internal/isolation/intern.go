package isolation

// internTable shares the strings a worker sends with every response (its
// parameters' names and short string values: Triton's identity sends the
// same three with each): the first of each is kept, and the later ones
// allocate nothing. It keeps at most maxInterned strings of
// maxInternedBytes each, which bounds what a worker can make the server
// hold; other strings are copied each time. One goroutine uses a table
// (a process's reader): no lock. A nil table interns nothing.
type internTable map[string]string

const (
	maxInterned      = 256
	maxInternedBytes = 64
)

// get returns b as a string: the table's when it holds it.
func (t internTable) get(b []byte) string {
	if s, ok := t[string(b)]; ok { // the lookup does not copy b
		return s
	}
	s := string(b)
	if t != nil && len(b) <= maxInternedBytes && len(t) < maxInterned {
		t[s] = s
	}
	return s
}
