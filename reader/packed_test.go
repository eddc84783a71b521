package reader_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/token"
)

// TestPackedSplit: a split of several files streams each file's live rows
// in order, as the files read one by one would, with one equality delete
// file shared by all and a positional delete file of its own for one;
// the equality delete file is read once for the whole stream, with or
// without a delete cache, and the counts add up over the files.
func TestPackedSplit(t *testing.T) {
	dir := t.TempDir()
	var parts []token.Split
	var want []string
	eqPath, eqSize := writeParquet(t, dir, "eq.parquet", []struct {
		ID int64 `parquet:"id,id(1)"`
	}{{4}, {13}, {22}})
	eq := token.DeleteFile{Kind: token.DeleteEquality, Path: eqPath, Format: "PARQUET", Size: eqSize, Records: 3, EqualityIDs: []int{1}}
	for f := range 3 {
		rows := make([]idRow, 10)
		for i := range rows {
			rows[i] = idRow{ID: int64(f*10 + i), Name: string(rune('a' + i))}
		}
		name := "part-" + itoa(f) + ".parquet"
		_, size := writeParquet(t, dir, name, rows, parquet.MaxRowsPerRowGroup(4))
		sp := dataSplit(name, size, 10, eq)
		if f == 1 {
			pos, z := writeParquet(t, dir, "pos.parquet", []posDelete{{sp.Data.Path, 0}, {sp.Data.Path, 9}})
			sp.Deletes = append(sp.Deletes, token.DeleteFile{Kind: token.DeletePosition, Path: pos, Format: "PARQUET", Size: z, Records: 2})
		}
		one, _ := readAll(t, newReader(testFS(dir)), sp, idSchema)
		want = append(want, one...)
		parts = append(parts, sp)
	}
	if len(want) != 30-3-2 {
		t.Fatalf("the files read one by one give %d rows, want 25", len(want))
	}
	for _, cached := range []bool{false, true} {
		var opts []reader.Option
		if cached {
			opts = append(opts, reader.WithDeleteCache(deletes.NewCache(1<<20, nil)))
		}
		ctx := context.Background()
		st, err := newReader(testFS(dir), opts...).OpenAll(ctx, parts, tableOf(idSchema))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := st.Run(ctx, &buf, nil); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		if !slices.Equal(got, want) {
			t.Fatalf("cache %v: packed split gave\n%q\nwant\n%q", cached, got, want)
		}
		stats := st.Stats()
		if stats.RowsRead != 30 || stats.RowsEmitted != 25 || stats.RowsDeleted[token.DeleteEquality] != 3 ||
			stats.RowsDeleted[token.DeletePosition] != 2 {
			t.Errorf("cache %v: stats %+v", cached, stats)
		}
		if n := stats.DeleteFilesLoaded[token.DeleteEquality]; n != 1 {
			t.Errorf("cache %v: the shared equality delete file was loaded %d times, want once", cached, n)
		}
	}
}

// TestPackedSplitLaterFileGone: only the first file of a packed split is
// opened before the first byte; a later one that is gone fails Run with
// its error, after the rows before it were written, so the caller aborts
// the response instead of ending it cleanly.
func TestPackedSplitLaterFileGone(t *testing.T) {
	dir := t.TempDir()
	first, lines := writeIDs(t, dir, 5)
	gone := dataSplit("gone.parquet", 100, 3)
	ctx := context.Background()
	st, err := newReader(testFS(dir), reader.WithBatchRows(2)).OpenAll(ctx, []token.Split{first, gone}, tableOf(idSchema))
	if err != nil {
		t.Fatalf("OpenAll opened the later file too: %v", err)
	}
	defer st.Close()
	var buf bytes.Buffer
	err = st.Run(ctx, &buf, nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Run: %v, want the missing file's error", err)
	}
	// Batches of two rows: the first four rows went out before the
	// failure, the fifth was still in the batch.
	if got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"); !slices.Equal(got, lines[:4]) {
		t.Fatalf("rows before the failure: %q, want %q", got, lines[:4])
	}
}

// TestPackedSplitMismatch: files planned from other snapshots or with
// another projection are not read as one split.
func TestPackedSplitMismatch(t *testing.T) {
	dir := t.TempDir()
	a, _ := writeIDs(t, dir, 3)
	b := a
	b.SnapshotID = 7
	_, err := newReader(testFS(dir)).OpenAll(context.Background(), []token.Split{a, b}, tableOf(idSchema))
	if !errors.Is(err, token.ErrMalformedToken) {
		t.Fatalf("OpenAll of two snapshots' files: %v, want ErrMalformedToken", err)
	}
}

