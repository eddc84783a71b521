package splits_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/changes"
	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// lieAboutFiles rewrites tbl's current metadata file in place so that
// every snapshot summary says total-data-files is 1.
func lieAboutFiles(t *testing.T, tbl *table.Table) {
	t.Helper()
	loc := strings.TrimPrefix(tbl.MetadataLocation(), "file://")
	orig, err := os.ReadFile(loc)
	if err != nil {
		t.Fatal(err)
	}
	lied := regexp.MustCompile(`"total-data-files":\s*"\d+"`).ReplaceAll(orig, []byte(`"total-data-files":"1"`))
	if bytes.Equal(lied, orig) {
		t.Fatal("the metadata file has no total-data-files to rewrite")
	}
	if err := os.WriteFile(loc, lied, 0o644); err != nil {
		t.Fatal(err)
	}
}

// lieInManifestList rewrites the current snapshot's manifest list in place
// so that each manifest declares one added file and no other.
func lieInManifestList(t *testing.T, tbl *table.Table) {
	t.Helper()
	ctx := context.Background()
	snap := tbl.CurrentSnapshot()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	lied := make([]iceberg.ManifestFile, len(manifests))
	for i, m := range manifests {
		lied[i] = iceberg.NewManifestFile(2, m.FilePath(), m.Length(), m.PartitionSpecID(), m.SnapshotID()).
			SequenceNum(m.SequenceNum(), m.MinSequenceNum()).Content(m.ManifestContent()).
			AddedFiles(1).ExistingFiles(0).DeletedFiles(0).AddedRows(1).Partitions(m.Partitions()).Build()
	}
	var buf bytes.Buffer
	seq := snap.SequenceNumber
	if err := iceberg.WriteManifestList(2, &buf, snap.SnapshotID, snap.ParentSnapshotID, &seq, 0, lied); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(strings.TrimPrefix(snap.ManifestList, "file://"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHostileLyingSummary: plans were admitted by the snapshot summary's
// total-data-files, which whoever writes the table controls: with it
// rewritten to 1, a plan of 2,000 data files reserved 4 KiB of a 1 MiB
// budget and was served (on a 40,000-file table, 12 such plans at once
// under GOMEMLIMIT=256MiB peaked at 1.8 GB of RSS), where the honest
// summary was refused. A plan reserves what the manifest list declares
// when it is more, and counts the entries of the manifests as they are
// read, reserving what passes the declared before it is decoded: a lying
// summary is memory.ErrTooLarge (a 422 memory_exceeded) at admission, a
// lying summary and manifest list once the entries read pass the budget,
// for a plan (GET /splits) and a diff (GET /changes) alike, and the budget
// is given back when the request's memory scope ends.
func TestHostileLyingSummary(t *testing.T) {
	t.Parallel()
	const files = 2000
	for _, tc := range []struct {
		name string
		lie  func(*testing.T, *table.Table)
		says string
	}{
		{"honest", func(*testing.T, *table.Table) {}, "its 2000 data files need 7.8 MiB"},
		{"the summary lies", lieAboutFiles, "manifest entries need"},
		{"the summary and the manifest list lie", func(t *testing.T, tbl *table.Table) {
			lieAboutFiles(t, tbl)
			lieInManifestList(t, tbl)
		}, "more entries than its snapshot declares"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cat, dir := localWarehouse(t)
			tbl, err := tablegen.Wide(context.Background(), cat, table.Identifier{"wide", "t"}, files, 0)
			if err != nil {
				t.Fatal(err)
			}
			tc.lie(t, tbl)
			budget := memory.NewBudget(1<<20, "the memory budget (the test's)", nil)
			r := localReplica(t, dir, splits.WithMemoryBudget(budget))
			differ := changes.New(r.Planner)
			for _, ask := range []struct {
				what string
				do   func(context.Context) error
			}{
				{"a plan", func(ctx context.Context) error {
					_, err := r.Planner.Plan(ctx, splits.Request{Table: "wide.t"})
					return err
				}},
				{"a diff", func(ctx context.Context) error {
					_, err := differ.Changes(ctx, changes.Request{Table: "wide.t", TimeColumn: "event_date", Granularity: druid.GranularityDay,
						Rows: splits.Request{Table: "wide.t", TimeColumn: "event_date"}})
					return err
				}},
			} {
				// The memory scope a planning request holds (handlers'
				// memoryScope).
				ctx, end := memory.WithScope(context.Background())
				err := ask.do(ctx)
				end()
				if !errors.Is(err, memory.ErrTooLarge) || !strings.Contains(err.Error(), tc.says) ||
					!strings.Contains(err.Error(), "the memory budget (the test's)") {
					t.Errorf("%s of %d data files under a 1 MiB budget: %.400v, want memory.ErrTooLarge saying %q", ask.what, files, err, tc.says)
				}
				if s := budget.Stats(); s.Used != 0 {
					t.Errorf("%s: the budget holds %d bytes after the refusal, want 0", ask.what, s.Used)
				}
			}
			t.Logf("peak reserved %d bytes", budget.Stats().Peak)
		})
	}
}

// pausingCatalog is a catalog whose tables, once armed, pause the first
// manifest read (after the plan was admitted): entered is closed when
// it is reached, and the read goes on once release is closed.
type pausingCatalog struct {
	*catalog.Catalog
	armed            atomic.Bool
	entered, release chan struct{}
}

func (c *pausingCatalog) TableAt(ctx context.Context, ident []string, location string) (*table.Table, error) {
	tbl, err := c.Catalog.TableAt(ctx, ident, location)
	if err != nil {
		return nil, err
	}
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), func(ctx context.Context) (icebergio.IO, error) {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		return pausingIO{IO: fsys, c: c}, nil
	}, nil), nil
}

