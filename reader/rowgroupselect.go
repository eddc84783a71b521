package reader

import (
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/token"
)

// rowGroup is one row group a stream reads: its index in the file and the
// position of its first row in the whole file.
type rowGroup struct {
	index int
	base  int64
}

// selectRowGroups returns the row groups of pf that a split of data file d
// reads, in file order: every row group, or those of d.Range (see
// token.RowGroupRange). The base of each is the sum of the rows of all the
// row groups before it, read or not, so row positions stay file-absolute
// for positional deletes and deletion vectors.
func selectRowGroups(pf *parquet.File, d token.DataFile) ([]rowGroup, error) {
	meta := pf.Metadata().RowGroups
	if n := len(pf.RowGroups()); n != len(meta) {
		return nil, fmt.Errorf("read data file %s: %w: %d row groups, %d in the footer", d.Path, ErrCorruptFile, n, len(meta))
	}
	r := d.Range
	if r != nil && !r.Valid(d.Size) {
		return nil, fmt.Errorf("%w: row-group range [%d, %d) of data file %s is not inside its %d bytes",
			token.ErrMalformedToken, r.Start, r.Start+r.Length, d.Path, d.Size)
	}
	out := make([]rowGroup, 0, len(meta))
	var base, rows int64
	for i := range meta {
		rg := &meta[i]
		if rg.NumRows < 0 {
			return nil, fmt.Errorf("read data file %s: %w: row group %d has %d rows", d.Path, ErrCorruptFile, i, rg.NumRows)
		}
		if r == nil || r.Contains(token.RowGroupStart(rg), d.Size) {
			out = append(out, rowGroup{index: i, base: base})
			rows += rg.NumRows
		}
		base += rg.NumRows
	}
	if r != nil && r.Records != nil && *r.Records != rows {
		return nil, fmt.Errorf("read data file %s: %w: the row groups starting in bytes [%d, %d) hold %d rows, the plan counted %d: "+
			"the file is not the one planned", d.Path, ErrCorruptFile, r.Start, r.Start+r.Length, rows, *r.Records)
	}
	return out, nil
}
