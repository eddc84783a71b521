//go:build !race

package reader_test

// raceAllocFactor scales the allocation bounds that codecs' output
// buffers dominate: under -race, the compiler no longer fuses
// append([]byte(nil), make([]byte, n)...) into one allocation, so
// io.ReadAll (ocf's deflate) allocates twice what it does in the binary,
// and sync.Pool drops pooled zstd decoders at random.
const raceAllocFactor = 1
