package tablegen

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"
)

// Compact rewrites the table's data files with iceberg-go's
// RewriteDataFiles, one group per partition: each group's live rows
// (deletes applied) into new files, the old files and the position delete
// files that only they used removed, in one replace snapshot. The table's
// rows do not change; its files do.
func (h *History) Compact(ctx context.Context) error {
	tbl, err := compact(ctx, h.tbl)
	if err != nil {
		return err
	}
	h.tbl = tbl
	return nil
}

// compact is Compact of any table: it returns the table as committed.
func compact(ctx context.Context, tbl *table.Table) (*table.Table, error) {
	scan := tbl.Scan()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan files to compact: %w", err)
	}
	byPartition := map[string]*table.CompactionTaskGroup{}
	var groups []table.CompactionTaskGroup
	var order []string
	for _, t := range tasks {
		key := fmt.Sprint(t.File.Partition())
		g, ok := byPartition[key]
		if !ok {
			g = &table.CompactionTaskGroup{PartitionKey: key}
			byPartition[key] = g
			order = append(order, key)
		}
		g.Tasks = append(g.Tasks, t)
		g.TotalSizeBytes += t.File.FileSizeBytes()
	}
	for _, k := range order {
		groups = append(groups, *byPartition[k])
	}
	tx := tbl.NewTransaction()
	if _, err := tx.RewriteDataFiles(ctx, groups, table.RewriteDataFilesOptions{}); err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	if op := tbl.CurrentSnapshot().Summary.Operation; op != table.OpReplace {
		return nil, fmt.Errorf("compaction committed a %s snapshot, not a replace", op)
	}
	return tbl, nil
}
