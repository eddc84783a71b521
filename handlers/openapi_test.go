package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	legacyrouter "github.com/getkin/kin-openapi/routers/legacy"
	"github.com/go-chi/chi/v5"
	"go.yaml.in/yaml/v3"

	"github.com/druidiceberg/sidecar/api"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/testnet"
	"github.com/druidiceberg/sidecar/sidecartest"
)

// TestRoutesMatchOpenAPI walks the live chi router and holds every route
// against api/openapi.yaml, both ways.
func TestRoutesMatchOpenAPI(t *testing.T) {
	var doc struct {
		OpenAPI string                    `yaml:"openapi"`
		Paths   map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatalf("api/openapi.yaml: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi %q, want 3.1", doc.OpenAPI)
	}
	var inSpec []string
	for path, ops := range doc.Paths {
		for method := range ops {
			inSpec = append(inSpec, strings.ToUpper(method)+" "+path)
		}
	}

	router := handlers.New(handlers.Config{Gatherer: nil})
	routes, ok := router.(chi.Routes)
	if !ok {
		t.Fatalf("router is %T, not chi.Routes", router)
	}
	var live []string
	err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		live = append(live, method+" "+route)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// /metrics exists only when a Gatherer is wired; main always wires one.
	live = append(live, "GET /metrics")

	slices.Sort(inSpec)
	slices.Sort(live)
	live = slices.Compact(live)
	if !slices.Equal(inSpec, live) {
		t.Fatalf("routes and api/openapi.yaml differ\n live: %v\n spec: %v", live, inSpec)
	}
}

