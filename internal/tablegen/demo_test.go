package tablegen

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

func TestDemo(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	if err := Demo(ctx, cat); err != nil {
		t.Fatalf("demo: %v", err)
	}

	orders, err := cat.LoadTable(ctx, DemoOrders)
	if err != nil {
		t.Fatalf("load demo.orders: %v", err)
	}
	customers, err := cat.LoadTable(ctx, DemoCustomers)
	if err != nil {
		t.Fatalf("load demo.customers: %v", err)
	}

	t.Run("orders live rows", func(t *testing.T) {
		want := []string{
			`{"order_id":1001,"customer_id":501,"amount":"129.99","status":"shipped","order_ts":1709284500000}`,
			`{"order_id":1003,"customer_id":503,"amount":"310.00","status":"delivered","order_ts":1709390832000}`,
			`{"order_id":1007,"customer_id":502,"amount":"240.00","status":"shipped","order_ts":1709753400000}`,
		}
		if got := oracle(t, ctx, orders); !slices.Equal(got, want) {
			t.Errorf("demo.orders rows\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
		}
	})

	t.Run("orders history", func(t *testing.T) {
		snaps := orders.Metadata().Snapshots()
		if len(snaps) != 4 {
			t.Fatalf("demo.orders has %d snapshots, want 4", len(snaps))
		}
		for i, want := range []int{5, 7, 4, 3} {
			rows, err := OracleRows(ctx, orders, snaps[i].SnapshotID)
			if err != nil {
				t.Fatalf("oracle at snapshot %d: %v", i+1, err)
			}
			if len(rows) != want {
				t.Errorf("snapshot %d has %d live rows, want %d", i+1, len(rows), want)
			}
		}
	})

	t.Run("orders plan", func(t *testing.T) {
		both := Attached{Positional: []string{"pos-deletes-00001.parquet"}, Equality: [][]int{{1}}}
		// B's order_id bounds [1006, 1007] exclude the key 1005, so PlanFiles
		// prunes the equality delete from B.
		want := wantPlan(map[int]Attached{1: both, 2: {Positional: both.Positional}})
		if got := planned(t, ctx, orders); !reflect.DeepEqual(got, want) {
			t.Errorf("PlanFiles attached\n got: %+v\nwant: %+v", got, want)
		}
	})

	t.Run("customers", func(t *testing.T) {
		want := []string{
			`{"customer_id":501,"name":"Ana Souza","country":"BR","signup_date":1699920000000}`,
			`{"customer_id":502,"name":"Lukas Meyer","country":"DE","signup_date":1704758400000}`,
			`{"customer_id":503,"name":"Priya Raman","country":"IN","signup_date":1656547200000}`,
			`{"customer_id":504,"name":"Emily Chen","country":"US","signup_date":1708473600000}`,
			`{"customer_id":505,"name":"Kenji Watanabe","country":"JP","signup_date":1690934400000}`,
		}
		if got := oracle(t, ctx, customers); !slices.Equal(got, want) {
			t.Errorf("demo.customers rows\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
		}
		if got, want := planned(t, ctx, customers), wantPlan(map[int]Attached{1: {}}); !reflect.DeepEqual(got, want) {
			t.Errorf("PlanFiles attached\n got: %+v\nwant: %+v", got, want)
		}
	})

	t.Run("idempotent", func(t *testing.T) {
		if err := Demo(ctx, cat); err != nil {
			t.Fatalf("second demo: %v", err)
		}
		for _, before := range []*table.Table{orders, customers} {
			after, err := cat.LoadTable(ctx, before.Identifier())
			if err != nil {
				t.Fatalf("reload %v: %v", before.Identifier(), err)
			}
			if after.MetadataLocation() != before.MetadataLocation() {
				t.Errorf("%v changed: metadata %s, was %s", before.Identifier(), after.MetadataLocation(), before.MetadataLocation())
			}
		}
	})
}

func TestDemoCreatesOnlyWhatIsAbsent(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	// A table of another shape already sits at demo.customers.
	if _, err := createTable(ctx, cat, DemoCustomers, MixedSchema(), 2); err != nil {
		t.Fatalf("pre-create demo.customers: %v", err)
	}
	if err := Demo(ctx, cat); err != nil {
		t.Fatalf("demo: %v", err)
	}
	customers, err := cat.LoadTable(ctx, DemoCustomers)
	if err != nil {
		t.Fatalf("load demo.customers: %v", err)
	}
	if customers.CurrentSnapshot() != nil || customers.Schema().NumFields() != MixedSchema().NumFields() {
		t.Errorf("demo.customers was rebuilt; Demo must leave an existing table alone")
	}
	orders, err := cat.LoadTable(ctx, DemoOrders)
	if err != nil {
		t.Fatalf("load demo.orders: %v", err)
	}
	if got := len(oracle(t, ctx, orders)); got != len(DemoOrdersLive) {
		t.Errorf("demo.orders has %d live rows, want %d", got, len(DemoOrdersLive))
	}
}
