package reader_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits/split"
)

// TestPackedSplit: a split of several files streams each file's live rows
// in order, as the files read one by one would, with one equality delete
// file shared by all and a positional delete file of its own for one;
// the equality delete file is read once for the whole stream, with or
// without a delete cache, and the counts add up over the files.
func TestPackedSplit(t *testing.T) {
	dir := t.TempDir()
	var parts []split.Split
	var want []string
	eqPath, eqSize := writeParquet(t, dir, "eq.parquet", []struct {
		ID int64 `parquet:"id,id(1)"`
	}{{4}, {13}, {22}})
	eq := split.DeleteFile{Kind: split.DeleteEquality, Path: eqPath, Format: "PARQUET", Size: eqSize, Records: 3, EqualityIDs: []int{1}}
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
			sp.Deletes = append(sp.Deletes, split.DeleteFile{Kind: split.DeletePosition, Path: pos, Format: "PARQUET", Size: z, Records: 2})
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
			opts = append(opts, reader.WithDeleteCache(reader.NewDeleteCache(1<<20, nil)))
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
		if stats.RowsRead != 30 || stats.RowsEmitted != 25 || stats.RowsDeleted[split.DeleteEquality] != 3 ||
			stats.RowsDeleted[split.DeletePosition] != 2 {
			t.Errorf("cache %v: stats %+v", cached, stats)
		}
		if n := stats.DeleteFilesLoaded[split.DeleteEquality]; n != 1 {
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
	st, err := newReader(testFS(dir), reader.WithBatchRows(2)).OpenAll(ctx, []split.Split{first, gone}, tableOf(idSchema))
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
	_, err := newReader(testFS(dir)).OpenAll(context.Background(), []split.Split{a, b}, tableOf(idSchema))
	if !errors.Is(err, split.ErrMalformedToken) {
		t.Fatalf("OpenAll of two snapshots' files: %v, want ErrMalformedToken", err)
	}
}
