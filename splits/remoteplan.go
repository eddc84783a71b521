package splits

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/token"
)

// Scan planning on the catalog's server. Where a REST catalog plans scans
// (the REST spec's planTableScan, as Iceberg Java's RESTTableScan asks for
// it), the scan step asks the server for the snapshot's files instead of
// reading the manifests; what follows (the order of the files, residuals,
// the path decision, packing, signing) is the same for both, so a plan
// planned remotely has the splits and tokens of one planned locally. A
// token names its catalog and table whichever planned it: the replica that
// serves it loads the table from the catalog for its FileIO, as for a
// local plan.

// RemotePlanner is a Catalog whose server can plan scans
// (catalog.Catalog).
type RemotePlanner interface {
	// ScanPlanning is where the catalog's scans are to be planned.
	ScanPlanning() token.ScanPlanning
	// PlansScans reports whether the catalog's server advertises scan
	// planning.
	PlansScans(ctx context.Context) (bool, error)
	// PlanScan plans req on the catalog's server; meter, when not nil,
	// is given the bytes of each answer as they arrive and then its
	// entries (files and plan-task handles) before they are decoded, and
	// ends the plan with its error.
	PlanScan(ctx context.Context, req table.ScanPlanningRequest, meter token.PlanMeter) ([]table.FileScanTask, error)
}

// planned counts a snapshot's files planned, by the sidecar (remote
// false) or by the catalog's server (remote true).
func (p *Planner) planned(remote bool) {
	planner := "local"
	if remote {
		planner = "remote"
	}
	p.scans.WithLabelValues(p.cat.Name(), planner).Inc()
}

// remoteScan says whether a scan of req is planned on the catalog's
// server: never for a catalog that cannot, or one configured to plan
// locally; for auto, when the server advertises planning and the scan asks
// nothing a server's plan cannot give; for remote, always, and a scan that
// asks what a server's plan cannot give is refused.
func (p *Planner) remoteScan(ctx context.Context, req Request) (RemotePlanner, error) {
	rp, ok := p.cat.(RemotePlanner)
	if !ok {
		return nil, nil
	}
	mode := rp.ScanPlanning()
	if mode == token.ScanPlanningLocal {
		return nil, nil
	}
	// What the REST plan request and its answer cannot carry (iceberg-go
	// v0.7.0's PlanTableScanRequest has no start or end snapshot; a REST
	// file scan task has no data sequence number).
	var cannot string
	switch {
	case req.FromSnapshot != nil:
		cannot = "the appends after a snapshot (fromSnapshot) are planned by the sidecar only: the plan request it sends has no start snapshot"
	case req.MetaColumns.Has(token.MetaLastUpdated):
		cannot = "the metadata column _last_updated_sequence_number needs each data file's sequence number, which a server's plan does not carry"
	}
	if mode == token.ScanPlanningRemote {
		if cannot != "" {
			return nil, fmt.Errorf("%w: catalog %q plans on its server only (scan planning remote), and %s",
				fault.ErrUnsupported, p.cat.Name(), cannot)
		}
		return rp, nil
	}
	if cannot != "" {
		return nil, nil
	}
	plans, err := rp.PlansScans(ctx)
	if err != nil || !plans {
		return nil, err
	}
	return rp, nil
}

