package reader

// WithBatchEntries makes the leaves of a Reader's streams decode n entries
// at a time, so that tests can put batch boundaries inside rows.
func WithBatchEntries(n int) Option {
	return func(r *Reader) { r.entries = n }
}
