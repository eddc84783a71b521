package splits

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/token"
)

// footerGroups are the row groups of a data file as its footer lists them:
// the offset of each one's first page (RowGroupStart) and its rows.
type footerGroups struct {
	starts, rows []int64
}

// fileRanges returns the ranges the row path splits data file f into for
// a target split size of target bytes: one nil range (the whole file)
// unless f is a Parquet file larger than target with more than one row
// group. The row groups come from
// the manifest's split offsets when they are usable (ascending, inside the
// file), else from the file's footer, read through the table's FileIO,
// which also gives each range its exact row count.
//
// A footer that cannot be read because the storage did not answer or
// refused the credentials fails the plan; a missing or undecodable one
// leaves the file whole, and reading its rows reports the same problem for
// that split alone.
func (p *Planner) fileRanges(ctx context.Context, fsys icebergio.IO, f iceberg.DataFile, target int64) ([]*token.RowGroupRange, error) {
	size := f.FileSizeBytes()
	whole := []*token.RowGroupRange{nil}
	if target <= 0 || size <= target || f.FileFormat() != iceberg.ParquetFile {
		return whole, nil
	}
	var g footerGroups
	if offs := f.SplitOffsets(); usableStarts(offs, size) {
		g.starts = offs
	} else {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var err error
		if g, err = p.footer(fsys, f.FilePath(), size); err != nil {
			if errors.Is(err, fault.ErrUnavailable) || errors.Is(err, fault.ErrDenied) {
				return nil, fmt.Errorf("read the footer of data file %s: %w", f.FilePath(), err)
			}
			return whole, nil
		}
		if !usableStarts(g.starts, size) {
			return whole, nil
		}
	}
	return rowGroupRanges(g, size, target), nil
}

// usableStarts reports whether starts are row-group offsets a file of size
// bytes can be split at: at least one, strictly ascending, inside the file.
func usableStarts(starts []int64, size int64) bool {
	if len(starts) == 0 {
		return false
	}
	for i, s := range starts {
		if s < 0 || s >= size || (i > 0 && s <= starts[i-1]) {
			return false
		}
	}
	return true
}

// rowGroupRanges cuts [0, size) into contiguous ranges of row groups of at
// most target bytes each (a single row group may be larger). Row group i
// spans from its start to the next one's, the first from byte 0 and the
// last to the end of the file, so the ranges cover the whole file and
// every row group falls in exactly one of them. When g has the rows of
// every row group, each range records its row count. A file that makes a
// single range gives one nil range: the whole file, as when it is not split.
func rowGroupRanges(g footerGroups, size, target int64) []*token.RowGroupRange {
	counted := len(g.rows) == len(g.starts)
	var out []*token.RowGroupRange
	add := func(start, end, rows int64) {
		r := &token.RowGroupRange{Start: start, Length: end - start}
		if counted {
			r.Records = &rows
		}
		out = append(out, r)
	}
	var start, rows int64
	for i := range g.starts {
		from, to := g.starts[i], size
		if i == 0 {
			from = 0
		}
		if i+1 < len(g.starts) {
			to = g.starts[i+1]
		}
		if from > start && to-start > target {
			add(start, from, rows)
			start, rows = from, 0
		}
		if counted {
			rows += g.rows[i]
		}
	}
	add(start, size, rows)
	if len(out) == 1 {
		return []*token.RowGroupRange{nil}
	}
	return out
}

// footer reads the row groups of a data file from its Parquet footer,
// through the table's FileIO (so the location map applies); files are
// immutable, so an answer is cached by path.
func (p *Planner) footer(fsys icebergio.IO, path string, size int64) (g footerGroups, err error) {
	if g, ok := p.footers.Get(path); ok {
		return g, nil
	}
	f, err := fsys.Open(path)
	if err != nil {
		return g, fmt.Errorf("open data file %s: %w", path, err)
	}
	defer func() {
		// parquet-go panics on some malformed footers.
		if r := recover(); r != nil {
			err = fmt.Errorf("read the footer of data file %s: %v", path, r)
		}
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close data file %s: %w", path, cerr)
		}
	}()
	if st, serr := f.Stat(); serr == nil && st.Size() > 0 {
		size = st.Size()
	}
	pf, err := parquet.OpenFile(f, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return g, fmt.Errorf("read the footer of data file %s: %w", path, err)
	}
	rgs := pf.Metadata().RowGroups
	for i := range rgs {
		g.starts = append(g.starts, token.RowGroupStart(&rgs[i]))
		g.rows = append(g.rows, rgs[i].NumRows)
	}
	p.footers.Add(path, g)
	return g, nil
}