// planRemote plans snap of tbl on the catalog's server, under filter (nil:
// every file), for the rows of schema's fields columns (nil: every
// column), admitted by the memory budget as a local plan is: the data and
// delete files its snapshot declares are reserved before the plan is asked
// for, and past them each answer's bytes as they arrive, before iceberg-go
// parses it (PlanAnswerBytesPerByte each), then its entries (its data
// files, the delete files it lists, its plan tasks) before they are
// decoded (remoteMeter).
func (p *Planner) planRemote(ctx context.Context, rp RemotePlanner, tbl *table.Table, name string, snap *table.Snapshot,
	schema *iceberg.Schema, filter iceberg.BooleanExpression, columns []int) ([]table.FileScanTask, error) {
	var meter token.PlanMeter
	if p.budget != nil && p.budget.Capacity() > 0 {
		// The server answers with the data files and, in each answer, the
		// delete files its data files need: the snapshot's data and delete
		// files are what it declares.
		files := min(summaryFiles(snap), maxEntries) + min(summaryCount(snap, "total-delete-files"), maxEntries)
		r, err := p.budget.Reserve(memory.Plan, entryBytes(files), p.budget.Capacity(), p.budget.Origin())
		if err != nil {
			return nil, p.refusal(name, snap, "data and delete files", files, err)
		}
		defer memory.Hold(ctx, r)
		meter = &remoteMeter{r: r, declared: files}
	}
	id := snap.SnapshotID
	caseSensitive := true
	// The snapshot's schema when the scan is of it (time travel), the
	// table's when of a branch: the request's use-snapshot-schema.
	snapshotSchema := schema.ID != tbl.Schema().ID
	var selected []string
	for _, c := range columns {
		if n, ok := schema.FindColumnName(c); ok {
			selected = append(selected, n)
		}
	}
	if filter == nil {
		filter = iceberg.AlwaysTrue{}
	}
	tasks, err := rp.PlanScan(ctx, table.ScanPlanningRequest{
		Identifier: tbl.Identifier(), Metadata: tbl.Metadata(), Schema: schema, MetadataLocation: tbl.MetadataLocation(),
		SnapshotID: &id, SelectedFields: selected, RowFilter: filter,
		CaseSensitive: &caseSensitive, UseSnapshotSchema: &snapshotSchema,
	}, meter)
	if err != nil {
		return nil, err
	}
	p.planned(true)
	return tasks, nil
}

// PlanAnswerBytesPerByte is the memory that parsing one of a catalog
// server's plan answers holds for each byte of it: iceberg-go reads an
// answer with a json.Decoder, whose buffer grows by doubling until it
// holds the whole answer (up to twice its bytes), and decodes it into its
// wire structs, which BenchmarkPlanAnswerDecode measures at 1.5 to 1.8
// times its bytes (bare and with column statistics; 6.2 to 6.5 allocated
// in all, most of it garbage before the end); the two together, rounded
// up:
//
//	go test -run '^$' -bench PlanAnswerDecode -benchtime 1x ./splits/
const PlanAnswerBytesPerByte = 4

// remoteMeter charges a plan on the catalog's server to its reservation
// (token.PlanMeter). The reservation holds the entries the snapshot
// declares from the start; past them it grows with the entries of the
// answers read (PlanBytesPerFile each) plus the bytes of the answer being
// read (PlanAnswerBytesPerByte each). An answer's bytes are charged only
// until its entries are: parsing it holds them, and once it is parsed its
// entries hold what it costs, so an answer is never counted twice.
type remoteMeter struct {
	r        *memory.Reservation
	declared int64 // entries reserved before the plan was asked for

	mu      sync.Mutex
	entries int64 // of the answers read
	answer  int64 // bytes of the answer being read
}

// maxAnswerBytes is the most answer bytes whose charge an int64 holds.
const maxAnswerBytes = math.MaxInt64 / PlanAnswerBytesPerByte

func (m *remoteMeter) Answer(read int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.answer = min(max(read, 0), maxAnswerBytes)
	if err := m.set(); err != nil {
		return fmt.Errorf("an answer of the server has passed %s, which need %s or more to parse (%d bytes a byte) beside "+
			"the %d data files, delete files and plan tasks of the answers before it (%s each): %w", memory.Bytes(m.answer),
			memory.Bytes(m.answer*PlanAnswerBytesPerByte), PlanAnswerBytesPerByte, m.entries, memory.Bytes(PlanBytesPerFile), err)
	}
	return nil
}

func (m *remoteMeter) Entries(n int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = min(m.entries+min(max(n, 0), maxEntries), maxEntries)
	m.answer = 0
	if err := m.set(); err != nil {
		return fmt.Errorf("the server's answers hold more than the snapshot declares (%d data files, delete files and "+
			"plan tasks so far, %d files declared), which need %s or more to plan (%s each): %w", m.entries, m.declared,
			memory.Bytes(entryBytes(m.entries)), memory.Bytes(PlanBytesPerFile), err)
	}
	return nil
}

// set makes the reservation hold what the plan holds now, and never less
// than what the snapshot declares.
func (m *remoteMeter) set() error {
	held := entryBytes(m.entries)
	if parse := m.answer * PlanAnswerBytesPerByte; parse > math.MaxInt64-held {
		held = math.MaxInt64
	} else {
		held += parse
	}
	return m.r.Set(max(held, entryBytes(m.declared)))
}
