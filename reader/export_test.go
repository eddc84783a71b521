package reader

// Flying returns how many callers are between a cache miss and the end of
// the load they run or wait on, so that a test can tell when concurrent
// callers all wait on one load.
func (c *DeleteCache) Flying() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flying
}

// WithBatchEntries makes the leaves of a Reader's streams decode n entries
// at a time, so that tests can put batch boundaries inside rows.
func WithBatchEntries(n int) Option {
	return func(r *Reader) { r.entries = n }
}
