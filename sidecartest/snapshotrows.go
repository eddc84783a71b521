package sidecartest

import (
	"context"
	"strconv"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
)

// AssertSnapshotRows plans the snapshot snapshotID of tbl, which srv
// serves as name, in rows mode, holds its rows to iceberg-go's
// Scan.ReadTasks rows and returns the plan.
func AssertSnapshotRows(t testing.TB, srv *Server, name string, tbl *table.Table, snapshotID int64) Plan {
	t.Helper()
	want, err := tablegen.OracleRows(context.Background(), tbl, snapshotID)
	if err != nil {
		t.Fatal(err)
	}
	p := srv.Plan(t, Q("table", name, "mode", "rows", "snapshotId", strconv.FormatInt(snapshotID, 10)))
	servetest.SameRows(t, srv.Rows(t, p), want)
	return p
}
