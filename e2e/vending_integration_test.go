//go:build integration

package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
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
	"github.com/druidiceberg/sidecar/sidecartest"
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
func vendingTable(t *testing.T, w *sidecartest.Seaweed) vendedTable {
	t.Helper()
	ctx := context.Background()
	admin, _ := sidecartest.SeaweedREST(t, w)
	vt := vendedTable{ident: table.Identifier{"lake", "t"}}
	tbl, err := tablegen.ScenarioNamed(t, "positional_and_equality").Build(ctx, admin, vt.ident)
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

// readFiles reads every file of vt through tbl's FileIO, as
// tbl.FS(context.Background()) gives it.
func readFiles(tbl *table.Table, vt vendedTable) error {
	fs, err := tbl.FS(context.Background())
	if err != nil {
		return err
	}
	for _, name := range vt.files {
		f, err := fs.Open(name)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, f)
		if err := errors.Join(err, f.Close()); err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
	}
	return nil
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
func s3Answer(t *testing.T, w *sidecartest.Seaweed, k vendingcatalog.Key, location string) vendingcatalog.Answer {
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
	w := sidecartest.StartSeaweed(t, sidecartest.WithVending())
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

	// The S3 store refuses the reader's own keys and unsigned requests,
	// serves the vended session, and refuses the session outside the
	// table.
	reader := restCatalog(t, w.RESTURL, "s3://"+w.Bucket, w.ReaderProps())
	_, got, err := readRows(ctx, reader, vt.ident)
	wantSameRows(t, "iceberg-go with the vended credentials", got, err, vt.want)
	file := vt.files[0]
	session := vendingcatalog.Key{AccessKeyID: a.Config["s3.access-key-id"], SecretAccessKey: a.Config["s3.secret-access-key"],
		SessionToken: a.Config["s3.session-token"]}
	if ans := s3Answer(t, w, vendingcatalog.Key{AccessKeyID: w.ReaderKey, SecretAccessKey: w.ReaderSecret}, file); !ans.Refused() {
		t.Fatalf("S3 answers the reader's own keys %d %s, want 403", ans.Status, ans.Code)
	}
	if resp, err := http.Get(w.S3URL + "/" + strings.TrimPrefix(file, "s3://")); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("S3 answers an unsigned request %v %v, want 403", resp, err)
	} else {
		resp.Body.Close()
	}
	if ans := s3Answer(t, w, session, file); ans.Status != http.StatusOK {
		t.Fatalf("S3 answers the vended session %d %s", ans.Status, ans.Code)
	}
	if ans := s3Answer(t, w, session, "s3://"+w.Bucket+"/elsewhere/x.parquet"); !ans.Refused() {
		t.Fatalf("S3 answers the vended session outside the table %d %s, want 403", ans.Status, ans.Code)
	}
}

// startFront starts a vending front over w's catalog for mode, minting keys
// for a user of its own, closed (its keys and user deleted) when the test
// ends; Close reports the errors of its timed work.
func startFront(t *testing.T, w *sidecartest.Seaweed, o vendingcatalog.Options) *vendingcatalog.Front {
	t.Helper()
	o.Catalog, o.S3, o.Bucket = w.RESTURL, w.S3URL, w.Bucket
	o.AdminAccessKey, o.AdminSecretKey = w.AccessKey, w.SecretKey
	o.User = fmt.Sprintf("vend-%s-%d", o.Mode, rand.IntN(1e9))
	f, err := vendingcatalog.Start(context.Background(), o)
	if err != nil {
		t.Fatalf("start the vending front: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("close the vending front: %v", err)
		}
	})
	return f
}

// wantRefused fails t unless w's S3 store refuses k for location as a key
// it does not know.
func wantRefused(t *testing.T, w *sidecartest.Seaweed, k vendingcatalog.Key, location string) {
	t.Helper()
	if a := s3Answer(t, w, k, location); !a.Refused() || a.Code != "InvalidAccessKeyId" {
		t.Fatalf("S3 answers key %s with %d %s, want 403 InvalidAccessKeyId", k.AccessKeyID, a.Status, a.Code)
	}
}

