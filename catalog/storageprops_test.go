package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// endpoint is a loopback HTTP server that counts the requests it gets and
// keeps their Authorization headers; it answers each with 404.
type endpoint struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newEndpoint(t *testing.T) *endpoint {
	t.Helper()
	e := &endpoint{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.auths = append(e.auths, r.Header.Get("Authorization"))
		e.mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *endpoint) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.auths...)
}

// withTableProps has a REST catalog's load answers carry props among the
// table's properties, as a writer of the table sets them.
func withTableProps(t *testing.T, rc *restCatalog, props map[string]string) {
	rc.edit = func(raw []byte) []byte {
		// Called by the catalog's handler goroutine: errors are t.Error.
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Error(err)
			return raw
		}
		have, _ := m["properties"].(map[string]any)
		if have == nil {
			have = map[string]any{}
		}
		for k, v := range props {
			have[k] = v
		}
		m["properties"] = have
		b, err := json.Marshal(m)
		if err != nil {
			t.Error(err)
			return raw
		}
		return b
	}
}

// TestTablePropertiesConfigureNoStorage (issue 32, item 2): iceberg-go's
// REST catalog merges a table's properties into the table's FileIO
// configuration, over the operator's; a table whose properties set
// s3.endpoint to a loopback port had the sidecar send requests signed with
// the operator's access key to that port, and the operator's endpoint was
// never asked. A REST table whose properties configure storage (for every
// FileIO: s3.*, gcs.*, adls.*, client.*, token) is now refused with
// ErrUnsupported naming the property, before its FileIO opens anything:
// the table's endpoint gets no request. A table without such properties is
// read through the operator's endpoint.
func TestTablePropertiesConfigureNoStorage(t *testing.T) {
	const keyID = "AKIAOPERATORKEY"
	const metadata = "s3://lake/demo/orders/metadata/v1.metadata.json"
	// lake serves demo.orders from a REST catalog whose load answer sets
	// the table property key (to the URL of a loopback endpoint of the
	// table's, which counts what it gets) unless key is "", and a Catalog
	// over it whose operator's S3 endpoint is another loopback endpoint.
	lake := func(t *testing.T, key string) (cat *Catalog, table, operator *endpoint) {
		t.Helper()
		table, operator = newEndpoint(t), newEndpoint(t)
		rc := newRESTCatalog(t)
		// The table is announced on S3, so that iceberg-go builds it an
		// S3 FileIO.
		rc.served = map[string]string{"demo/orders": metadata}
		if key != "" {
			withTableProps(t, rc, map[string]string{key: table.URL})
		}
		// Warehouse and DataRoots, not StoragePrefixes, so that the test
		// runs against the code before the fix as well.
		cat, err := New(Config{Type: "rest", Name: "lake", URI: rc.URL, Warehouse: "s3://lake", DataRoots: []string{rc.dir},
			Props: map[string]string{"s3.endpoint": operator.URL, "s3.region": "us-east-1", "s3.access-key-id": keyID,
				"s3.secret-access-key": "operator-secret-key", "s3.force-virtual-addressing": "false"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cat.Close() })
		return cat, table, operator
	}
	open := func(cat *Catalog) error {
		ctx := context.Background()
		tbl, err := cat.LoadTable(ctx, demo.Orders)
		if err != nil {
			return err
		}
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return err
		}
		f, err := fsys.Open(metadata)
		if err == nil {
			_ = f.Close()
		}
		return err
	}

	t.Run("s3.endpoint in the table's properties", func(t *testing.T) {
		cat, table, operator := lake(t, "s3.endpoint")
		err := open(cat)
		if got := table.requests(); len(got) > 0 {
			signed := 0
			for _, a := range got {
				if strings.Contains(a, keyID) {
					signed++
				}
			}
			t.Fatalf("the table's endpoint got %d requests (%d signed with the operator's key %s); the operator's got %d",
				len(got), signed, keyID, len(operator.requests()))
		}
		if !errors.Is(err, fault.ErrUnsupported) || !strings.Contains(err.Error(), "s3.endpoint") {
			t.Fatalf("load: %v, want ErrUnsupported naming s3.endpoint", err)
		}
	})

	t.Run("no storage property in the table's", func(t *testing.T) {
		cat, table, operator := lake(t, "")
		_ = open(cat) // the operator's endpoint answers 404
		if len(operator.requests()) == 0 || len(table.requests()) > 0 {
			t.Fatalf("the operator's endpoint got %d requests, the table's %d", len(operator.requests()), len(table.requests()))
		}
	})

	for _, key := range []string{"s3.access-key-id", "s3.region", "s3.proxy-uri", "s3.signer.uri", "S3.Endpoint", "client.region",
		"gcs.keypath", "gcs.endpoint", "gcs.oauth2.token", "adls.endpoint", "adls.sas-token.acct", "adls.auth.shared-key.account.key",
		"token", "expiration-time"} {
		t.Run(key, func(t *testing.T) {
			cat, table, _ := lake(t, key)
			if err := open(cat); !errors.Is(err, fault.ErrUnsupported) || !strings.Contains(err.Error(), key) {
				t.Fatalf("a table setting %s: %v, want ErrUnsupported naming it", key, err)
			}
			if len(table.requests()) > 0 {
				t.Fatal("the table's endpoint was asked")
			}
		})
	}
}
