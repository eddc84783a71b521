package handlers

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/splits/split"
)

// splitsResponse is the answer of GET /splits.
type splitsResponse struct {
	Table       string                `json:"table"`
	SnapshotID  *int64                `json:"snapshotId"`
	Mode        splits.Path           `json:"mode"`
	InputSource druid.HTTPInputSource `json:"inputSource"`
	InputFormat druid.InputFormat     `json:"inputFormat"`
	Columns     []planColumn          `json:"columns"`
	Splits      []splitResponse       `json:"splits"`
	// Warnings tell the client what it may not expect: ignored fields of a
	// Druid spec, residual filters under residualFilterMode=warn.
	Warnings []string `json:"warnings"`
}

type splitResponse struct {
	ID  string `json:"id"`
	URI string `json:"uri"`
	// DataFile is the split's first data file; DataFiles counts them (a
	// split of the row path packs small files, or the parts of a large
	// one, up to the target split size).
	DataFile              string `json:"dataFile"`
	DataFiles             int    `json:"dataFiles"`
	RecordCount           int64  `json:"recordCount"`
	PositionDeleteFiles   int    `json:"positionDeleteFiles"`
	EqualityDeleteFiles   int    `json:"equalityDeleteFiles"`
	DeletionVectorFiles   int    `json:"deletionVectorFiles"`
	DataFileSizeInBytes   int64  `json:"dataFileSizeInBytes"`
	DeleteFileSizeInBytes int64  `json:"deleteFileSizeInBytes"`

	// RecordCountEstimated says that RecordCount, the rows the split reads
	// before deletes (split.Split.RecordCount), is an estimate: the split
	// is a range of a file whose footer the planner did not read.
	RecordCountEstimated bool `json:"recordCountEstimated,omitempty"`
	// Range is the part of the data file a split of a large file reads;
	// absent when the split reads the whole file.
	Range *splitRange `json:"range,omitempty"`
}

// splitRange is the byte range of a data file whose row groups one split
// of it reads: those whose first page lies in [start, start+length). It is
// given for a split that reads one range of one file.
type splitRange struct {
	Start  int64 `json:"start"`
	Length int64 `json:"length"`
}

func (s *server) getSplits(w http.ResponseWriter, r *http.Request) error {
	p, err := planQuery(r.URL.Query(), nil)
	if err != nil {
		return err
	}
	req, err := p.request()
	if err != nil {
		return err
	}
	return s.planAndAnswer(w, r, req, nil)
}

// planAndAnswer plans req and writes the answer.
func (s *server) planAndAnswer(w http.ResponseWriter, r *http.Request, req splits.Request, warnings []string) error {
	_, resp, err := s.planResponse(r, req, warnings)
	if err != nil {
		return err
	}
	return writeSplits(w, resp)
}

// planResponse plans req and renders the answer of /splits, which the Druid
// spec generators build on.
func (s *server) planResponse(r *http.Request, req splits.Request, warnings []string) (splits.Plan, splitsResponse, error) {
	cat, err := s.catalogs.forRequest(r)
	if err != nil {
		return splits.Plan{}, splitsResponse{}, err
	}
	return s.answer(r, req, warnings, func() (splits.Plan, error) { return cat.Plans.Plan(r.Context(), req) })
}

// answer renders the answer of /splits for the plan that plan makes for
// req, and counts it in the metrics.
func (s *server) answer(r *http.Request, req splits.Request, warnings []string, plan func() (splits.Plan, error)) (splits.Plan, splitsResponse, error) {
	start := time.Now()
	base, err := s.baseURL(r)
	if err != nil {
		return splits.Plan{}, splitsResponse{}, err
	}
	p, err := plan()
	if err != nil {
		return p, splitsResponse{}, err
	}
	for _, ps := range p.Splits {
		// The server would refuse such a URI (400 malformed_token): a plan
		// never hands one out.
		if len(ps.Token) > split.MaxTokenLength {
			return p, splitsResponse{}, fmt.Errorf("%w: a split of %s needs a token of %d bytes, longer than the %d this "+
				"server accepts back; narrow icebergFilter, or plan without applyResidual", errBadRequest,
				ps.Parts[0].Data.Path, len(ps.Token), split.MaxTokenLength)
		}
	}
	return p, s.render(r, req, p, start, base, warnings), nil
}

