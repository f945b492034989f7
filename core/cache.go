package core

// ResponseCache holds responses of models that enable response_cache, by a
// key that names the request (the server's own, see cacheKey): a Triton
// cache library (package loader finds it, package abi calls it) or a
// Go-native one. The server makes its calls from goroutines of its own,
// never from a backend's thread, several at once; it bounds how many run
// at once and stops waiting for one that does not return in time (see
// Options.CacheCallTimeout), so a slow or hung cache delays no request by
// more than that and fails none. Implementations must be safe for
// concurrent use.
type ResponseCache interface {
	// Lookup looks key up. When the cache holds it, Lookup calls alloc
	// once with the entry's size and copies the entry into the slice alloc
	// returns, and returns true. alloc returns nil when the server will not
	// hold that much (Options.CacheMaxBytes); Lookup then fails. A key the
	// cache does not hold is false with no error. An error is a failed
	// lookup, which the server counts as a miss.
	Lookup(key string, alloc func(size int) []byte) (bool, error)
	// Insert stores entry under key. The cache copies it: entry is valid
	// only during the call. A key the cache already holds is an error of
	// CodeAlreadyExists, which the server does not count as a failure;
	// other errors it logs and counts (ModelCounters.CacheInsertFailures).
	Insert(key string, entry []byte) error
	// Close finalizes the cache. The server calls it once, from Stop,
	// after every Lookup and Insert has returned; a cache call still
	// running when Stop gives up keeps the cache open.
	Close() error
}
