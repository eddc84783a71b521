//go:build integration

package handlers_test

import (
	"testing"

	"github.com/druidiceberg/sidecar/internal/sidecartest"
)

// The integration tier's real servers are internal/sidecartest's
// (`go test -tags integration`; .ci/run runs it); the names below keep
// the package's tests as they were written.

// seaweed is a sidecartest.Seaweed.
type seaweed struct{ *sidecartest.Seaweed }

// startSeaweed is sidecartest.StartSeaweed.
func startSeaweed(t testing.TB, opts ...sidecartest.SeaweedOption) *seaweed {
	t.Helper()
	return &seaweed{sidecartest.StartSeaweed(t, opts...)}
}

// props is sidecartest.Seaweed.Props.
func (w *seaweed) props() map[string]string { return w.Props() }

// s3Props is sidecartest.Seaweed.S3Props.
func (w *seaweed) s3Props() map[string]string { return w.S3Props() }

// postgres is a sidecartest.Postgres.
type postgres struct{ *sidecartest.Postgres }

// startPostgres is sidecartest.StartPostgres.
func startPostgres(t testing.TB) *postgres {
	t.Helper()
	return &postgres{sidecartest.StartPostgres(t)}
}

// uri is sidecartest.Postgres.URI.
func (pg *postgres) uri(password string) string { return pg.URI(password) }
