package catalog

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/druidiceberg/sidecar/internal/fault"
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
	if err := (Config{Type: "sql"}).Validate(); err == nil {
		t.Error("catalog sql without a URI must be refused")
	}
}

// TestRedact: a catalog error never carries a secret of the configuration,
// whether a secret-looking property, the URI's password or a value read from
// the environment or a file; and the cause stays matchable.
func TestRedact(t *testing.T) {
	cfg := Config{
		Type: "rest", Name: "lake", URI: "https://sidecar:uri-pass%2Fword@catalog:8181",
		Props: map[string]string{
			"credential":           "client-id:client-secret-9",
			"s3.secret-access-key": "s3-secret-9",
			"s3.region":            "eu-west-1",
		},
		Secrets: []string{"env-secret-9"},
	}
	cause := fmt.Errorf("%w: 401 for client-id:client-secret-9 with key s3-secret-9, uri-pass/word, uri-pass%%2Fword, env-secret-9 in eu-west-1",
		fault.ErrUnavailable)
	err := redact(cause, cfg.secrets())
	for _, secret := range []string{"client-secret-9", "s3-secret-9", "uri-pass", "env-secret-9"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%q survives redaction: %s", secret, err)
		}
	}
	if !strings.Contains(err.Error(), "eu-west-1") {
		t.Errorf("a value that is no secret was redacted: %s", err)
	}
	if !errors.Is(err, fault.ErrUnavailable) {
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
