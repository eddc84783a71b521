package splits

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestSQLDriver(t *testing.T) {
	tests := []struct {
		uri, driver, dialect string
		props                map[string]string
	}{
		{"postgres://u@127.0.0.1:5432/cat", "pgx", "postgres", nil},
		{"postgresql://u@db/cat?sslmode=disable", "pgx", "postgres", nil},
		{"file:/var/lib/sidecar/catalog.db", "sqlite", "sqlite", nil},
		{"/var/lib/catalog.sqlite", "sqlite", "sqlite", nil},
		{"mysql://x", "mysql", "mysql", map[string]string{"sql.driver": "mysql", "sql.dialect": "mysql"}},
		{"postgres://x", "postgres-other", "postgres", map[string]string{"sql.driver": "postgres-other"}},
	}
	for _, tc := range tests {
		driver, dialect, err := SQLDriver(tc.uri, tc.props)
		if err != nil || driver != tc.driver || dialect != tc.dialect {
			t.Errorf("%s: %s/%s, %v; want %s/%s", tc.uri, driver, dialect, err, tc.driver, tc.dialect)
		}
	}
	if _, _, err := SQLDriver("mysql://x", nil); err == nil {
		t.Error("an unknown database must ask for sql.driver and sql.dialect")
	}
	if err := (CatalogConfig{Type: "sql"}).Validate(); err == nil {
		t.Error("catalog sql without a URI must be refused")
	}
}

// TestRedact: a catalog error never carries a secret of the configuration,
// whether a secret-looking property, the URI's password or a value read from
// the environment or a file; and the cause stays matchable.
func TestRedact(t *testing.T) {
	cfg := CatalogConfig{
		Type: "rest", Name: "lake", URI: "https://sidecar:uri-pass%2Fword@catalog:8181",
		Props: map[string]string{
			"credential":           "client-id:client-secret-9",
			"s3.secret-access-key": "s3-secret-9",
			"s3.region":            "eu-west-1",
		},
		Secrets: []string{"env-secret-9"},
	}
	cause := fmt.Errorf("%w: 401 for client-id:client-secret-9 with key s3-secret-9, uri-pass/word, uri-pass%%2Fword, env-secret-9 in eu-west-1",
		ErrUnavailable)
	err := redact(cause, cfg.secrets())
	for _, secret := range []string{"client-secret-9", "s3-secret-9", "uri-pass", "env-secret-9"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%q survives redaction: %s", secret, err)
		}
	}
	if !strings.Contains(err.Error(), "eu-west-1") {
		t.Errorf("a value that is no secret was redacted: %s", err)
	}
	if !errors.Is(err, ErrUnavailable) {
		t.Error("redaction hides the cause")
	}
	if plain := errors.New("nothing secret"); redact(plain, cfg.secrets()) != plain {
		t.Error("an error without secrets must pass through unchanged")
	}
}

// TestDeniedByCatalog: a catalog's refusal of the credentials is told apart
// from a catalog that could not be reached.
func TestDeniedByCatalog(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"OAuth refusal", fmt.Errorf("get config: %w", fmt.Errorf("invalid_client: bad secret: %w", rest.ErrOAuthError)), true},
		{"OAuth endpoint unreachable", fmt.Errorf("%w: Post \"http://c/v1/oauth/tokens\": dial tcp: connection refused", rest.ErrOAuthError), false},
		{"REST 401", fmt.Errorf("load: %w", rest.ErrUnauthorized), true},
		{"REST 403", rest.ErrForbidden, true},
		{"REST 500", rest.ErrServerError, false},
		{"wrong password", fmt.Errorf("connect: %w", &pgconn.PgError{Code: "28P01"}), true},
		{"no such database", &pgconn.PgError{Code: "3D000"}, false},
	}
	for _, tc := range tests {
		if got := deniedByCatalog(tc.err); got != tc.want {
			t.Errorf("%s: denied %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseIdentifier(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string // nil: refused with ErrBadRequest
	}{
		{"demo.orders", []string{"demo", "orders"}},
		{"a.b.c", []string{"a", "b", "c"}},
		{"démo.ördérs", []string{"démo", "ördérs"}},
		{"demo.my table", []string{"demo", "my table"}},
		{"demo." + strings.Repeat("x", MaxNameBytes), []string{"demo", strings.Repeat("x", MaxNameBytes)}},
		{"demo." + strings.Repeat("x", MaxNameBytes+1), nil},
		{strings.Repeat("a.", MaxNameParts-1) + "t", strings.Split(strings.Repeat("a.", MaxNameParts-1)+"t", ".")},
		{strings.Repeat("a.", MaxNameParts) + "t", nil},
		{"orders", nil}, {"demo.", nil}, {".orders", nil}, {"demo..orders", nil},
		{"demo.ord\x00ers", nil}, {"demo.a/b", nil}, {`demo.a\b`, nil}, {"demo.a\tb", nil},
		{"demo.\u0085", nil}, {"demo.\xff", nil}, {strings.Repeat("x", 1<<20), nil},
	} {
		got, err := ParseIdentifier(tc.name)
		switch {
		case tc.want == nil && !errors.Is(err, ErrBadRequest):
			t.Errorf("%.40q: %v, %v; want ErrBadRequest", tc.name, got, err)
		case tc.want != nil && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("%.40q: %v, %v; want %v", tc.name, got, err, tc.want)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("%.40q: a %d-byte error", tc.name, len(err.Error()))
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"ok":                          `"ok"`,
		"a\x00b":                      `"a\x00b"`,
		strings.Repeat("x", 64):       `"` + strings.Repeat("x", 64) + `"`,
		strings.Repeat("x", 65):       `"` + strings.Repeat("x", 64) + `"… (65 bytes)`,
		strings.Repeat("é", 40):       `"` + strings.Repeat("é", 32) + `"… (80 bytes)`,
		"x" + strings.Repeat("é", 40): `"x` + strings.Repeat("é", 31) + `"… (81 bytes)`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%.20q) = %s, want %s", in, got, want)
		}
	}
}
