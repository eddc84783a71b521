package catalog

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/token"
)

// The planning endpoints of the REST spec, as a server's /v1/config
// advertises them.
const (
	planEndpoint    = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan"
	fetchEndpoint   = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}"
	tasksEndpoint   = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks"
	loadEndpoint    = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"
	configEndpoints = "GET /v1/config"
)

// TestScanPlanningCapability: a catalog plans on its server only when the
// server advertises the planning endpoints, submission, polling and tasks
// alike; configured remote, one that does not is refused at the start
// (CheckScanPlanning) and at every plan (PlanScan) with an error that
// names the catalog and the endpoints. The loopback REST catalog plans
// nothing: what is read here is the server's /v1/config answer, which the
// planning server of the integration tier answers for real.
func TestScanPlanningCapability(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		endpoints []string
		plans     bool
	}{
		{"no endpoints advertised (the spec's default set)", nil, false},
		{"load only", []string{configEndpoints, loadEndpoint}, false},
		{"submission only", []string{loadEndpoint, planEndpoint}, false},
		{"every planning endpoint", []string{loadEndpoint, planEndpoint, fetchEndpoint, tasksEndpoint}, true},
	} {
		for _, mode := range []string{"", "auto", "local", "remote"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				rc := newRESTCatalog(t)
				rc.endpoints = tc.endpoints
				cat, err := New(Config{Type: "rest", Name: "lake", URI: rc.URL, DataRoots: []string{rc.dir}, ScanPlanning: mode}, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cat.Close() })
				want, _ := token.ParseScanPlanning(mode)
				if got := cat.ScanPlanning(); got != want {
					t.Fatalf("ScanPlanning %q, want %q", got, want)
				}
				plans, err := cat.PlansScans(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if plans != tc.plans {
					t.Fatalf("PlansScans %v, want %v", plans, tc.plans)
				}
				err = cat.CheckScanPlanning(ctx)
				refused := mode == "remote" && !tc.plans
				if refused != (err != nil) {
					t.Fatalf("CheckScanPlanning: %v, want refused %v", err, refused)
				}
				if !refused {
					return
				}
				for _, e := range []error{err, planScan(t, cat)} {
					if !errors.Is(e, fault.ErrUnsupported) || !strings.Contains(e.Error(), `catalog "lake"`) ||
						!strings.Contains(e.Error(), "/plan/{plan-id}") {
						t.Fatalf("refusal %v: want ErrUnsupported naming the catalog and the endpoints", e)
					}
				}
			})
		}
	}
}

// planScan asks cat's server to plan the demo orders table, which the
// loopback catalog cannot, and returns the error.
func planScan(t *testing.T, cat *Catalog) error {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), demo.Orders)
	if err != nil {
		t.Fatal(err)
	}
	id := tbl.CurrentSnapshot().SnapshotID
	_, err = cat.PlanScan(context.Background(), table.ScanPlanningRequest{Identifier: demo.Orders, Metadata: tbl.Metadata(),
		Schema: tbl.Schema(), SnapshotID: &id}, refusedMeter{t})
	if err == nil {
		t.Fatal("PlanScan on a server that does not plan succeeded")
	}
	return err
}

// TestScanPlanningConfig: the mode is one of auto, local and remote, and
// remote needs a REST catalog, whose server is the only one that plans.
func TestScanPlanningConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Type: "local", Warehouse: "/data/w", ScanPlanning: "auto"}, ""},
		{Config{Type: "local", Warehouse: "/data/w", ScanPlanning: "local"}, ""},
		{Config{Type: "rest", URI: "http://catalog", ScanPlanning: "remote"}, ""},
		{Config{Type: "local", Name: "w", Warehouse: "/data/w", ScanPlanning: "remote"}, "catalog w: scan planning remote needs a rest catalog"},
		{Config{Type: "rest", Name: "lake", URI: "http://catalog", ScanPlanning: "server"}, `catalog lake: scan planning "server": want auto, local or remote`},
	} {
		err := tc.cfg.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", tc.cfg, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// TestLocalCatalogPlansLocally: a catalog of another type than rest has no
// server to plan on.
func TestLocalCatalogPlansLocally(t *testing.T) {
	cat, err := New(Config{Type: "local", Name: "w", Warehouse: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	plans, err := cat.PlansScans(context.Background())
	if err != nil || plans {
		t.Fatalf("PlansScans %v, %v: want false", plans, err)
	}
}

// refusedMeter fails the test if a plan that is refused before the server
// is asked charges anything.
type refusedMeter struct{ t *testing.T }

func (m refusedMeter) Answer(int64) error {
	m.t.Error("charged an answer of a plan that was refused")
	return nil
}
func (m refusedMeter) Entries(int64) error {
	m.t.Error("charged the entries of a plan that was refused")
	return nil
}
