//go:build integration

package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/vendingcatalog"
)

// The vending tier: catalogs that hand the reader its S3 keys, proven with
// plain iceberg-go (catalog/rest) before the sidecar relies on them.
// SeaweedFS's own catalog vends STS sessions (withVending); the vending
// front (internal/vendingcatalog) vends short-lived IAM keys it rotates.

// restCatalog opens the REST catalog at uri with iceberg-go.
func restCatalog(t *testing.T, uri, warehouse string, props map[string]string) catalog.Catalog {
	t.Helper()
	all := maps.Clone(props)
	all["type"], all["uri"], all["warehouse"] = "rest", uri, warehouse
	cat, err := catalog.Load(context.Background(), "vending", all)
	if err != nil {
		t.Fatalf("open the REST catalog at %s: %v", uri, err)
	}
	return cat
}

// vendedTable is the table the vending tests read.
type vendedTable struct {
	ident table.Identifier
	// want is its live rows; files its data and delete files, as its
	// writer planned them.
	want  []string
	files []string
}

// vendingTable writes the positional_and_equality scenario as lake.t
// through w's catalog as the admin.
func vendingTable(t *testing.T, w *seaweed) vendedTable {
	t.Helper()
	ctx := context.Background()
	admin, _ := seaweedREST(t, w)
	vt := vendedTable{ident: table.Identifier{"lake", "t"}}
	tbl, err := scenarioNamed(t, "positional_and_equality").Build(ctx, admin, vt.ident)
	if err != nil {
		t.Fatal(err)
	}
	if vt.want, err = tableRows(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		vt.files = append(vt.files, task.File.FilePath())
		for _, d := range task.DeleteFiles {
			vt.files = append(vt.files, d.FilePath())
		}
	}
	return vt
}

// readRows loads ident from cat and reads its live rows with iceberg-go's
// Scan.ReadTasks, through the FileIO the load answer configured.
func readRows(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, []string, error) {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", strings.Join(ident, "."), err)
	}
	rows, err := tableRows(ctx, tbl)
	return tbl, rows, err
}

// tableRows reads a loaded table's live rows.
func tableRows(ctx context.Context, tbl *table.Table) ([]string, error) {
	return tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
}

// wantSameRows fails t unless got equals want, row for row.
func wantSameRows(t *testing.T, what string, got []string, err error, want []string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s: %d rows\n%s\nwant %d\n%s", what, len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
}

// s3Answer is how w's S3 store answers a GET of location signed with k.
func s3Answer(t *testing.T, w *seaweed, k vendingcatalog.Key, location string) vendingcatalog.Answer {
	t.Helper()
	a, err := vendingcatalog.GetObject(context.Background(), w.S3URL, "us-east-1", k, location)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// oauthToken exchanges OAuth2 client credentials for a bearer token at the
// REST catalog's token endpoint, as iceberg-go and Polaris clients do.
func oauthToken(uri, id, secret, scope string) (status int, body map[string]any, err error) {
	resp, err := http.PostForm(uri+"/v1/oauth/tokens", url.Values{
		"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {scope},
	})
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, body, nil
}

// loadAnswer is the part of a REST table-load answer that configures
// storage.
type loadAnswer struct {
	Metadata struct {
		Location string `json:"location"`
	} `json:"metadata"`
	Config             map[string]string `json:"config"`
	StorageCredentials []struct {
		Prefix string            `json:"prefix"`
		Config map[string]string `json:"config"`
	} `json:"storage-credentials"`
}

// loadTableAnswer GETs the table's load answer with a bearer token, asking
// for vended credentials or not.
func loadTableAnswer(t *testing.T, uri, prefix string, ident table.Identifier, token string, vended bool) loadAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/v1/%s/namespaces/%s/tables/%s", uri, prefix, ident[0], ident[1]), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if vended {
		req.Header.Set("X-Iceberg-Access-Delegation", "vended-credentials")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("load %v: %d %s %v", ident, resp.StatusCode, b, err)
	}
	var a loadAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// expiresIn is how far in the future the vended expiry in config lies.
func expiresIn(t *testing.T, config map[string]string) time.Duration {
	t.Helper()
	ms, err := strconv.ParseInt(config["s3.session-token-expires-at-ms"], 10, 64)
	if err != nil {
		t.Fatalf("vended config without an expiry: %v", err)
	}
	return time.Until(time.UnixMilli(ms))
}

