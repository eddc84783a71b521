package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// TestUnopenableSchemeRefusedAtPlanning: /splits answers a table whose
// manifests name a data file on a store this build has no FileIO for
// (gs://) 422 unsupported, naming the file: the route's side of the
// catalog's ErrUnsupported, which the catalog package's test of the same
// name holds for data and delete files in every mode.
func TestUnopenableSchemeRefusedAtPlanning(t *testing.T) {
	t.Parallel()
	cat, dir := localWarehouse(t)
	_, err := tablegen.ForeignStore(context.Background(), cat, table.Identifier{"evo", "t"}, "gs", "")
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	srv := localServer(t, dir)
	resp, body := srv.get(t, "/splits?"+q("table", "evo.t").Encode())
	if resp.StatusCode != http.StatusUnprocessableEntity || errorCode(t, body) != "unsupported" || !strings.Contains(string(body), "gs://") {
		t.Fatalf("%d %s, want 422 unsupported naming the gs:// file", resp.StatusCode, body)
	}
}