// TestRealVendingFront: the vending front over SeaweedFS's catalog, read
// with plain iceberg-go given no S3 keys, in each of its modes. A key is
// accepted by SeaweedFS's S3 store while it is vended, refused (403) once
// the front expired it, and a reload of the table gets the new key.
func TestRealVendingFront(t *testing.T) {
	w := sidecartest.StartSeaweed(t, sidecartest.WithIdentities())
	vt := vendingTable(t, w)
	warehouse := "s3://" + w.Bucket
	file := vt.files[0]

	// Keys vended in config or in storage-credentials without the
	// credentials endpoint: iceberg-go keeps a loaded table's key until the
	// table is loaded again. Rotation and expiry are driven by events here.
	for _, mode := range []vendingcatalog.Mode{vendingcatalog.Config, vendingcatalog.StorageCredentials} {
		t.Run(mode.String()+" rotated and expired", func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := startFront(t, w, vendingcatalog.Options{Mode: mode, Lifetime: 10 * time.Minute})
			cat := restCatalog(t, f.URL(), warehouse, w.ReaderProps())
			tbl, got, err := readRows(ctx, cat, vt.ident)
			wantSameRows(t, "iceberg-go with the vended key", got, err, vt.want)

			old := f.Current()
			next, err := f.Rotate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// The old key lives on until its expiry, beside the new one.
			if a := s3Answer(t, w, old, file); a.Status != http.StatusOK {
				t.Fatalf("S3 answers the rotated key %d %s before its expiry", a.Status, a.Code)
			}
			got, err = tableRows(ctx, tbl)
			wantSameRows(t, "read with the rotated key before its expiry", got, err, vt.want)
			if err := f.ExpireOld(ctx); err != nil {
				t.Fatal(err)
			}
			wantRefused(t, w, old, file)
			if a := s3Answer(t, w, next, file); a.Status != http.StatusOK {
				t.Fatalf("S3 answers the new key %d %s", a.Status, a.Code)
			}
			// The table loaded before still holds the old key and gets the
			// store's refusal; loaded again, it reads with the new key.
			if _, err := tableRows(ctx, tbl); err == nil || !strings.Contains(err.Error(), "StatusCode: 403") {
				t.Fatalf("read with the expired key: %v, want S3's 403", err)
			}
			_, got, err = readRows(ctx, cat, vt.ident)
			wantSameRows(t, "iceberg-go after reloading the table", got, err, vt.want)
			if c := f.Counts(); c.VendedLoads != 2 || c.Refreshes != 0 || c.Minted != 2 || c.Deleted != 1 {
				t.Fatalf("counts %+v, want 2 vending loads, 2 keys minted, 1 deleted", c)
			}
		})
	}

	// The credentials endpoint: iceberg-go refreshes a key vended in
	// storage-credentials halfway through its lifetime, without reloading
	// the table, so it reads on across the timed rotation (every 3 s) and
	// the expiry (6 s) of the key it loaded the table with. The files are
	// opened through tbl.FS(context.Background()): iceberg-go keeps a
	// refreshed FileIO bound to the context of the call that refreshed it
	// (see the next subtest), which inside a scan is one that ends with it.
	t.Run("storage-credentials refreshed across rotation and expiry", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		f := startFront(t, w, vendingcatalog.Options{Mode: vendingcatalog.StorageCredentials, CredentialsEndpoint: true,
			Lifetime: 6 * time.Second, Rotation: 3 * time.Second})
		cat := restCatalog(t, f.URL(), warehouse, w.ReaderProps())
		first := f.Current()
		tbl, err := cat.LoadTable(ctx, vt.ident)
		if err != nil {
			t.Fatal(err)
		}
		// The front rotates (3 s) and expires (6 s) its keys on its own
		// clock, which is what is under test: the table is read every
		// 100 ms across that time, for at most 90 s.
		deadline := time.Now().Add(90 * time.Second)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for reads := 1; ; reads++ {
			if err := readFiles(tbl, vt); err != nil {
				t.Fatalf("read %d of the table loaded once: %v (%+v)", reads, err, f.Counts())
			}
			c := f.Counts()
			if c.Refreshes > 0 && c.Deleted > 0 {
				t.Logf("%d reads; %+v", reads, c)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no refresh and expiry within 90 s: %+v", c)
			}
			<-tick.C
		}
		wantRefused(t, w, first, file)
		if err := readFiles(tbl, vt); err != nil {
			t.Fatalf("read after the first key's expiry: %v", err)
		}
		if c := f.Counts(); c.VendedLoads != 1 {
			t.Fatalf("counts %+v: the table was loaded again", c)
		}
	})

	// iceberg-go v0.7.0 builds a table's vended FileIO (storage-credentials)
	// with the context of the first tbl.FS call, keeps it until the next
	// refresh and opens every file with that context (blobfs.FileIO keeps
	// it): once that context ends, the table cannot read. A caller that
	// keeps tables must hand tbl.FS a context that outlives them. When this
	// subtest fails, iceberg-go no longer does this.
	t.Run("iceberg-go binds a vended FileIO to its first context", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		f := startFront(t, w, vendingcatalog.Options{Mode: vendingcatalog.StorageCredentials, Lifetime: 10 * time.Minute})
		cat := restCatalog(t, f.URL(), warehouse, w.ReaderProps())
		tbl, err := cat.LoadTable(ctx, vt.ident)
		if err != nil {
			t.Fatal(err)
		}
		request, cancel := context.WithCancel(ctx)
		if _, err := tbl.FS(request); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := readFiles(tbl, vt); !errors.Is(err, context.Canceled) {
			t.Fatalf("read through tbl.FS(context.Background()) after the first caller's context ended: %v, want context.Canceled", err)
		}
		if tbl, err = cat.LoadTable(ctx, vt.ident); err != nil {
			t.Fatal(err)
		}
		request, cancel = context.WithCancel(ctx)
		if _, err := tbl.FS(context.WithoutCancel(request)); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := readFiles(tbl, vt); err != nil {
			t.Fatalf("read after a first call with context.WithoutCancel: %v", err)
		}
	})

	t.Run("nothing vended", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		f := startFront(t, w, vendingcatalog.Options{Mode: vendingcatalog.Nothing, Lifetime: 10 * time.Minute})
		// Without keys of its own a client cannot read; with them (the
		// static fallback) it can.
		if _, _, err := readRows(ctx, restCatalog(t, f.URL(), warehouse, w.ReaderProps()), vt.ident); err == nil {
			t.Fatal("read without keys, none vended")
		}
		props := w.ReaderProps()
		maps.Copy(props, w.S3Props())
		_, got, err := readRows(ctx, restCatalog(t, f.URL(), warehouse, props), vt.ident)
		wantSameRows(t, "iceberg-go with its own keys", got, err, vt.want)
		if c := f.Counts(); c.Loads != 2 || c.VendedLoads != 0 {
			t.Fatalf("counts %+v, want 2 loads, none vending", c)
		}
	})

	t.Run("unknown key vended", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		f := startFront(t, w, vendingcatalog.Options{Mode: vendingcatalog.UnknownKey, Lifetime: 10 * time.Minute})
		_, _, err := readRows(ctx, restCatalog(t, f.URL(), warehouse, w.ReaderProps()), vt.ident)
		if err == nil || !strings.Contains(err.Error(), "InvalidAccessKeyId") {
			t.Fatalf("read with a key SeaweedFS does not know: %v, want S3's 403 InvalidAccessKeyId", err)
		}
		wantRefused(t, w, f.Current(), file)
		if c := f.Counts(); c.VendedLoads != 1 {
			t.Fatalf("counts %+v, want 1 vending load", c)
		}
	})
}
