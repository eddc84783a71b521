package handlers_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/sidecartest"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/metrics"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// fuzzRouter is the real router over the partitioned fixture (id, user,
// action, event_time; three data files, positional deletes) as fixtures.t,
// called in process: a fuzz input costs a plan, not a connection.
func fuzzRouter(tb testing.TB) http.Handler {
	tb.Helper()
	return fuzzRouterWith(tb, func(*handlers.Config) {})
}

// fuzzRouterWith is fuzzRouter with its configuration changed by change.
func fuzzRouterWith(tb testing.TB, change func(*handlers.Config)) http.Handler {
	tb.Helper()
	fx := partitionedFixture(tb)
	signer, err := token.NewSigner(testKey)
	if err != nil {
		tb.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	cfg := handlers.Config{
		Catalogs: []handlers.Catalog{sidecartest.PlannerCatalog(tb, sidecatalog.Config{
			Type:   "static",
			Tables: map[string]string{"fixtures.t": filepath.Join(fx.Dir, fx.Metadata)},
		}, fx.mappings(), signer, splits.WithMaxSplits(2))}, // so that 422 too_many_splits is reachable too
		Signer:   signer,
		Metrics:  metrics.New(reg),
		Gatherer: reg,
	}
	change(&cfg)
	return handlers.New(cfg)
}

// checkAnswer holds an answer to the contract for hostile input: never a
// 5xx (the catalog is local and up, so nothing but a bug can answer one),
// a JSON error body for every 4xx, and a JSON plan for a 200.
func checkAnswer(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	body := rec.Body.Bytes()
	if rec.Code >= 500 {
		t.Fatalf("%s: %d %s", what, rec.Code, body)
	}
	if rec.Code != http.StatusOK {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
			t.Fatalf("%s: %d without a JSON error body: %s", what, rec.Code, body)
		}
		return
	}
	var p struct {
		InputSource struct {
			Type string   `json:"type"`
			URIs []string `json:"uris"`
		} `json:"inputSource"`
		Query string `json:"query"` // /druid/sql
	}
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("%s: 200 with a body that is not JSON: %v\n%s", what, err, body)
	}
	if p.Query == "" && p.InputSource.Type != "http" && !bytes.Contains(body, []byte(`"type": "index_parallel"`)) {
		t.Fatalf("%s: 200 without an http inputSource: %s", what, body)
	}
}

// fixtureFilter turns a filter on demo.orders' status into one on the
// fuzz fixture's action column.
func fixtureFilter(f string) string { return strings.ReplaceAll(f, `"status"`, `"action"`) }

// FuzzPostSplits posts arbitrary bodies as a Druid iceberg inputSource:
// every answer is a 200 plan or a 4xx JSON error, never a 5xx or a panic.
//
//	go test ./handlers -run '^$' -fuzz '^FuzzPostSplits$' -fuzztime 30s
func FuzzPostSplits(f *testing.F) {
	router := fuzzRouter(f)
	for _, seed := range []string{
		druidDocsSpec,
		`{"type":"iceberg","namespace":"fixtures","tableName":"t"}`,
		`{"namespace":"fixtures","tableName":"t","icebergFilter":{"type":"equals","filterColumn":"action","filterValue":"view"},"residualFilterMode":"fail"}`,
		`{"namespace":"fixtures","tableName":"t","icebergFilter":{"type":"range","filterColumn":"id","lower":3,"upper":"7","lowerOpen":true}}`,
		`{"namespace":"fixtures","tableName":"t","icebergFilter":{"type":"not","filter":{"type":"or","filters":[{"type":"equals","filterColumn":"user","filterValue":null}]}}}`,
		`{"namespace":"fixtures","tableName":"t","icebergFilter":{"type":"timeWindow","filterColumn":"event_time","lookbackDuration":"P1Y"}}`,
		`{"namespace":"fixtures","tableName":"t","mode":"files","columns":["id"],"timestamps":"iso","snapshotId":-1,"ref":"main"}`,
		`{"namespace":"fixtures","tableName":"t","snapshotTime":"2020-01-01","applyResidual":true,"binaryAsString":true}`,
		`{"namespace":"fixtures","tableName":"nope"}`,
		`{"namespace":"","tableName":"t"}`,
		`{"type":"s3"}`,
		`{"namespace":"fixtures","tableName":"t"}{}`,
		`{"namespace":"fixtures","tableName":"t","unknown":1}`,
		`[]`, `null`, `{`, "",
		// Nesting and width at and past the filter's bounds, and a
		// duplicate member that hides a deep filter from a lookup by name.
		`{"namespace":"fixtures","tableName":"t","icebergFilter":` + fixtureFilter(sidecartest.NestedNot(63)) + `}`,
		`{"namespace":"fixtures","tableName":"t","icebergFilter":` + fixtureFilter(sidecartest.NestedNot(64)) + `}`,
		`{"namespace":"fixtures","tableName":"t","applyResidual":true,"icebergFilter":` + fixtureFilter(sidecartest.WideOr(40)) + `}`,
		`{"namespace":"fixtures","tableName":"t","icebergFilter":` + fixtureFilter(sidecartest.NestedNot(80)) + `,"IcebergFilter":null}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/splits", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, req)
		checkAnswer(t, "POST /splits "+string(body), rec)
	})
}

// FuzzSplitsQuery sends arbitrary query strings to the three routes that
// parse the parameters of GET /splits (planQuery, and the Druid spec
// routes on top of it): every answer is a 200 or a 4xx JSON error, never a
// 5xx or a panic.
//
//	go test ./handlers -run '^$' -fuzz '^FuzzSplitsQuery$' -fuzztime 30s
func FuzzSplitsQuery(f *testing.F) {
	router := fuzzRouter(f)
	for _, seed := range []string{
		"table=fixtures.t",
		"table=fixtures.t&mode=rows&columns=id,user&timestamps=iso&binaryAsString=true",
		"table=fixtures.t&icebergFilter=%7B%22type%22%3A%22equals%22%2C%22filterColumn%22%3A%22action%22%2C%22filterValue%22%3A%22view%22%7D&residualFilterMode=warn&applyResidual=true",
		"table=fixtures.t&snapshotTime=2020-01-01T00:00:00Z",
		"table=fixtures.t&fromSnapshot=1&toSnapshot=2",
		"table=fixtures.t&ref=main&snapshotId=1",
		"table=fixtures.t&dataSource=t&timestampColumn=event_time&statement=replace&overwrite=ALL&partitionedBy=day",
		"table=fixtures.t&table=fixtures.t",
		"table=t",
		"table=fixtures.t&catalog=other",
		"table=%ZZ&;&&=",
		"",
		"table=fixtures.t&" + q("icebergFilter", fixtureFilter(sidecartest.NestedNot(64))).Encode(),
		"table=fixtures.t&applyResidual=true&" + q("icebergFilter", fixtureFilter(sidecartest.WideOr(40))).Encode(),
	} {
		for route := range uint8(3) {
			f.Add(route, seed)
		}
	}
	routes := []string{"/splits", "/druid/task", "/druid/sql"}
	f.Fuzz(func(t *testing.T, route uint8, query string) {
		path := routes[int(route)%len(routes)]
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.Path, req.URL.RawQuery = path, query
		req.RequestURI = req.URL.RequestURI()
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, req)
		checkAnswer(t, "GET "+path+"?"+query, rec)
	})
}