// packedWideDeletes writes n data files of rows rows each and one
// positional delete file that lists every one of them, as a delete file
// written for a whole table would: it deletes every every-th position of
// each data file (from its index on) and names ghosts paths that are no
// data file of the splits, ghostRows positions each. It returns the splits
// of the data files, each listing the delete file, and each file's live
// lines.
func packedWideDeletes(t testing.TB, dir string, n, rows, every, ghosts, ghostRows int) ([]token.Split, [][]string) {
	t.Helper()
	data := make([]idRow, rows)
	for i := range data {
		data[i] = idRow{ID: int64(i), Name: string(rune('a' + i%26))}
	}
	var ss []token.Split
	var want [][]string
	var dels []posDelete
	for f := range n {
		name := fmt.Sprintf("data-%03d.parquet", f)
		_, size := writeParquet(t, dir, name, data, parquet.MaxRowsPerRowGroup(int64(max(rows/4, 1))))
		s := dataSplit(name, size, int64(rows))
		all, _ := readAll(t, newReader(testFS(dir)), s, idSchema)
		var live []string
		for i, line := range all {
			if i%every == f%every {
				dels = append(dels, posDelete{s.Data.Path, int64(i)})
				continue
			}
			live = append(live, line)
		}
		ss, want = append(ss, s), append(want, live)
	}
	for g := range ghosts {
		for i := range ghostRows {
			dels = append(dels, posDelete{fmt.Sprintf("%s/ghost/%06d.parquet", bucket, g), int64(i)})
		}
	}
	p, size := writeParquet(t, dir, "wide-deletes.parquet", dels, parquet.MaxRowsPerRowGroup(1<<16))
	for i := range ss {
		ss[i].Deletes = []token.DeleteFile{{Kind: token.DeletePosition, Path: p, Format: "PARQUET", Size: size, Records: int64(len(dels))}}
	}
	return ss, want
}

// TestPackedSplitScansSharedPositionalDeletesOnce: a positional delete
// file that every data file of a packed split lists, too large to decode
// whole, is scanned once a split, whether the split packs 1, 2, 4 or 8
// data files: without a cache, and with one, which besides scans it once
// (the first time it is asked for it) to learn that it is too large; every
// split gets the rows the files read one by one give.
func TestPackedSplitScansSharedPositionalDeletesOnce(t *testing.T) {
	dir := t.TempDir()
	const files = 8
	// 1,000 ghost paths make the whole file some 400 KiB of bitmaps,
	// past the 128 KiB of half the bound; the split's 8 files hold a few.
	ss, want := packedWideDeletes(t, dir, files, 10, 3, 1000, 1)
	delPath := ss[0].Deletes[0].Path
	for _, pack := range []int{1, 2, 4, 8} {
		for _, cached := range []bool{false, true} {
			fs := newOpenCounter(testFS(dir))
			budget := memory.NewBudget(1<<30, "the test budget", nil)
			opts := []reader.Option{reader.WithMemory(budget, 256<<10, "the test bound")}
			if cached {
				opts = append(opts, reader.WithDeleteCache(deletes.NewCache(64<<20, nil)))
			}
			r := newReader(fs, opts...)
			for first := 0; first < files; first += pack {
				before := fs.count(delPath)
				parts := ss[first : first+pack]
				got, stats := readParts(t, r, parts, tableOf(idSchema))
				if wantLines := slices.Concat(want[first : first+pack]...); !slices.Equal(got, wantLines) {
					t.Fatalf("pack %d, cache %v, split at %d: got %q, want %q", pack, cached, first, got, wantLines)
				}
				scans := fs.count(delPath) - before
				wantScans := 1
				if cached && first == 0 {
					wantScans = 2 // the cache's attempt to decode it whole, given up, then the split's
				}
				if scans != wantScans {
					t.Errorf("pack %d, cache %v, split at %d: the delete file was scanned %d times, want %d",
						pack, cached, first, scans, wantScans)
				}
				if n := stats.DeleteFilesLoaded[token.DeletePosition]; n != int64(wantScans) {
					t.Errorf("pack %d, cache %v, split at %d: %d positional delete files loaded, want %d",
						pack, cached, first, n, wantScans)
				}
			}
			if bs := budget.Stats(); bs.Peak > 128<<10+64<<10 {
				t.Errorf("pack %d, cache %v: decoding reserved up to %d bytes, past the 128 KiB of half the bound", pack, cached, bs.Peak)
			}
		}
	}
}
