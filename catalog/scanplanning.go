package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/token"
)

// Server-side scan planning: the REST spec's planTableScan,
// fetchPlanningResult and fetchScanTasks endpoints, as Iceberg Java's
// RESTCatalog drives them (org.apache.iceberg.rest.RESTTableScan) and
// iceberg-go v0.7.0 implements them (catalog/rest scan_planning.go). The
// sidecar drives them itself with iceberg-go's endpoint methods rather than
// through rest.Catalog.PlanFiles, so that every answer of the server is
// counted against the plan's memory as its bytes arrive (answers.go) and
// again, by its entries, before it is decoded into tasks, and a server that
// answers with more than the plan may hold ends the plan at the bound
// instead of filling the process.

// ScanPlanning is where the catalog's scans are planned, as configured.
func (c *Catalog) ScanPlanning() token.ScanPlanning {
	mode, err := token.ParseScanPlanning(c.cfg.ScanPlanning)
	if err != nil {
		// Validate refused it before New returned.
		return token.ScanPlanningLocal
	}
	return mode
}

// planningEndpoints are the endpoints a server must advertise (in its
// /v1/config answer's endpoints) for the sidecar to plan on it.
const planningEndpoints = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan, " +
	"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id} and " +
	"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks"

// PlansScans reports whether the catalog's server plans scans: it is a REST
// catalog that advertises the planning endpoints, submission, polling and
// tasks alike (rest.Catalog.SupportsFullRemoteScanPlanning: a server that
// advertises only submission may answer with handles the sidecar cannot
// follow). It connects to the catalog if it is not connected yet, and
// fails as a table load does when the catalog does not answer.
func (c *Catalog) PlansScans(ctx context.Context) (bool, error) {
	rc, err := c.restCatalog(ctx)
	if err != nil || rc == nil {
		return false, err
	}
	return rc.SupportsFullRemoteScanPlanning(), nil
}

// CheckScanPlanning refuses a catalog configured to plan remotely whose
// server does not advertise the planning endpoints; it answers nil for
// every other catalog, and the error of connecting to the catalog when it
// does not answer.
func (c *Catalog) CheckScanPlanning(ctx context.Context) error {
	if c.ScanPlanning() != token.ScanPlanningRemote {
		return nil
	}
	ok, err := c.PlansScans(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return c.noPlanning()
	}
	return nil
}

// noPlanning is the error of a catalog configured to plan remotely whose
// server does not plan scans.
func (c *Catalog) noPlanning() error {
	return fmt.Errorf("%w: catalog %q is configured with scan planning remote, but its server does not advertise "+
		"the scan-planning endpoints (%s) in its /v1/config answer: plan locally (scan planning local or auto), "+
		"or use a catalog server that plans scans", fault.ErrUnsupported, c.cfg.Name, planningEndpoints)
}

// restCatalog is the catalog's iceberg-go REST catalog, connected; nil for
// a catalog of another type.
func (c *Catalog) restCatalog(ctx context.Context) (*rest.Catalog, error) {
	if c.cfg.Type != "rest" {
		return nil, nil
	}
	l, err := c.conn.get(ctx)
	if err != nil {
		return nil, err
	}
	rc, _ := l.(*rest.Catalog)
	return rc, nil
}

