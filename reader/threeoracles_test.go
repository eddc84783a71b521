package reader_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/javaoracle"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
)

// TestThreeOracles reads the tables the suite writes with iceberg-go
// (tablegen's scenarios, its evolution builders' tables and random tablegen
// histories) three ways: with iceberg-go's Scan.ReadTasks, planned and read
// as the sidecar does, and with Iceberg Java's generic reader, at every
// snapshot. Where any two disagree, the test names all three answers, and
// the builder's expectation where it has one. The sidecar and Iceberg Java
// must always agree (and equal the expectation); iceberg-go may differ only
// where the builder says it reads the snapshot otherwise (a known
// iceberg-go disagreement, docs/testing.md), which the test logs.
func TestThreeOracles(t *testing.T) {
	t.Parallel()
	testenv.SkipShort(t, "runs Iceberg Java")
	ctx := context.Background()
	type served struct {
		name string
		tbl  *table.Table
		pr   *servetest.Replica
		// built is the evolution builder's table and expectation, nil
		// for the others; goDiffers says why iceberg-go reads the whole
		// table otherwise (tablegen.EvolutionTable.OracleDiffers).
		built     *tablegen.Built
		goDiffers string
		// label names the subtest where name does not tell the tables apart.
		label string
	}
	var tables []served

	dir, scenarios := sharedScenarios(t)
	pr := localPlanned(t, dir)
	for _, sc := range tablegen.Scenarios() {
		tables = append(tables, served{name: "scenarios." + sc.Name, tbl: scenarios[sc.Name], pr: pr})
	}
	for _, et := range tablegen.EvolutionTables() {
		built, epr := evolutionTable(t, et.Name)
		tables = append(tables, served{name: strings.Join(et.Ident, "."), tbl: built.Table, pr: epr, built: built,
			goDiffers: et.OracleDiffers, label: "evolution." + et.Name})
	}

	hdir := t.TempDir()
	cat := catalogtest.SnappyWrites(catalogtest.Local(t, hdir))
	hpr := localPlanned(t, hdir)
	for i := range testenv.Histories(4, 4) {
		ident := table.Identifier{"hist", fmt.Sprintf("t%d", i)}
		h, err := tablegen.NewHistory(ctx, cat, ident, tablegen.NthHistory(i))
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			if _, err := h.Step(ctx); err != nil {
				t.Fatalf("history %d: %v", i, err)
			}
		}
		tables = append(tables, served{name: "hist." + ident[1], tbl: h.Table(), pr: hpr})
	}

	metadata := make([]string, len(tables))
	for i, s := range tables {
		metadata[i] = s.tbl.MetadataLocation()
	}
	java := javaoracle.Read(t, filepath.Join(t.TempDir(), "java.json"), metadata)
	if len(java) != len(tables) {
		t.Fatalf("Iceberg Java read %d tables, want %d", len(java), len(tables))
	}
	for i, s := range tables {
		t.Run(cmp.Or(s.label, s.name), func(t *testing.T) {
			j := java[i]
			if j.Error != "" {
				t.Fatalf("Iceberg Java cannot read %s: %s", s.name, j.Error)
			}
			expected := map[int64]tablegen.Expected{}
			if s.built != nil {
				for _, e := range s.built.Snapshots {
					expected[e.SnapshotID] = e
				}
			}
			byID := map[int64][]json.RawMessage{}
			for _, snap := range j.Snapshots {
				byID[snap.SnapshotID] = snap.Rows
			}
			for _, snap := range s.tbl.Metadata().Snapshots() {
				goRows, goErr := tablegen.OracleRows(ctx, s.tbl, snap.SnapshotID)
				sideRows := s.pr.Rows(t, s.pr.Plan(t, rowsRequest(s.name, snap.SnapshotID)))
				jr, ok := byID[snap.SnapshotID]
				if !ok {
					t.Fatalf("Iceberg Java read no snapshot %d", snap.SnapshotID)
				}
				javaRows := make([]string, len(jr))
				for k, r := range jr {
					javaRows[k] = string(r)
				}
				g, sd, jv := servetest.Canonical(t, goRows), servetest.Canonical(t, sideRows), servetest.Canonical(t, javaRows)
				e, hasExpected := expected[snap.SnapshotID]
				var want []string
				if hasExpected {
					want = servetest.Canonical(t, e.Rows)
				}
				sideRight := slices.Equal(sd, jv) && (!hasExpected || slices.Equal(sd, want))
				diff := threeWay(g, sd, jv, want, hasExpected)
				if goErr != nil {
					diff = fmt.Sprintf("iceberg-go fails: %v\n%s", goErr, diff)
				}
				switch {
				case sideRight && goErr == nil && slices.Equal(g, sd):
				case sideRight && cmp.Or(s.goDiffers, e.OracleDiffers) != "":
					t.Logf("%s, snapshot %d: iceberg-go reads it otherwise, as known (%s)\n%s", s.name, snap.SnapshotID,
						cmp.Or(e.OracleDiffers, s.goDiffers), diff)
				default:
					t.Errorf("%s, snapshot %d: the readers disagree\n%s", s.name, snap.SnapshotID, diff)
				}
			}
		})
	}
}

// threeWay lists every row that not all three readers (and the builder's
// expectation, where there is one) return, with which of them return it
// and how often.
func threeWay(goRows, sidecar, java, want []string, hasExpected bool) string {
	count := func(rows []string) map[string]int {
		m := map[string]int{}
		for _, r := range rows {
			m[r]++
		}
		return m
	}
	g, s, j, w := count(goRows), count(sidecar), count(java), count(want)
	all := map[string]bool{}
	for _, m := range []map[string]int{g, s, j, w} {
		for r := range m {
			all[r] = true
		}
	}
	var lines []string
	for r := range all {
		if g[r] == s[r] && s[r] == j[r] && (!hasExpected || j[r] == w[r]) {
			continue
		}
		exp := ""
		if hasExpected {
			exp = fmt.Sprintf(", expected %d", w[r])
		}
		lines = append(lines, fmt.Sprintf("  iceberg-go %d, sidecar %d, Iceberg Java %d%s: %s", g[r], s[r], j[r], exp, r))
	}
	sort.Strings(lines)
	return fmt.Sprintf("rows: iceberg-go %d, sidecar %d, Iceberg Java %d\n%s", len(goRows), len(sidecar), len(java), strings.Join(lines, "\n"))
}
