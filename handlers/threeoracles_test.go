package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/javaoracle"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/splits/catalog/catalogtest"
)

// TestThreeOracles reads the tables the suite writes with iceberg-go
// (tablegen's scenarios, and random tablegen histories) three ways: with
// iceberg-go's Scan.ReadTasks, through the sidecar, and with Iceberg Java's
// generic reader, at every snapshot. Where any two disagree, the test names
// all three answers.
func TestThreeOracles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type served struct {
		name string
		tbl  *table.Table
		srv  *testServer
	}
	var tables []served

	dir, scenarios := sharedScenarios(t)
	srv := localServer(t, dir)
	for _, sc := range tablegen.Scenarios() {
		tables = append(tables, served{"scenarios." + sc.Name, scenarios[sc.Name], srv})
	}

	hdir := t.TempDir()
	cat := catalogtest.Local(t, hdir)
	hsrv := localServer(t, hdir)
	layouts := []struct {
		time   tablegen.TimeKind
		layout tablegen.Layout
	}{
		{tablegen.TimeTimestamp, tablegen.LayoutDay},
		{tablegen.TimeTimestampTz, tablegen.LayoutCategory},
		{tablegen.TimeDate, tablegen.LayoutUnpartitioned},
		{tablegen.TimeLongMillis, tablegen.LayoutCategory},
		{tablegen.TimeTimestamp, tablegen.LayoutUnpartitioned},
	}
	for i := range testenv.Histories(10, 3) {
		l := layouts[i%len(layouts)]
		ident := table.Identifier{"hist", fmt.Sprintf("t%d", i)}
		h, err := tablegen.NewHistory(ctx, cat, ident, tablegen.HistoryOptions{Seed: uint64(i + 1), Time: l.time, Layout: l.layout})
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			if _, err := h.Step(ctx); err != nil {
				t.Fatalf("history %d: %v", i, err)
			}
		}
		tables = append(tables, served{"hist." + ident[1], h.Table(), hsrv})
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
		t.Run(s.name, func(t *testing.T) {
			j := java[i]
			if j.Error != "" {
				t.Fatalf("Iceberg Java cannot read %s: %s", s.name, j.Error)
			}
			byID := map[int64][]json.RawMessage{}
			for _, snap := range j.Snapshots {
				byID[snap.SnapshotID] = snap.Rows
			}
			for _, snap := range s.tbl.Metadata().Snapshots() {
				goRows, err := tablegen.OracleRows(ctx, s.tbl, snap.SnapshotID)
				if err != nil {
					goRows = []string{"error: " + err.Error()}
				}
				p := s.srv.plan(t, q("table", s.name, "mode", "rows", "snapshotId", strconv.FormatInt(snap.SnapshotID, 10)))
				sideRows := s.srv.rows(t, p)
				jr, ok := byID[snap.SnapshotID]
				if !ok {
					t.Fatalf("Iceberg Java read no snapshot %d", snap.SnapshotID)
				}
				javaRows := make([]string, len(jr))
				for k, r := range jr {
					javaRows[k] = string(r)
				}
				g, sd, jv := canonicalRows(t, goRows), canonicalRows(t, sideRows), canonicalRows(t, javaRows)
				if slices.Equal(g, sd) && slices.Equal(sd, jv) {
					continue
				}
				t.Errorf("%s, snapshot %d: the readers disagree\n%s", s.name, snap.SnapshotID, threeWay(g, sd, jv))
			}
		})
	}
}

// threeWay lists every row that not all three readers return, with which
// of them return it and how often.
func threeWay(goRows, sidecar, java []string) string {
	count := func(rows []string) map[string]int {
		m := map[string]int{}
		for _, r := range rows {
			m[r]++
		}
		return m
	}
	g, s, j := count(goRows), count(sidecar), count(java)
	all := map[string]bool{}
	for _, m := range []map[string]int{g, s, j} {
		for r := range m {
			all[r] = true
		}
	}
	var lines []string
	for r := range all {
		if g[r] == s[r] && s[r] == j[r] {
			continue
		}
		lines = append(lines, fmt.Sprintf("  iceberg-go %d, sidecar %d, Iceberg Java %d: %s", g[r], s[r], j[r], r))
	}
	sort.Strings(lines)
	return fmt.Sprintf("rows: iceberg-go %d, sidecar %d, Iceberg Java %d\n%s", len(goRows), len(sidecar), len(java), strings.Join(lines, "\n"))
}
