package handlers

import (
	"context"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"path"
	"time"

	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// maxQuotedName bounds the table name the page repeats.
const maxQuotedName = 256

// statusTables bounds how many tables the status page loads to show their
// current snapshot; the rest are listed by name.
const statusTables = 50

// statusPage is what the status page shows.
type statusPage struct {
	// Catalogs are every catalog served; the page shows one of them.
	Catalogs                 []string
	CatalogType, CatalogName string
	Tables                   []statusTable
	Truncated                bool
	ListError                string

	Table  string
	Plan   *statusPlan
	Counts bool
	Error  string
}

type statusTable struct {
	Name     string
	Snapshot string
}

type statusPlan struct {
	SnapshotID int64
	Path       string
	Warnings   []string
	Files      []statusFile
}

type statusFile struct {
	Name    string
	Path    string
	Records int64
	Deletes []token.DeleteFile
	// Deleted are the exact deleted rows by kind, read when counts=1.
	Deleted map[token.DeleteKind]int64
	Live    int64

	// Range says which part of a large file the split reads; empty for a
	// whole file. Records are then the range's rows before deletes, an
	// estimate when Estimated.
	Range     string
	Estimated bool
}

var statusTemplate = template.Must(template.New("status").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Iceberg sidecar for Druid</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:1.5em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}.v1{color:#0a6}.v2{color:#c60}.err{color:#b00}code{font-size:12px}
</style></head><body>
<h1>Iceberg input-source sidecar for Druid</h1>
<p>Catalog <b>{{.CatalogName}}</b> ({{.CatalogType}}).{{if gt (len .Catalogs) 1}} Catalogs:
{{range .Catalogs}} <a href="?catalog={{.}}">{{.}}</a>{{end}}{{end}}</p>
{{if .ListError}}<p class="err">Cannot list tables: {{.ListError}}</p>{{end}}
<table><tr><th>table</th><th>current snapshot</th></tr>
{{range .Tables}}<tr><td><a href="?catalog={{$.CatalogName}}&amp;table={{.Name}}">{{.Name}}</a></td><td>{{.Snapshot}}</td></tr>
{{end}}</table>
{{if .Truncated}}<p>More tables than shown.</p>{{end}}
{{if .Table}}<h2>{{.Table}}</h2>
{{if .Error}}<p class="err">{{.Error}}</p>{{end}}
{{with .Plan}}<p>Snapshot {{.SnapshotID}}: <b class="{{.Path}}">{{.Path}}</b>
{{if eq .Path "v2"}}(delete files apply: rows are served delete-applied){{else}}(no delete file applies: raw Parquet files){{end}}</p>
{{range .Warnings}}<p class="err">{{.}}</p>{{end}}
<table><tr><th>data file</th><th>rows</th><th>delete files</th>{{if $.Counts}}<th>deleted rows</th><th>live rows</th>{{end}}</tr>
{{range .Files}}<tr><td title="{{.Path}}"><code>{{.Name}}</code>{{with .Range}}<br>{{.}}{{end}}</td><td>{{if .Estimated}}≈{{end}}{{.Records}}</td>
<td>{{range .Deletes}}{{.Kind}} <code>{{.Path}}</code> ({{.Records}} records)<br>{{else}}none{{end}}</td>
{{if $.Counts}}<td>{{range $k, $v := .Deleted}}{{if $v}}{{$k}}: {{$v}}<br>{{end}}{{end}}</td><td>{{.Live}}</td>{{end}}</tr>
{{end}}</table>
{{if not $.Counts}}<p><a href="?catalog={{$.CatalogName}}&amp;table={{$.Table}}&amp;counts=1">Count the deleted rows of each file</a> (reads every file).</p>{{end}}
{{end}}{{end}}
</body></html>
`))

// getStatus renders the status page: the catalog's tables with their current
// snapshot and, for ?table=, its plan: which files, which delete files, and
// (with counts=1) how many rows each delete removes.
func (s *server) getStatus(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	cat, err := s.catalogs.forRequest(r)
	if err != nil {
		return err
	}
	table := r.URL.Query().Get("table")
	// The page names the table it was asked for, shortened like an error.
	page := statusPage{Table: clip(table, maxQuotedName), Counts: r.URL.Query().Get("counts") == "1", Catalogs: s.catalogs.names}
	page.CatalogType, page.CatalogName = cat.Type, cat.Name
	names, truncated, err := cat.Tables.Tables(ctx)
	if err != nil {
		page.ListError = err.Error()
	}
	page.Truncated = truncated || len(names) > statusTables
	for i, n := range names {
		st := statusTable{Name: n, Snapshot: "…"}
		if i < statusTables {
			st.Snapshot = currentSnapshot(ctx, cat.Tables, n)
		}
		page.Tables = append(page.Tables, st)
	}
	if table != "" {
		if page.Plan, err = statusPlanOf(ctx, cat, table, page.Counts); err != nil {
			page.Error = toAPIError(err).Message
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	return statusTemplate.Execute(w, page)
}

// currentSnapshot reads a table's metadata only: planning every listed
// table would read all their manifests.
func currentSnapshot(ctx context.Context, p Tables, name string) string {
	ident, err := token.ParseIdentifier(name)
	if err != nil {
		return "error: " + toAPIError(err).Message
	}
	tbl, err := p.LoadTable(ctx, ident)
	if err != nil {
		return "error: " + toAPIError(err).Message
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return "none (empty)"
	}
	return fmt.Sprintf("%d (%s)", snap.SnapshotID, time.UnixMilli(snap.TimestampMs).UTC().Format(time.RFC3339))
}

// statusPlanOf plans a table and, when counts is set, reads every split to
// count the rows its delete files remove.
func statusPlanOf(ctx context.Context, cat Catalog, name string, counts bool) (*statusPlan, error) {
	p, err := cat.Plans.Plan(ctx, splits.Request{Table: name, Mode: splits.ModeAuto})
	if err != nil {
		return nil, err
	}
	out := &statusPlan{SnapshotID: p.SnapshotID, Path: string(p.Path), Warnings: p.Warnings}
	for _, ps := range p.Splits {
		for _, part := range ps.Parts {
			f, err := statusFileOf(ctx, cat, part, counts)
			if err != nil {
				return nil, err
			}
			out.Files = append(out.Files, f)
		}
	}
	return out, nil
}

// statusFileOf describes one file of a plan and, when counts is set, reads
// it to count the rows its delete files remove.
func statusFileOf(ctx context.Context, cat Catalog, sp token.Split, counts bool) (statusFile, error) {
	f := statusFile{Name: path.Base(sp.Data.Path), Path: sp.Data.Path, Deletes: sp.Deletes}
	var exact bool
	f.Records, exact = sp.RecordCount()
	f.Estimated = !exact
	if r := sp.Data.Range; r != nil {
		f.Range = fmt.Sprintf("row groups in bytes %d–%d", r.Start, r.Start+r.Length)
	}
	if !counts {
		return f, nil
	}
	src, err := cat.Splits.Source(ctx, sp)
	if err != nil {
		return f, err
	}
	st, err := cat.Rows.Open(ctx, src.FS, sp, src.Schema)
	if err != nil {
		return f, err
	}
	err = st.Run(ctx, io.Discard, nil)
	stats := st.Stats()
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return f, fmt.Errorf("count the rows of %s: %w", sp.Data.Path, err)
	}
	f.Deleted, f.Live = stats.RowsDeleted, stats.RowsEmitted
	return f, nil
}