// PlanScan plans req on the catalog's server: it submits the plan, waits
// for a submitted one to complete, and follows the plan-task handles of
// every answer, one at a time, to their tasks. meter, when not nil, is
// given the bytes of every answer as they arrive, before iceberg-go parses
// it, and then the files (data and delete files) and handles of the answer
// before they are decoded: an error of it ends the plan, which is
// cancelled on the server. Without a meter the answers are bounded as
// every other answer of the catalog is (maxAnswerBytes).
// The tasks come back decoded by iceberg-go (rest.DecodeScanTasks: each
// answer's delete files matched to its data files, residuals bound to
// req.Schema, a task without one given req.RowFilter), in the server's
// order.
func (c *Catalog) PlanScan(ctx context.Context, req table.ScanPlanningRequest, meter token.PlanMeter) (_ []table.FileScanTask, err error) {
	ident := req.Identifier
	name := strings.Join(ident, ".")
	if err := c.check(ident); err != nil {
		return nil, err
	}
	doing := "plan " + name + " on the catalog's server"
	rc, err := c.restCatalog(ctx)
	if err != nil {
		return nil, err
	}
	if rc == nil || !rc.SupportsFullRemoteScanPlanning() {
		return nil, c.noPlanning()
	}
	wire := rest.PlanTableScanRequest{SnapshotID: req.SnapshotID, Select: req.SelectedFields,
		CaseSensitive: req.CaseSensitive, UseSnapshotSchema: req.UseSnapshotSchema}
	if req.RowFilter != nil && !req.RowFilter.Equals(iceberg.AlwaysTrue{}) {
		bound, err := iceberg.BindExpr(req.Schema, req.RowFilter, true)
		if err != nil {
			return nil, fmt.Errorf("%w: icebergFilter: %w", fault.ErrBadRequest, err)
		}
		if wire.Filter, err = json.Marshal(bound); err != nil {
			return nil, fmt.Errorf("%w: icebergFilter has no JSON form to send to the catalog's server: %w", fault.ErrUnsupported, err)
		}
	}
	var answers *planAnswers
	if meter != nil {
		answers = &planAnswers{meter: meter}
		ctx = withPlanAnswers(ctx, answers)
	}
	fail := func(err error) error {
		if answers != nil {
			if refusal := answers.refused(); refusal != nil {
				return fmt.Errorf("plan %s on the server of catalog %q: %w", name, c.cfg.Name, refusal)
			}
		}
		if errors.Is(err, catalog.ErrNoSuchTable) || errors.Is(err, catalog.ErrNoSuchNamespace) {
			return redact(classifyLoadError(c.cfg.Name, ident, err), c.secrets)
		}
		return redact(classify(c.cfg.Name, doing, err), c.secrets)
	}
	resp, err := rc.PlanTableScan(ctx, ident, wire)
	if err != nil {
		return nil, fail(err)
	}
	first := resp.ScanTasks
	if resp.PlanID != nil {
		// The server keeps a plan's state until it is cancelled or
		// expires: released once its tasks are read, or the plan failed.
		// With no deadline of the request's left, a short one of its own.
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelGrace)
			defer cancel()
			_ = rc.CancelPlanning(cctx, ident, *resp.PlanID)
		}()
		if resp.Status == rest.PlanStatusSubmitted {
			done, err := rc.WaitForPlan(ctx, ident, *resp.PlanID, rest.WaitForPlanOptions{})
			if err != nil {
				return nil, fail(err)
			}
			first = done.ScanTasks
		}
	}
	var tasks []table.FileScanTask
	// take charges one answer, decodes its tasks and gives its handles.
	take := func(env rest.ScanTasks) ([]string, error) {
		if meter != nil {
			if err := meter.Entries(int64(len(env.FileScanTasks)) + int64(len(env.DeleteFiles)) + int64(len(env.PlanTasks))); err != nil {
				return nil, fmt.Errorf("plan %s on the server of catalog %q: %w", name, c.cfg.Name, err)
			}
		}
		if len(env.FileScanTasks) > 0 {
			got, err := rest.DecodeScanTasks(env, req.Metadata, req.Schema, req.RowFilter)
			if err != nil {
				return nil, fmt.Errorf("%w: %s in catalog %q: its answer does not decode: %w", fault.ErrUpstream, doing, c.cfg.Name, err)
			}
			tasks = append(tasks, got...)
		}
		return env.PlanTasks, nil
	}
	handles, err := take(first)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for len(handles) > 0 {
		h := handles[0]
		handles = handles[1:]
		// A handle is fetched once: a server that hands one out again
		// would otherwise be followed for ever.
		if seen[h] {
			continue
		}
		seen[h] = true
		more, err := rc.FetchScanTasks(ctx, ident, rest.FetchScanTasksRequest{PlanTask: h})
		if err != nil {
			return nil, fail(err)
		}
		next, err := take(more.ScanTasks)
		if err != nil {
			return nil, err
		}
		handles = append(handles, next...)
	}
	return tasks, nil
}

// cancelGrace bounds the cancellation of a plan on the server once its
// tasks are read.
const cancelGrace = 5 * time.Second
