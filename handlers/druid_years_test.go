package handlers_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// TestDruidTimesOutsideDruidYears: when the files' column bounds show
// times of the time column outside the years 1 to 9999, the warnings of
// /druid/sql and /changes say so, with the range in Druid's form; a table
// within them gets no such warning.
func TestDruidTimesOutsideDruidYears(t *testing.T) {
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	srv := localServer(t, dir)
	micros := func(y int) *int64 {
		v := time.Date(y, 3, 1, 1, 0, 0, 0, time.UTC).UnixMicro()
		return &v
	}
	for _, tc := range []struct {
		name  string
		years []int
		want  string // in the warning; "" for none
	}{
		{"far", []int{2024, 12000}, "from 2024-03-01T01:00:00.000Z to 12000-03-01T01:00:00.000Z"},
		{"before", []int{-5, 2024}, "from -0005-03-01T01:00:00.000Z to 2024-03-01T01:00:00.000Z"},
		{"within", []int{1, 2024, 9999}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := tablegen.NewHistory(ctx, cat, table.Identifier{"eras", tc.name}, tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutUnpartitioned})
			if err != nil {
				t.Fatal(err)
			}
			var rows []tablegen.HistoryRow
			for i, y := range tc.years {
				rows = append(rows, tablegen.HistoryRow{ID: int64(i), TS: micros(y), Cat: "a"})
			}
			if err := h.Append(ctx, rows...); err != nil {
				t.Fatal(err)
			}
			sql := srv.druidSQL(t, q("table", "eras."+tc.name, "dataSource", "d", "timestampColumn", "ts"))
			c := srv.changes(t, url.Values{"table": {"eras." + tc.name}, "timeColumn": {"ts"}})
			for what, warnings := range map[string][]string{"/druid/sql": sql.Warnings, "/changes": c.Warnings} {
				all := strings.Join(warnings, "\n")
				switch {
				case tc.want == "" && strings.Contains(all, "years 1 to 9999"):
					t.Fatalf("%s: warnings %q", what, warnings)
				case tc.want != "" && (!strings.Contains(all, tc.want) || !strings.Contains(all, "apache/druid#12860")):
					t.Fatalf("%s: warnings %q, want one naming %s", what, warnings, tc.want)
				}
			}
		})
	}
}
