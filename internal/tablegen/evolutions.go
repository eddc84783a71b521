package tablegen

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// EvolutionTable is one table of the evolution builders as the tests of
// several packages name and write it.
type EvolutionTable struct {
	// Name names the table in tests and subtests.
	Name string
	// Ident is the identifier the tests write it as.
	Ident table.Identifier
	// Build writes it as ident.
	Build func(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*Built, error)
	// OracleDiffers says why iceberg-go's ReadTasks reads the whole table
	// otherwise than its expected rows, "" when it reads it right (but for
	// the snapshots whose Expected.OracleDiffers says otherwise).
	OracleDiffers string
}

// EvolutionTables are the evolution builders' tables: evolved schemas and
// partition specs, foreign files read through a name mapping, identity
// partitions, every type, a format upgrade, defaults and row lineage.
func EvolutionTables() []EvolutionTable {
	evo := table.Identifier{"evo", "t"}
	return []EvolutionTable{
		{Name: "evolution", Ident: evo, Build: Evolution},
		{Name: "migrated", Ident: evo, Build: func(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*Built, error) {
			return Migrated(ctx, cat, ident, true)
		}},
		{Name: "identity_partitioned", Ident: evo, Build: IdentityPartitioned,
			OracleDiffers: "iceberg-go leaves identity partition columns that the files do not store null; the builder's rows carry them"},
		{Name: "all_types", Ident: table.Identifier{"db", "all"}, Build: AllTypes},
		{Name: "spec_change_deletes", Ident: evo, Build: SpecChange},
		{Name: "upgraded_v1", Ident: evo, Build: UpgradedV1},
		// iceberg-go cannot read the snapshots with the delete keyed on the
		// column added with an initial-default (Expected.OracleDiffers).
		{Name: "default_after_delete", Ident: evo, Build: DefaultAfterDelete},
		{Name: "row_lineage", Ident: evo, Build: func(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*Built, error) {
			b, _, err := Lineage(ctx, cat, ident)
			return b, err
		}},
	}
}

// EvolutionTableNamed is the table of EvolutionTables named name.
func EvolutionTableNamed(name string) (EvolutionTable, error) {
	for _, e := range EvolutionTables() {
		if e.Name == name {
			return e, nil
		}
	}
	return EvolutionTable{}, fmt.Errorf("%w: no evolution table %s", ErrInvalidArgument, name)
}

// historyLayouts are the time columns and partition layouts NthHistory
// cycles through.
var historyLayouts = []struct {
	time   TimeKind
	layout Layout
}{
	{TimeTimestamp, LayoutDay},
	{TimeTimestampTz, LayoutCategory},
	{TimeDate, LayoutUnpartitioned},
	{TimeLongMillis, LayoutCategory},
	{TimeTimestamp, LayoutUnpartitioned},
}

// NthHistory are the options of the i-th random history the oracle tests
// write (from 0): seed i+1, and each time column and layout in turn.
func NthHistory(i int) HistoryOptions {
	l := historyLayouts[i%len(historyLayouts)]
	return HistoryOptions{Seed: uint64(i + 1), Time: l.time, Layout: l.layout}
}