// render is the answer of /splits for plan, planned since start, its URIs
// under base.
func (s *server) render(r *http.Request, req splits.Request, plan splits.Plan, start time.Time, base string, warnings []string) splitsResponse {
	if s.Metrics != nil {
		s.Metrics.PlanDuration.Observe(time.Since(start).Seconds())
		s.Metrics.SplitsPlanned.WithLabelValues(string(plan.Path)).Add(float64(len(plan.Splits)))
	}
	resp := splitsResponse{
		Table:       plan.Table,
		Mode:        plan.Path,
		InputSource: druid.HTTPInputSource{Type: "http", URIs: []string{}},
		Splits:      []splitResponse{},
		Warnings:    append(append([]string{}, warnings...), plan.Warnings...),
	}
	if req.Filter != nil {
		resp.Warnings = append(resp.Warnings, req.Filter.Ignored("icebergFilter")...)
	}
	if len(s.BasicAuth) > 0 {
		resp.InputSource.Username = s.BasicAuth[0].Username
		resp.InputSource.Password = &druid.PasswordProvider{Type: "environment", Variable: s.DruidPasswordEnv}
	}
	if plan.SnapshotID != 0 {
		id := plan.SnapshotID
		resp.SnapshotID = &id
	}
	resp.InputFormat = druid.InputFormat{Type: "parquet", BinaryAsString: req.Encoding.BinaryAsString}
	resp.Columns = planColumns(plan.Fields, req.Encoding)
	if plan.Path == splits.PathRows {
		resp.InputFormat = druid.InputFormat{Type: "json"}
	}
	// The URIs are cut from one string: a wide plan has thousands, each
	// mostly its token.
	routes := func(k split.TokenKind) (route, suffix string) {
		if k == split.KindRows {
			return "/splits/", rowSuffixes[cmp.Or(req.Compression, splits.DefaultCompression)]
		}
		return "/files/", ""
	}
	size := 0
	for _, ps := range plan.Splits {
		route, suffix := routes(ps.Kind)
		size += len(base) + len(route) + len(ps.Token) + len(suffix)
	}
	var uris strings.Builder
	uris.Grow(size)
	ends := make([]int, len(plan.Splits))
	for i, ps := range plan.Splits {
		route, suffix := routes(ps.Kind)
		uris.WriteString(base)
		uris.WriteString(route)
		uris.WriteString(ps.Token)
		uris.WriteString(suffix)
		ends[i] = uris.Len()
	}
	all := uris.String()
	resp.InputSource.URIs = make([]string, 0, len(plan.Splits))
	resp.Splits = make([]splitResponse, 0, len(plan.Splits))
	from := 0
	for i, ps := range plan.Splits {
		uri := all[from:ends[i]]
		from = ends[i]
		resp.InputSource.URIs = append(resp.InputSource.URIs, uri)
		resp.Splits = append(resp.Splits, describeSplit(ps, uri))
	}
	return resp
}

// describeSplit is the answer's entry for one planned split: its files and
// delete files counted once each (a delete file often applies to every
// file of a packed split).
func describeSplit(ps splits.PlannedSplit, uri string) splitResponse {
	first := ps.Parts[0]
	out := splitResponse{ID: ps.ID, URI: uri, DataFile: first.Data.Path, DataFiles: len(ps.Parts)}
	var exact bool
	out.RecordCount, exact = ps.RecordCount()
	out.RecordCountEstimated = !exact
	if r := first.Data.Range; r != nil && len(ps.Parts) == 1 {
		out.Range = &splitRange{Start: r.Start, Length: r.Length}
	}
	seen := map[string]bool{}
	for _, p := range ps.Parts {
		out.DataFileSizeInBytes += p.Data.Size
		for _, d := range p.Deletes {
			key := d.Path
			if d.ContentOffset != nil {
				key += "#" + strconv.FormatInt(*d.ContentOffset, 10)
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			out.DeleteFileSizeInBytes += d.Size
			switch d.Kind {
			case split.DeletePosition:
				out.PositionDeleteFiles++
			case split.DeleteEquality:
				out.EqualityDeleteFiles++
			case split.DeleteDeletionVector:
				out.DeletionVectorFiles++
			}
		}
	}
	return out
}

// writeJSON writes v as indented JSON, without HTML escaping (URIs and SQL
// are pasted as they are).
func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// baseURL is the configured public URL, or the scheme and host the request
// came in on. With Basic auth it is the configured one only: Druid sends
// the credentials to the URIs' host, and a request names any host it likes.
func (s *server) baseURL(r *http.Request) (string, error) {
	if s.PublicURL != "" {
		return strings.TrimRight(s.PublicURL, "/"), nil
	}
	if len(s.BasicAuth) > 0 {
		return "", errorf(http.StatusInternalServerError, "internal",
			"this sidecar has Basic auth on and no public URL: it builds no URI from a request's Host (set --public-url)")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	}
	return scheme + "://" + r.Host, nil
}
