package reader_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/token"
)

// rowGroupStarts reads the first-page offset of every row group of a file.
func rowGroupStarts(t *testing.T, path string) []int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	var starts []int64
	for i := range pf.Metadata().RowGroups {
		starts = append(starts, token.RowGroupStart(&pf.Metadata().RowGroups[i]))
	}
	return starts
}

// withRange is s narrowed to the bytes [start, end) of its data file.
func withRange(s token.Split, start, end int64) token.Split {
	s.Data.Range = &token.RowGroupRange{Start: start, Length: end - start}
	return s
}

// readRanges reads s once per range between consecutive cuts (the first cut
// 0, the last the file's size) and returns the concatenated output and the
// summed stats.
func readRanges(t *testing.T, r fsReader, s token.Split, cuts []int64) (string, reader.Stats) {
	t.Helper()
	var out strings.Builder
	var sum reader.Stats
	sum.RowsDeleted = map[token.DeleteKind]int64{}
	for i := 0; i+1 < len(cuts); i++ {
		lines, st := readAll(t, r, withRange(s, cuts[i], cuts[i+1]), idSchema)
		for _, l := range lines {
			out.WriteString(l + "\n")
		}
		sum.RowsRead += st.RowsRead
		sum.RowsEmitted += st.RowsEmitted
		for k, n := range st.RowsDeleted {
			sum.RowsDeleted[k] += n
		}
	}
	return out.String(), sum
}

// TestRowGroupRanges: a file read range by range, for any partition of its
// bytes into ranges, gives exactly the rows of one whole read in the same
// order; positional deletes apply by file-absolute position in every range.
func TestRowGroupRanges(t *testing.T) {
	dir := t.TempDir()
	s, lines := writeIDs(t, dir, 20) // row groups 0-2, 3-5, …, 18-19
	delPath, delSize := writeParquet(t, dir, "del.parquet", []posDelete{
		{s.Data.Path, 1}, {s.Data.Path, 4}, {s.Data.Path, 9}, {s.Data.Path, 10}, {s.Data.Path, 11}, {s.Data.Path, 19},
	})
	s.Deletes = []token.DeleteFile{{Kind: token.DeletePosition, Path: delPath, Format: "PARQUET", Size: delSize}}
	want := strings.Join(keep(lines, 1, 4, 9, 10, 11, 19), "\n") + "\n"
	r := newReader(testFS(dir))
	whole, _ := readAll(t, r, s, idSchema)
	if got := strings.Join(whole, "\n") + "\n"; got != want {
		t.Fatalf("whole file:\n%s\nwant\n%s", got, want)
	}

	starts := rowGroupStarts(t, filepath.Join(dir, "data.parquet"))
	if len(starts) != 7 {
		t.Fatalf("%d row groups, want 7", len(starts))
	}
	size := s.Data.Size
	partitions := map[string][]int64{
		"one range":            {0, size},
		"a range per group":    append(append([]int64{0}, starts[1:]...), size),
		"two groups per range": {0, starts[2], starts[4], starts[6], size},
		"cuts inside groups":   {0, starts[1] + 1, starts[3] - 1, starts[3] + 1, size},
		"empty ranges":         {0, 1, starts[0], starts[0] + 1, starts[0] + 2, starts[5], size - 1, size},
	}
	rnd := rand.New(rand.NewPCG(7, 7))
	for i := range 20 {
		cuts := []int64{0, size}
		for range 1 + rnd.IntN(8) {
			cuts = append(cuts, 1+rnd.Int64N(size-1))
		}
		slices.Sort(cuts)
		partitions["random "+itoa(i)] = slices.Compact(cuts)
	}
	for name, cuts := range partitions {
		t.Run(name, func(t *testing.T) {
			got, st := readRanges(t, r, s, cuts)
			if got != want {
				t.Fatalf("ranges %v:\n%s\nwant\n%s", cuts, got, want)
			}
			if st.RowsRead != 20 || st.RowsEmitted != 14 || st.RowsDeleted[token.DeletePosition] != 6 {
				t.Fatalf("ranges %v: read %d, emitted %d, deleted %v; want 20, 14, 6",
					cuts, st.RowsRead, st.RowsEmitted, st.RowsDeleted)
			}
		})
	}

	t.Run("a range without a row group reads nothing", func(t *testing.T) {
		got, st := readAll(t, r, withRange(s, 0, starts[0]), idSchema)
		if len(got) != 0 || st.RowsRead != 0 {
			t.Fatalf("got %d rows, read %d", len(got), st.RowsRead)
		}
	})

	t.Run("the last range takes row groups past a size stated too small", func(t *testing.T) {
		small := s
		small.Data.Size = starts[5] // the manifest says the file ends where row group 5 starts
		got, _ := readRanges(t, r, small, []int64{0, starts[2], small.Data.Size})
		if got != want {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	})
}

// TestRowGroupRangeRecords: a range that pins its row count reads when the
// footer agrees, and fails before the first byte when it does not.
func TestRowGroupRangeRecords(t *testing.T) {
	dir := t.TempDir()
	s, lines := writeIDs(t, dir, 10)
	starts := rowGroupStarts(t, filepath.Join(dir, "data.parquet"))
	r := newReader(testFS(dir))

	ok := withRange(s, starts[1], starts[3])
	ok.Data.Range.Records = ptr(int64(6))
	if got, _ := readAll(t, r, ok, idSchema); !slices.Equal(got, lines[3:9]) {
		t.Fatalf("got %v, want %v", got, lines[3:9])
	}

	ctx := context.Background()
	cases := []struct {
		name string
		rng  token.RowGroupRange
		want error
	}{
		{"records disagree", token.RowGroupRange{Start: starts[1], Length: starts[3] - starts[1], Records: ptr(int64(5))}, reader.ErrCorruptFile},
		{"no row group, one record", token.RowGroupRange{Start: 0, Length: starts[0], Records: ptr(int64(1))}, reader.ErrCorruptFile},
		{"negative start", token.RowGroupRange{Start: -1, Length: 10}, token.ErrMalformedToken},
		{"empty", token.RowGroupRange{Start: 10, Length: 0}, token.ErrMalformedToken},
		{"past the end", token.RowGroupRange{Start: 10, Length: s.Data.Size}, token.ErrMalformedToken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := s
			rng := tc.rng
			bad.Data.Range = &rng
			st, err := r.Open(ctx, bad, tableOf(idSchema))
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if st != nil {
				t.Fatal("stream returned with an error")
			}
		})
	}

	// Every range of the same split is byte-deterministic, as a whole file is.
	var first []byte
	for range 2 {
		st, err := r.Open(ctx, ok, tableOf(idSchema))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := st.Run(ctx, &buf, nil); err != nil {
			t.Fatal(err)
		}
		_ = st.Close()
		if first != nil && !bytes.Equal(first, buf.Bytes()) {
			t.Fatal("two reads of one range differ")
		}
		first = buf.Bytes()
	}
}
