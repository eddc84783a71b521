package splits

import "testing"

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
		driver, dialect, err := sqlDriver(tc.uri, tc.props)
		if err != nil || driver != tc.driver || dialect != tc.dialect {
			t.Errorf("%s: %s/%s, %v; want %s/%s", tc.uri, driver, dialect, err, tc.driver, tc.dialect)
		}
	}
	if _, _, err := sqlDriver("mysql://x", nil); err == nil {
		t.Error("an unknown database must ask for sql.driver and sql.dialect")
	}
	if err := (CatalogConfig{Type: "sql"}).Validate(); err == nil {
		t.Error("catalog sql without a URI must be refused")
	}
}
