package catalog

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// restCatalog is a loopback Iceberg REST catalog over a local warehouse:
// enough of the REST protocol (config, load table, the table credentials
// endpoint) to hand iceberg-go's REST client a table with whatever storage
// configuration and vended credentials a test asks for. The catalogs that
// vend real credentials (SeaweedFS, in the integration tier) cannot run in
// the plain suite; this one serves the files from local disk, where the
// credentials are not checked, so the tests here prove the sidecar's
// handling of them, not a store's.
//
// Where a test needs only a real catalog's answers (loads, listing,
// namespaces, a missing table, OAuth2 sign-in), Iceberg's own REST catalog
// server plays it (internal/icebergrest: its TestStart, TestIcebergRESTServer
// here and handlers' TestEveryCatalog). The tests here need what that
// server cannot do: vend the configuration and storage credentials a test
// chooses (Iceberg's server copies fixed ones from its own configuration,
// at most), advertise a chosen endpoint list, answer a load with edited
// metadata or a 503 on demand, count the loads, and keep each request's
// headers (SigV4).
type restCatalog struct {
	*httptest.Server
	// dir is the warehouse the tables are in.
	dir string
	// metadata is each table's metadata file, by "ns/name"; served, when
	// it names the table, is the metadata location announced instead of
	// the file's own.
	metadata map[string]string
	served   map[string]string
	// edit, when set, rewrites the metadata JSON a load answer carries.
	edit func([]byte) []byte

	mu sync.Mutex
	// config and creds are what a load answer vends; endpoints, when not
	// nil, is the endpoint list /v1/config advertises.
	config    map[string]string
	creds     []map[string]any
	endpoints []string
	// headers are the headers of every request, in order.
	headers []http.Header
	// failLoads answers every table load with 503.
	failLoads atomic.Bool
	loads     atomic.Int32
}

// newRESTCatalog serves the demo tables from the package's shared
// warehouse of them (sharedDemo).
func newRESTCatalog(t *testing.T) *restCatalog {
	t.Helper()
	dir, metadata := sharedDemo(t)
	rc := &restCatalog{dir: dir, metadata: maps.Clone(metadata)}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

// vend sets what the load answers vend.
func (rc *restCatalog) vend(config map[string]string, creds ...map[string]any) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.config, rc.creds = config, creds
}

// requestHeaders returns the headers of the requests so far.
func (rc *restCatalog) requestHeaders() []http.Header {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]http.Header(nil), rc.headers...)
}

func (rc *restCatalog) serve(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	rc.headers = append(rc.headers, r.Header.Clone())
	config, creds, endpoints := maps.Clone(rc.config), rc.creds, rc.endpoints
	rc.mu.Unlock()
	write := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	path := strings.TrimPrefix(r.URL.Path, "/v1/")
	switch {
	case path == "config":
		answer := map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{}}
		if endpoints != nil {
			answer["endpoints"] = endpoints
		}
		write(answer)
		return
	case strings.HasPrefix(path, "namespaces/") && strings.Contains(path, "/tables/"):
		ns, rest, _ := strings.Cut(strings.TrimPrefix(path, "namespaces/"), "/tables/")
		name, sub, _ := strings.Cut(rest, "/")
		loc, ok := rc.metadata[ns+"/"+name]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			write(map[string]any{"error": map[string]any{"message": "no such table", "type": "NoSuchTableException", "code": 404}})
			return
		}
		if sub == "credentials" {
			write(map[string]any{"storage-credentials": creds})
			return
		}
		if rc.failLoads.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			write(map[string]any{"error": map[string]any{"message": "down", "type": "ServiceUnavailableException", "code": 503}})
			return
		}
		rc.loads.Add(1)
		raw, err := os.ReadFile(strings.TrimPrefix(loc, "file://"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if rc.edit != nil {
			raw = rc.edit(raw)
		}
		if as, ok := rc.served[ns+"/"+name]; ok {
			loc = as
		}
		answer := map[string]any{"metadata-location": loc, "metadata": json.RawMessage(raw)}
		if config != nil {
			answer["config"] = config
		}
		if creds != nil {
			answer["storage-credentials"] = creds
		}
		write(answer)
		return
	}
	http.NotFound(w, r)
}
