package handlers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/catalog"
	differ "github.com/druidiceberg/sidecar/changes"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/metrics"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// The router over one local catalog, wired as the sidecar wires it: the
// catalog lists and loads the tables, a planner plans them and turns tokens
// back into splits, a Differ over the planner answers /changes, a reader
// streams the rows. A plan of the demo orders table, which has delete
// files, hands out one row-stream URI (the v2 path): its NDJSON is the
// table's live rows.
func Example() {
	dir, err := os.MkdirTemp("", "handlers")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	warehouse := filepath.Join(dir, "warehouse")
	if err := demo.WriteWarehouse(ctx, warehouse); err != nil {
		fmt.Println(err)
		return
	}

	signer, err := token.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		fmt.Println(err)
		return
	}
	reg := prometheus.NewRegistry()
	cat, err := catalog.New(catalog.Config{Type: "local", Name: "lake", Warehouse: warehouse}, reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cat.Close()
	p, err := splits.NewPlanner(cat, signer, reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	router := handlers.New(handlers.Config{
		Catalogs: []handlers.Catalog{{
			Type: cat.Type(), Name: cat.Name(),
			Plans: p, Changes: differ.New(p), Splits: p, Rows: reader.New(reg), Tables: cat,
		}},
		Signer:   signer,
		Metrics:  metrics.New(reg),
		Gatherer: reg,
	})
	// The sidecar serves it with http.Server on its --addr.
	srv := httptest.NewServer(router)
	defer srv.Close()

	var plan struct {
		Mode        string `json:"mode"`
		InputSource struct {
			URIs []string `json:"uris"`
		} `json:"inputSource"`
	}
	if err := getJSON(srv.URL+"/splits?table=demo.orders", &plan); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.Mode, len(plan.InputSource.URIs), "URI")
	for _, uri := range plan.InputSource.URIs {
		resp, err := http.Get(uri)
		if err != nil {
			fmt.Println(err)
			return
		}
		rows := bufio.NewScanner(resp.Body)
		for rows.Scan() {
			fmt.Println(rows.Text())
		}
		resp.Body.Close()
		if err := rows.Err(); err != nil {
			fmt.Println(err)
			return
		}
	}
	// Output:
	// v2 1 URI
	// {"order_id":1001,"customer_id":501,"amount":"129.99","status":"shipped","order_ts":1709284500000}
	// {"order_id":1003,"customer_id":503,"amount":"310.00","status":"delivered","order_ts":1709390832000}
	// {"order_id":1007,"customer_id":502,"amount":"240.00","status":"shipped","order_ts":1709753400000}
}

// getJSON decodes the answer of a GET of url, which must be 200.
func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
