package splits

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/splits/split"
)

// The packing step of Plan: turn the scan's tasks into splits, one per
// data file, or on the row path one per range of the row groups of a file
// larger than the target split size (see rowgroups.go).

// makeSplits fills in pl's splits, unsigned.
func (p *Planner) makeSplits(ctx context.Context, pl *planning) error {
	kind := split.KindFile
	if pl.plan.Path == PathRows {
		kind = split.KindRows
	}
	pl.plan.Splits = make([]PlannedSplit, 0, len(pl.tasks))
	for _, t := range pl.tasks {
		sp, err := pl.maker.split(t)
		if err != nil {
			return err
		}
		sp.Catalog = p.conn.cfg.Name
		if kind == split.KindRows {
			sp.Columns, sp.Encoding = pl.columns, pl.req.Encoding
			if r := pl.residualOf(t); r != nil {
				if t.Residual == nil {
					// The whole filter, still unbound: bind it so that its
					// literals carry their field's type (an unbound
					// timestamp literal has no JSON form). iceberg-go's
					// residuals come bound.
					if r, err = iceberg.BindExpr(pl.schema, r, true); err != nil {
						return fmt.Errorf("bind residual filter: %w", err)
					}
				}
				if sp.Filter, err = json.Marshal(r); err != nil {
					return fmt.Errorf("encode residual filter %s: %w", r, err)
				}
			}
		}
		// A large file becomes several splits on the row path, each a
		// range of its row groups, in file order.
		ranges := []*split.RowGroupRange{nil}
		if kind == split.KindRows {
			if ranges, err = p.fileRanges(ctx, t.File); err != nil {
				return err
			}
		}
		for _, r := range ranges {
			part := sp
			part.Data.Range = r
			pl.plan.Splits = append(pl.plan.Splits, PlannedSplit{Parts: []split.Split{part}, Kind: kind})
		}
	}
	return nil
}
