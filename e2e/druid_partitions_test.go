//go:build druid

package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/token"
)

// TestRealDruidPartitions: /druid/task's secondary partitioning (a range
// or hashed partitionsSpec, with forceGuaranteedRollup) on a real Druid:
// the v3 table, whose three URIs a dynamic task writes as three segments
// of one DAY, through each partitionsSpec; the task succeeds, the
// datasource holds the table's live rows, and the model of Druid, given
// the same task, holds what Druid holds, segment by segment (checkModel).
func TestRealDruidPartitions(t *testing.T) {
	d := sidecartest.RealDruidFromEnv(t)
	ctx := context.Background()
	cat, dir := sidecartest.LocalWarehouse(t)
	v3, err := tablegen.V3Types(ctx, cat, table.Identifier{"db", "v3"})
	if err != nil {
		t.Fatal(err)
	}
	srv := sidecartest.LocalServer(t, dir)
	types := druid.Types(v3.Table.Schema().Fields(), token.Encoding{})
	want := sidecartest.RealExpect(t, v3.Current().Rows, "id", types)
	run := fmt.Sprintf("%d", time.Now().Unix())
	for i, tc := range []struct {
		name   string
		params []string
	}{
		{"dynamic", nil},
		{"hashed", []string{"partitionsSpec", "hashed"}},
		{"hashed_by_id", []string{"partitionsSpec", "hashed", "clusteredBy", "id"}},
		{"range_by_id", []string{"partitionsSpec", "range", "clusteredBy", "id"}},
		{"hashed_2_shards", []string{"partitionsSpec", "hashed", "clusteredBy", "id", "numShards", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := fmt.Sprintf("real_partitions_%d_%s", i, run)
			task := srv.DruidTask(t, with(sidecartest.Q("table", "db.v3", "dataSource", ds, "timestampColumn", "id"), tc.params...))
			d.WaitTask(t, d.SubmitTask(t, task))
			d.CheckModel(t, ds, d.Check(t, ds, want, types), func(m *druidsim.Druid) error { return m.ExecTask(ctx, task) })
		})
	}
}