// TestRealSeaweedFSVendsCredentials: SeaweedFS's own REST catalog, started
// with a credential role, vends STS session credentials scoped to the
// table, and plain iceberg-go, authenticated Polaris-style (OAuth2 client
// credentials and a scope) as a principal whose own keys S3 refuses, and
// given no S3 keys, reads the table exactly with them.
func TestRealSeaweedFSVendsCredentials(t *testing.T) {
	ctx := context.Background()
	w := startSeaweed(t, withVending())
	vt := vendingTable(t, w)

	// The token endpoint: the reader's credential buys a bearer token and
	// the scope comes back; a wrong secret buys nothing.
	status, tok, err := oauthToken(w.RESTURL, w.ReaderKey, w.ReaderSecret, "PRINCIPAL_ROLE:ALL")
	if err != nil || status != http.StatusOK || tok["access_token"] == "" || tok["scope"] != "PRINCIPAL_ROLE:ALL" ||
		!strings.EqualFold(fmt.Sprint(tok["token_type"]), "bearer") {
		t.Fatalf("POST /v1/oauth/tokens as the reader: %d %v %v", status, tok, err)
	}
	if status, body, _ := oauthToken(w.RESTURL, w.ReaderKey, "wrong-secret", "PRINCIPAL_ROLE:ALL"); status != http.StatusUnauthorized || body["error"] != "invalid_client" {
		t.Fatalf("POST /v1/oauth/tokens with a wrong secret: %d %v", status, body)
	}
	token := tok["access_token"].(string)

	// What it vends: keys, a session token and an expiry 900 s out, in
	// config and in storage-credentials scoped to the table location; and
	// nothing to a client that does not ask.
	a := loadTableAnswer(t, w.RESTURL, w.Bucket, vt.ident, token, true)
	if a.Config["s3.access-key-id"] == "" || a.Config["s3.secret-access-key"] == "" || a.Config["s3.session-token"] == "" ||
		a.Config["s3.endpoint"] != w.S3URL {
		t.Fatalf("vended config %v", a.Config)
	}
	if d := expiresIn(t, a.Config); d < 800*time.Second || d > 901*time.Second {
		t.Fatalf("the vended credentials expire in %s, want 900 s", d)
	}
	if len(a.StorageCredentials) != 1 || a.StorageCredentials[0].Prefix != a.Metadata.Location ||
		a.StorageCredentials[0].Config["s3.session-token"] != a.Config["s3.session-token"] {
		t.Fatalf("storage-credentials %+v for table location %s", a.StorageCredentials, a.Metadata.Location)
	}
	if plain := loadTableAnswer(t, w.RESTURL, w.Bucket, vt.ident, token, false); plain.Config["s3.access-key-id"] != "" || len(plain.StorageCredentials) != 0 {
		t.Fatalf("credentials vended without being asked for: %v %v", plain.Config, plain.StorageCredentials)
	}

	// The S3 store refuses the reader's own keys, serves the vended
	// session, and refuses the session outside the table.
	reader := restCatalog(t, w.RESTURL, "s3://"+w.Bucket, w.readerProps())
	_, got, err := readRows(ctx, reader, vt.ident)
	wantSameRows(t, "iceberg-go with the vended credentials", got, err, vt.want)
	file := vt.files[0]
	session := vendingcatalog.Key{AccessKeyID: a.Config["s3.access-key-id"], SecretAccessKey: a.Config["s3.secret-access-key"],
		SessionToken: a.Config["s3.session-token"]}
	if ans := s3Answer(t, w, vendingcatalog.Key{AccessKeyID: w.ReaderKey, SecretAccessKey: w.ReaderSecret}, file); !ans.Refused() {
		t.Fatalf("S3 answers the reader's own keys %d %s, want 403", ans.Status, ans.Code)
	}
	if ans := s3Answer(t, w, session, file); ans.Status != http.StatusOK {
		t.Fatalf("S3 answers the vended session %d %s", ans.Status, ans.Code)
	}
	if ans := s3Answer(t, w, session, "s3://"+w.Bucket+"/elsewhere/x.parquet"); !ans.Refused() {
		t.Fatalf("S3 answers the vended session outside the table %d %s, want 403", ans.Status, ans.Code)
	}
}
