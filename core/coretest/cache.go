package coretest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// Cache is a Go-native core.ResponseCache for tests: a map of entries
// that can be made to fail its lookups or inserts (FailLookups,
// FailInserts), to hang in them until a gate opens (HangLookups,
// HangInserts), or to hand back an entry it did not get (Corrupt). It
// counts its calls, and tests wait for them (WaitCalls). Safe for
// concurrent use.
type Cache struct {
	mu         sync.Mutex
	entries    map[string][]byte
	lookups    int // calls returned
	inserts    int
	waiting    [2]int // lookups and inserts waiting at their gate
	failLookup error
	failInsert error
	hangLookup *Gate
	hangInsert *Gate
	corrupt    bool
	closed     int
	changed    chan struct{} // closed and replaced on every call's return
}

var _ core.ResponseCache = (*Cache)(nil)

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{entries: map[string][]byte{}, changed: make(chan struct{})}
}

// FailLookups makes every lookup fail with err (nil: succeed again).
func (c *Cache) FailLookups(err error) *Cache {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failLookup = err
	return c
}

// FailInserts makes every insert fail with err (nil: succeed again).
func (c *Cache) FailInserts(err error) *Cache {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failInsert = err
	return c
}

// HangLookups makes every lookup wait for g first.
func (c *Cache) HangLookups(g *Gate) *Cache {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hangLookup = g
	return c
}

// HangInserts makes every insert wait for g first.
func (c *Cache) HangInserts(g *Gate) *Cache {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hangInsert = g
	return c
}

// Corrupt makes lookups that find a key hand back bytes the server never
// wrote.
func (c *Cache) Corrupt() *Cache {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corrupt = true
	return c
}

// Lookup implements core.ResponseCache.
func (c *Cache) Lookup(key string, alloc func(size int) []byte) (found bool, err error) {
	c.wait(0)
	defer c.returned(func() { c.lookups++ })
	c.mu.Lock()
	entry, ok := c.entries[key]
	fail, corrupt := c.failLookup, c.corrupt
	c.mu.Unlock()
	switch {
	case fail != nil:
		return false, fail
	case !ok:
		return false, nil
	case corrupt:
		entry = []byte("not an entry")
	}
	buf := alloc(len(entry))
	if buf == nil {
		return false, errors.New("coretest cache: the server refused the entry's size")
	}
	copy(buf, entry)
	return true, nil
}

// Insert implements core.ResponseCache.
func (c *Cache) Insert(key string, entry []byte) error {
	c.wait(1)
	defer c.returned(func() { c.inserts++ })
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failInsert != nil {
		return c.failInsert
	}
	if _, ok := c.entries[key]; ok {
		return core.Errorf(core.CodeAlreadyExists, "key %s already exists", key)
	}
	c.entries[key] = append([]byte(nil), entry...)
	return nil
}

// Close implements core.ResponseCache.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed++
	return nil
}

// wait waits at the gate the test set (read under the lock), counted in
// waiting[which] meanwhile.
func (c *Cache) wait(which int) {
	c.mu.Lock()
	g := c.hangLookup
	if which == 1 {
		g = c.hangInsert
	}
	if g != nil {
		c.waiting[which]++
	}
	c.mu.Unlock()
	if g == nil {
		return
	}
	g.Wait()
	c.mu.Lock()
	c.waiting[which]--
	c.mu.Unlock()
}

// Hanging returns how many lookups and inserts wait at their gate now.
func (c *Cache) Hanging() (lookups, inserts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waiting[0], c.waiting[1]
}

func (c *Cache) returned(count func()) {
	c.mu.Lock()
	count()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// Len returns the number of entries the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Calls returns how many lookups and inserts have returned.
func (c *Cache) Calls() (lookups, inserts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lookups, c.inserts
}

// Closed returns how many times Close was called.
func (c *Cache) Closed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// WaitCalls waits until at least lookups lookups and inserts inserts have
// returned, failing the test after testenv.Patience.
func (c *Cache) WaitCalls(t testing.TB, lookups, inserts int) {
	t.Helper()
	deadline := time.NewTimer(testenv.Patience)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		ok := c.lookups >= lookups && c.inserts >= inserts
		changed := c.changed
		l, i := c.lookups, c.inserts
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("coretest: gave up waiting after %v for %d lookups and %d inserts to return (%d and %d did)", testenv.Patience, lookups, inserts, l, i)
		}
	}
}