// loadSpec parses api/openapi.yaml with kin-openapi (which reads OpenAPI 3.1
// and validates 3.1 documents with JSON Schema 2020-12) and validates it.
func loadSpec(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatalf("load api/openapi.yaml: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("api/openapi.yaml is OpenAPI %s, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("api/openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	return doc
}

func TestOpenAPIDocumentValid(t *testing.T) {
	doc := loadSpec(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "" || op.Summary == "" {
				t.Errorf("%s %s lacks an operationId or summary", method, path)
			}
			if op.Responses.Status(http.StatusOK) == nil {
				t.Errorf("%s %s documents no 200", method, path)
			}
		}
	}
}

// TestLiveAnswersMatchOpenAPI sends real requests to the router over the demo
// tables and validates each request and answer (status, headers, media type,
// JSON body) against api/openapi.yaml. A status the spec does not list for
// the route fails.
func TestLiveAnswersMatchOpenAPI(t *testing.T) {
	doc := loadSpec(t)
	router, err := legacyrouter.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	const user, password = "druid", "pw"
	open := newDemoServer(t)
	authed := newDemoServer(t, func(c *handlers.Config) {
		c.BasicAuth = []handlers.Credential{{Username: user, Password: password}}
	})
	down := newServer(t, sidecatalog.Config{Type: "rest", URI: "http://" + testnet.FreeAddr(t)}, nil)

	orders := open.plan(t, q("table", "demo.orders"))
	customers := open.plan(t, q("table", "demo.customers"))
	if orders.Mode != "v2" || customers.Mode != "v1" {
		t.Fatalf("demo plans: orders %s, customers %s", orders.Mode, customers.Mode)
	}
	rowsPath := strings.TrimPrefix(orders.Splits[0].URI, open.URL)
	filePath := strings.TrimPrefix(customers.Splits[0].URI, open.URL)
	rowsToken := strings.TrimSuffix(strings.TrimPrefix(rowsPath, "/splits/"), "/rows")
	forged := rowsToken[:len(rowsToken)-2] + "AA"
	if forged == rowsToken {
		forged = rowsToken[:len(rowsToken)-2] + "BB"
	}
	task := "/druid/task?table=demo.orders&dataSource=orders&timestampColumn=order_ts"
	sql := "/druid/sql?table=demo.orders&dataSource=orders&timestampColumn=order_ts"
	druidSpec := `{"type":"iceberg","namespace":"demo","tableName":"orders",` +
		`"icebergFilter":{"type":"interval","filterColumn":"order_ts","intervals":["2024-03-01T00:00:00Z/2024-04-01T00:00:00Z"]},` +
		`"residualFilterMode":"warn","icebergCatalog":{"type":"local"}}`

	tests := []struct {
		name   string
		srv    *testServer
		method string
		path   string
		body   string
		header []string
		status int
		// badRequest: the request itself breaks the spec on purpose, so
		// only the answer is validated.
		badRequest bool
	}{
		{"plan v2", open, "GET", "/splits?table=demo.orders", "", nil, 200, false},
		{"plan v1", open, "GET", "/splits?table=demo.customers", "", nil, 200, false},
		{"plan rows with options", open, "GET", "/splits?table=demo.customers&mode=rows&columns=customer_id&timestamps=iso", "", nil, 200, false},
		{"plan unknown parameter", open, "GET", "/splits?table=demo.orders&tabel=x", "", nil, 400, false},
		{"plan bad mode", open, "GET", "/splits?table=demo.orders&mode=fast", "", nil, 400, true},
		{"plan unknown table", open, "GET", "/splits?table=demo.nope", "", nil, 404, false},
		{"plan unknown snapshot", open, "GET", "/splits?table=demo.orders&snapshotId=1", "", nil, 404, false},
		{"plan files with deletes", open, "GET", "/splits?table=demo.orders&mode=files", "", nil, 409, false},
		{"plan catalog down", down, "GET", "/splits?table=db.t", "", nil, 503, false},
		{"post druid spec", open, "POST", "/splits", druidSpec, []string{"Content-Type", "application/json"}, 200, false},
		{"post unknown field", open, "POST", "/splits", `{"namespace":"demo","tableName":"orders","nope":1}`, []string{"Content-Type", "application/json"}, 200, false},
		{"post wrong media type", open, "POST", "/splits", `namespace=demo`, []string{"Content-Type", "text/plain"}, 415, true},
		{"druid task", open, "GET", task, "", nil, 200, false},
		{"druid task missing dataSource", open, "GET", "/druid/task?table=demo.orders&timestampColumn=order_ts", "", nil, 400, true},
		{"druid sql insert", open, "GET", sql, "", nil, 200, false},
		{"druid sql replace", open, "GET", sql + "&statement=replace&overwrite=2024-03-01T00:00:00Z/2024-04-01T00:00:00Z", "", nil, 200, false},
		{"changes: initial load", open, "GET", "/changes?table=demo.orders&timeColumn=order_ts&dataSource=orders", "", nil, 200, false},
		{"changes since the current snapshot", open, "GET", fmt.Sprintf("/changes?table=demo.orders&timeColumn=order_ts&fromSnapshot=%d&granularity=MONTH&include=2024-03-01T00:00:00Z/2024-04-01T00:00:00Z", *orders.SnapshotID), "", nil, 200, false},
		{"changes from an unknown snapshot", open, "GET", "/changes?table=demo.orders&timeColumn=order_ts&fromSnapshot=1", "", nil, 404, false},
		{"changes without timeColumn", open, "GET", "/changes?table=demo.orders", "", nil, 400, true},
		{"changes on a missing column", open, "GET", "/changes?table=demo.orders&timeColumn=nope&fromSnapshot=1", "", nil, 400, false},
		{"rows", open, "GET", rowsPath, "", nil, 200, false},
		{"rows from byte 10", open, "GET", rowsPath, "", []string{"Range", "bytes=10-"}, 206, false},
		{"rows bad range", open, "GET", rowsPath, "", []string{"Range", "bytes=-10"}, 416, false},
		{"rows malformed token", open, "GET", "/splits/not-a-token/rows", "", nil, 400, false},
		{"rows forged token", open, "GET", "/splits/" + forged + "/rows", "", nil, 403, false},
		{"file", open, "GET", filePath, "", nil, 200, false},
		{"file first bytes", open, "GET", filePath, "", []string{"Range", "bytes=0-3"}, 206, false},
		{"file with a rows token", open, "GET", "/files/" + rowsToken, "", nil, 403, false},
		{"healthz", open, "GET", "/healthz", "", nil, 200, false},
		{"readyz", open, "GET", "/readyz", "", nil, 200, false},
		{"readyz catalog down", down, "GET", "/readyz", "", nil, 503, false},
		{"metrics", open, "GET", "/metrics", "", nil, 200, false},
		{"openapi", open, "GET", "/openapi.yaml", "", nil, 200, false},
		{"auth: no credentials", authed, "GET", "/splits?table=demo.orders", "", nil, 401, false},
		{"auth: wrong password", authed, "GET", "/druid/sql?table=demo.orders&dataSource=o&timestampColumn=order_ts", "", []string{"Authorization", basicAuth(user, "nope")}, 401, false},
		{"auth: credentials", authed, "GET", "/splits?table=demo.orders", "", []string{"Authorization", basicAuth(user, password)}, 200, false},
		{"auth: healthz is open", authed, "GET", "/healthz", "", nil, 200, false},
	}
	// The validator bites: answers that break the spec are refused.
	for _, bad := range []struct {
		status int
		body   string
	}{
		{http.StatusBadRequest, `{"error":{"code":"no_such_code","message":"x"}}`},
		{http.StatusBadRequest, `{"error":{"code":"bad_request"}}`},
		{http.StatusTeapot, `{"error":{"code":"bad_request","message":"x"}}`},
		{http.StatusOK, `{"table":"demo.orders"}`},
	} {
		req := httptest.NewRequest(http.MethodGet, open.URL+"/splits?table=demo.orders", nil)
		route, pathParams, err := router.FindRoute(req)
		if err != nil {
			t.Fatal(err)
		}
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: pathParams, Route: route},
			Status:                 bad.status,
			Header:                 http.Header{"Content-Type": {"application/json"}},
			Options:                &openapi3filter.Options{IncludeResponseStatus: true},
		}
		if openapi3filter.ValidateResponse(context.Background(), in.SetBodyBytes([]byte(bad.body))) == nil {
			t.Fatalf("a %d answer %s passed validation", bad.status, bad.body)
		}
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, err := http.NewRequestWithContext(ctx, tc.method, tc.srv.URL+tc.path, body)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+1 < len(tc.header); i += 2 {
				req.Header.Set(tc.header[i], tc.header[i+1])
			}
			route, pathParams, err := router.FindRoute(req)
			if err != nil {
				t.Fatalf("%s %s is not in api/openapi.yaml: %v", tc.method, tc.path, err)
			}
			reqInput := &openapi3filter.RequestValidationInput{
				Request: req, PathParams: pathParams, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
			}
			if !tc.badRequest {
				if err := openapi3filter.ValidateRequest(ctx, reqInput); err != nil {
					t.Fatalf("the test's request breaks the spec: %v", err)
				}
				if tc.body != "" {
					req.Body = io.NopCloser(strings.NewReader(tc.body))
				}
			}

			resp, err := tc.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, got)
			}
			if resp.Header.Get(handlers.RequestIDHeader) == "" {
				t.Error("the answer has no X-Request-Id")
			}

			// Bodies documented as an opaque string (NDJSON, Parquet, the
			// YAML document itself) are checked for their media type
			// here and for their content below; kin-openapi would decode
			// application/yaml and hold the decoded document against
			// `type: string`.
			mediaType, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
			if err != nil && len(got) > 0 {
				t.Fatalf("Content-Type %q: %v", resp.Header.Get("Content-Type"), err)
			}
			opaque := mediaType != "application/json" && mediaType != "text/plain"
			respInput := &openapi3filter.ResponseValidationInput{
				RequestValidationInput: reqInput,
				Status:                 resp.StatusCode,
				Header:                 resp.Header,
				Options: &openapi3filter.Options{
					IncludeResponseStatus: true,
					ExcludeResponseBody:   opaque,
					AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
				},
			}
			respInput.SetBodyBytes(got)
			if err := openapi3filter.ValidateResponse(ctx, respInput); err != nil {
				t.Fatalf("the answer breaks api/openapi.yaml: %v\n%s", err, truncate(got))
			}
			if opaque {
				documented := route.Operation.Responses.Status(resp.StatusCode).Value.Content
				if documented.Get(mediaType) == nil {
					t.Fatalf("media type %q is not documented for %d: %v", mediaType, resp.StatusCode, slices.Collect(maps.Keys(documented)))
				}
				switch mediaType {
				case "application/x-ndjson":
					if resp.StatusCode == http.StatusOK {
						for _, line := range sidecartest.NDJSONLines(t, got) {
							if !json.Valid([]byte(line)) || line[0] != '{' {
								t.Fatalf("NDJSON line %q is not a JSON object", line)
							}
						}
					}
				case "application/vnd.apache.parquet":
					if !bytes.HasPrefix(got, []byte("PAR1")) {
						t.Fatalf("the file does not start with PAR1")
					}
				case "application/yaml":
					if !bytes.Equal(got, api.OpenAPI) {
						t.Fatal("/openapi.yaml is not api/openapi.yaml")
					}
				}
			}
		})
	}
}

func truncate(b []byte) []byte {
	if len(b) > 2000 {
		return b[:2000]
	}
	return b
}
