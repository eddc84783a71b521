package catalog_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testnet"
	"github.com/druidiceberg/sidecar/splits"
)

// TestReadyzFollowsTheCatalog: once connected, Ping (what /readyz
// reports) says whether the catalog's storage answered the last table
// load: a plan with the store gone is ErrUnavailable (503 with
// Retry-After), Ping then fails, and a load that gets an answer, even "no
// such table", makes it succeed again.
func TestReadyzFollowsTheCatalog(t *testing.T) {
	// The in-process S3 is reached with explicit keys and region; the AWS
	// SDK must not probe the instance metadata address.
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ctx := context.Background()
	lake := catalogtest.NewS3Lake(t, "s3://lake/warehouse")
	tbl, err := tablegen.ScenarioNamed(t, "no_deletes").Build(ctx, lake.Cat, table.Identifier{"lake", "t"})
	if err != nil {
		t.Fatal(err)
	}
	s := newServed(t, lake.Config(tbl))
	s.Plan(t, splits.Request{Table: "lake.t"})
	if err := s.Cat.Ping(ctx); err != nil {
		t.Fatalf("Ping with the catalog up: %v", err)
	}
	lake.S3.CloseClientConnections()
	lake.S3.Close()
	if _, err := s.Planner.Plan(ctx, splits.Request{Table: "lake.t"}); !errors.Is(err, fault.ErrUnavailable) || errors.Is(err, fault.ErrTableNotFound) {
		t.Fatalf("plan with the store down: %v, want ErrUnavailable", err)
	}
	if err := s.Cat.Ping(ctx); err == nil {
		t.Fatal("Ping after a failed load: nil, want an error")
	}
	// A load that gets an answer, even "no such table", makes it ready.
	if _, err := s.Planner.Plan(ctx, splits.Request{Table: "lake.absent"}); !errors.Is(err, fault.ErrTableNotFound) {
		t.Fatalf("an absent table: %v, want ErrTableNotFound", err)
	}
	if err := s.Cat.Ping(ctx); err != nil {
		t.Fatalf("Ping after the catalog answered: %v", err)
	}
}

// TestCatalogDown: a catalog that does not answer is not fatal. Planning
// and Ping (what /readyz reports) fail with fault.ErrUnavailable (503 with
// Retry-After, which Druid retries) naming the catalog. handlers'
// TestCatalogDown holds the routes' answers, and the integration tier's
// TestRealCatalogDownAndBack the recovery without a restart.
func TestCatalogDown(t *testing.T) {
	ctx := context.Background()
	addr := testnet.FreeAddr(t) // nothing listens there
	s := newServed(t, catalog.Config{Type: "rest", Name: "lake", URI: "http://" + addr})
	_, planErr := s.Planner.Plan(ctx, splits.Request{Table: "db.t"})
	for what, err := range map[string]error{"plan": planErr, "Ping": s.Cat.Ping(ctx)} {
		if !errors.Is(err, fault.ErrUnavailable) || errors.Is(err, fault.ErrTableNotFound) || !strings.Contains(err.Error(), `rest catalog "lake"`) {
			t.Errorf("%s with the catalog down: %v, want ErrUnavailable naming the catalog", what, err)
		}
	}
}
