package reader

import (
	"fmt"

	"github.com/druidiceberg/sidecar/reader/deletes"
)

// runAvro writes the surviving rows of an Avro data file into b, a chunk
// of records at a time; positions count records from the file's first.
func (f *fileStream) runAvro(b *batch, dels *deletes.PositionWalk) error {
	var base int64
	for {
		n, err := f.avro.Fill()
		if err != nil {
			return fmt.Errorf("read data file %s: %w", f.path, err)
		}
		if n == 0 {
			return nil
		}
		for i := range n {
			for _, l := range f.leaves {
				if l.MaxRep == 0 {
					// A flat column: its row is the next entry (as in run).
					l.Cur, l.Pos, l.RowEnd, l.VPos = &l.Batch, l.Next, l.Next+1, l.NextV
					if l.Batch.Def == nil || int(l.Batch.Def[l.Next]) == l.MaxDef {
						l.NextV++
					}
					l.Next++
					continue
				}
				if err := l.Advance(); err != nil {
					return fmt.Errorf("read data file %s: %w", f.path, err)
				}
			}
			if err := f.row(b, dels, base+int64(i)); err != nil {
				return err
			}
		}
		base += int64(n)
	}
}