type pausingIO struct {
	icebergio.IO
	c *pausingCatalog
}

func (p pausingIO) Open(name string) (icebergio.File, error) {
	base := path.Base(name)
	if strings.HasSuffix(base, ".avro") && !strings.HasPrefix(base, "snap-") && p.c.armed.CompareAndSwap(true, false) {
		close(p.c.entered)
		<-p.c.release
	}
	return p.IO.Open(name)
}

// replanReplica is a replica of the warehouse dir that has planned nothing
// yet (a restart), its plans drawing on a budget of capacity whose metrics
// go on reg.
func replanReplica(t *testing.T, dir string, capacity int64, reg prometheus.Registerer) (*servetest.Replica, *pausingCatalog, *memory.Budget) {
	t.Helper()
	cat := &pausingCatalog{Catalog: catalogtest.Open(t, catalog.Config{Type: "local", Warehouse: dir}),
		entered: make(chan struct{}), release: make(chan struct{})}
	budget := memory.NewBudget(capacity, "the test's budget", reg)
	return servetest.New(t, cat, nil, splits.WithMemoryBudget(budget), splits.WithTargetSplitSize(80_000)), cat, budget
}

// TestHostileReplanMemory: a plan-reference token's stream plans its
// snapshot again on a replica that has not cached the plan (after a
// restart), and the stream routes hold no memory scope, so the replan's
// reservation was given back the moment it was made: 12 concurrent
// streams planned a 40,000-file table 12 times at once with
// sidecar_memory_reserved_bytes{kind="plan"} at 0, where 12 GET /splits
// got 11 503 memory_busy. A replan holds its reservation until it is
// done, so a second replan that does not fit beside it is memory.ErrBusy
// (a 503 memory_busy), as a second plan is.
func TestHostileReplanMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const files = 80 // the table the internal tests of references plan
	_, dir := splits.BenchTable(t, files)
	planner := localReplica(t, dir, splits.WithTargetSplitSize(80_000))
	// Two plans of the one snapshot, each with a reference token.
	var toks []string
	for _, minSplits := range []int{2, 3} {
		p := planner.Plan(t, splits.Request{Table: "ns.t", MinSplits: minSplits})
		tok, err := planner.Signer.Decode(token.KindRows, p.Splits[0].Token)
		if err != nil || tok.Ref == nil {
			t.Fatalf("the first split of minSplits=%d is not a plan reference: %v", minSplits, err)
		}
		toks = append(toks, p.Splits[0].Token)
	}

	// What one replan reserves, on a replica with room for any.
	probe, _, probeBudget := replanReplica(t, dir, 1<<30, nil)
	if _, err := probe.ReadToken(ctx, toks[0]); err != nil {
		t.Fatalf("a replan with room: %v", err)
	}
	need := probeBudget.Stats().Peak
	if need < files*splits.PlanBytesPerFile {
		t.Fatalf("a replan of %d data files reserved %d bytes, want at least %d", files, need, files*splits.PlanBytesPerFile)
	}

	// A replica with room for one replan: the first pauses while it
	// plans, and holds its reservation meanwhile.
	reg := prometheus.NewRegistry()
	r, pc, budget := replanReplica(t, dir, need*3/2, reg)
	pc.armed.Store(true)
	var wg sync.WaitGroup
	var first error
	wg.Go(func() {
		_, first = r.ReadToken(ctx, toks[0])
	})
	select {
	case <-pc.entered:
	case <-time.After(time.Minute):
		t.Fatal("the first replan never read a manifest")
	}
	reserved := servetest.Metrics(t, reg)[`sidecar_memory_reserved_bytes{kind="plan"}`]
	_, err := r.ReadToken(ctx, toks[1])
	close(pc.release)
	wg.Wait()
	if reserved != float64(need) {
		t.Errorf("sidecar_memory_reserved_bytes{kind=\"plan\"} while a replan plans: %v, want its %d bytes", reserved, need)
	}
	if !errors.Is(err, memory.ErrBusy) {
		t.Errorf("a second replan beside one that holds the budget: %.300v, want memory.ErrBusy", err)
	}
	if first != nil {
		t.Errorf("the first replan: %v", first)
	}
	if s := budget.Stats(); s.Used != 0 {
		t.Errorf("the budget holds %d bytes once the streams are done, want 0", s.Used)
	}
	if _, err := r.ReadToken(ctx, toks[1]); err != nil {
		t.Errorf("the second token once the first replan is done: %v", err)
	}
}
