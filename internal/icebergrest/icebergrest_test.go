package icebergrest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/icebergrest"
	"github.com/druidiceberg/sidecar/internal/testenv"
)

// planEndpoint is the REST spec's endpoint that submits a scan plan.
const planEndpoint = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan"

// TestStart: a server StartEach runs takes the tables iceberg-go's REST
// client creates and writes through it (the demo tables), and the
// sidecar's REST catalog lists and loads them; in each planning mode (a
// catalog of each in the one server) the server advertises the plan
// endpoints exactly when it plans, and answers a plan request of a table
// registered with it as the mode says (refused, the plan at once, a plan
// id); each catalog of the server holds only its own tables.
func TestStart(t *testing.T) {
	testenv.SkipShort(t, "starts Iceberg's REST catalog server, a JVM")
	ctx := context.Background()
	warehouse := t.TempDir()
	urls := icebergrest.StartEach(t, icebergrest.Catalog{Warehouse: warehouse},
		icebergrest.Catalog{Warehouse: t.TempDir(), Options: []icebergrest.Option{icebergrest.WithPlanning(icebergrest.SyncPlanning)}},
		icebergrest.Catalog{Warehouse: t.TempDir(), Options: []icebergrest.Option{icebergrest.WithPlanning(icebergrest.AsyncPlanning)}})
	url := urls[0]
	writer, err := rest.NewCatalog(ctx, "writer", url)
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Write(ctx, writer); err != nil {
		t.Fatalf("write the demo tables through the server: %v", err)
	}
	cat, err := catalog.New(catalog.Config{Type: "rest", Name: "ice", URI: url, DataRoots: []string{warehouse}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	names, truncated, err := cat.Tables(ctx)
	if err != nil {
		t.Fatalf("list the tables: %v", err)
	}
	if want := []string{"demo.customers", "demo.orders"}; !slices.Equal(names, want) || truncated {
		t.Errorf("tables: %v (truncated %v), want %v", names, truncated, want)
	}
	orders, err := cat.LoadTable(ctx, demo.Orders)
	if err != nil {
		t.Fatalf("load %v: %v", demo.Orders, err)
	}
	if orders.CurrentSnapshot() == nil {
		t.Fatalf("%v has no current snapshot; the demo writes some", demo.Orders)
	}

	for i, tc := range []struct {
		planning icebergrest.Planning
		// status and planStatus are what a plan request of the demo
		// orders answers: the HTTP status and the plan's status.
		status     int
		planStatus string
	}{
		{icebergrest.NoPlanning, http.StatusNotAcceptable, ""},
		{icebergrest.SyncPlanning, http.StatusOK, "completed"},
		{icebergrest.AsyncPlanning, http.StatusOK, "submitted"},
	} {
		t.Run(string(tc.planning), func(t *testing.T) {
			url := urls[i]
			if tc.planning != icebergrest.NoPlanning {
				planner, err := rest.NewCatalog(ctx, "planner", url)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = planner.Close() })
				if err := planner.CreateNamespace(ctx, table.Identifier{"demo"}, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := planner.RegisterTable(ctx, demo.Orders, orders.MetadataLocation()); err != nil {
					t.Fatalf("register %v: %v", demo.Orders, err)
				}
				cat, err := catalog.New(catalog.Config{Type: "rest", Name: "ice", URI: url, DataRoots: []string{warehouse}}, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cat.Close() })
				names, _, err := cat.Tables(ctx)
				if want := []string{"demo.orders"}; err != nil || !slices.Equal(names, want) {
					t.Errorf("the %s catalog's tables: %v (%v), want only %v, registered with it", tc.planning, names, err, want)
				}
			}
			if got, want := slices.Contains(endpoints(t, url), planEndpoint), tc.planning != icebergrest.NoPlanning; got != want {
				t.Errorf("/v1/config advertises %q: %v, want %v", planEndpoint, got, want)
			}
			if status, planStatus := plan(t, url+"/v1/namespaces/demo/tables/orders/plan"); status != tc.status || planStatus != tc.planStatus {
				t.Errorf("plan a scan of %v: %d %q, want %d %q", demo.Orders, status, planStatus, tc.status, tc.planStatus)
			}
		})
	}
}

// endpoints returns the endpoints the server's /v1/config advertises.
func endpoints(t *testing.T, url string) []string {
	t.Helper()
	resp, err := http.Get(url + "/v1/config")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var config struct {
		Endpoints []string `json:"endpoints"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&config); err != nil {
		t.Fatalf("decode /v1/config: %v", err)
	}
	return config.Endpoints
}

// plan posts an empty plan request (the current snapshot, every column) to
// url and returns the HTTP status and the plan's status.
func plan(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var answer struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatalf("decode the plan answer: %v", err)
	}
	return resp.StatusCode, answer.Status
}
