package handlers

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// Planning is one step and answering another: plan (or, for /changes, a
// change's plan checked by planned) makes a planned, and the answers are
// rendered from it by pure functions: answer for /splits, source for the
// Druid spec generators.

// planned is a plan with what its answers are rendered from besides: the
// request it answers and where its URIs point.
type planned struct {
	splits.Plan
	req  splits.Request
	base uriBase
}

// uriBase is where the URIs of an answer point, and the http inputSource
// that Druid reads them with, its URIs aside.
type uriBase struct {
	url    string
	source druid.HTTPInputSource
}

// noFilesWarning explains an empty plan (splits.Plan.Empty).
const noFilesWarning = "no data file to read (empty table, nothing appended after fromSnapshot, or the filter pruned every file): " +
	"Druid's http inputSource needs at least one URI, so there is nothing to ingest"

// plan plans req in the catalog the request names.
func (s *server) plan(r *http.Request, req splits.Request) (planned, error) {
	cat, err := s.catalogs.forRequest(r)
	if err != nil {
		return planned{}, err
	}
	base, err := s.uriBase(r)
	if err != nil {
		return planned{}, err
	}
	start := time.Now()
	p, err := cat.Plans.Plan(r.Context(), req)
	if err != nil {
		return planned{}, err
	}
	return s.planned(req, p, base, start)
}

// planned checks plan, made for req since start, and counts it in the
// metrics.
func (s *server) planned(req splits.Request, plan splits.Plan, base uriBase, start time.Time) (planned, error) {
	for _, ps := range plan.Splits {
		// The server would refuse such a URI (400 malformed_token): a plan
		// never hands one out.
		if len(ps.Token) > token.MaxTokenLength {
			return planned{}, fmt.Errorf("%w: a split of %s needs a token of %d bytes, longer than the %d this "+
				"server accepts back; narrow icebergFilter, or plan without applyResidual", errBadRequest,
				ps.Parts[0].Data.Path, len(ps.Token), token.MaxTokenLength)
		}
	}
	if s.Metrics != nil {
		s.Metrics.PlanDuration.Observe(time.Since(start).Seconds())
		s.Metrics.SplitsPlanned.WithLabelValues(string(plan.Path)).Add(float64(len(plan.Splits)))
	}
	return planned{Plan: plan, req: req, base: base}, nil
}

// uriBase is where the URIs of the request's answer point: the configured
// public URL, or the base the request came in on (baseURL).
func (s *server) uriBase(r *http.Request) (uriBase, error) {
	url, err := s.baseURL(r)
	if err != nil {
		return uriBase{}, err
	}
	src := druid.HTTPInputSource{Type: "http"}
	if len(s.BasicAuth) > 0 {
		src.Username = s.BasicAuth[0].Username
		src.Password = &druid.PasswordProvider{Type: "environment", Variable: s.DruidPasswordEnv}
	}
	return uriBase{url: url, source: src}, nil
}

// input is the http inputSource that reads the plan, one URI per split,
// and its format.
func (p planned) input() (druid.HTTPInputSource, druid.InputFormat) {
	format := druid.InputFormat{Type: "parquet", BinaryAsString: p.req.Encoding.BinaryAsString}
	if p.Path == splits.PathRows {
		format = druid.InputFormat{Type: "json"}
	}
	// The URIs are cut from one string: a wide plan has thousands, each
	// mostly its token.
	routes := func(k token.TokenKind) (route, suffix string) {
		if k == token.KindRows {
			return "/splits/", rowSuffixes[cmp.Or(p.req.Compression, splits.DefaultCompression)]
		}
		return "/files/", ""
	}
	size := 0
	for _, ps := range p.Splits {
		route, suffix := routes(ps.Kind)
		size += len(p.base.url) + len(route) + len(ps.Token) + len(suffix)
	}
	var uris strings.Builder
	uris.Grow(size)
	ends := make([]int, len(p.Splits))
	for i, ps := range p.Splits {
		route, suffix := routes(ps.Kind)
		uris.WriteString(p.base.url)
		uris.WriteString(route)
		uris.WriteString(ps.Token)
		uris.WriteString(suffix)
		ends[i] = uris.Len()
	}
	all := uris.String()
	in := p.base.source
	in.URIs = make([]string, len(p.Splits))
	from := 0
	for i, end := range ends {
		in.URIs[i], from = all[from:end], end
	}
	return in, format
}

// warnings are what the client should know of the plan: that it is
// empty, the planner's warnings, and what the filter ignores.
func (p planned) warnings() []string {
	var out []string
	if p.Empty {
		out = append(out, noFilesWarning)
	}
	out = append(out, p.Plan.Warnings...)
	if p.req.Filter != nil {
		out = append(out, p.req.Filter.Ignored("icebergFilter")...)
	}
	return out
}

// source is what a generated spec reads of the plan, its time column named
// timeColumn (by the query parameter param), checked against what the plan
// serves.
func (p planned) source(timeColumn, param string) (druid.Source, error) {
	tf, err := druid.TimeField(p.Fields, timeColumn, param)
	if err != nil {
		return druid.Source{}, err
	}
	in, format := p.input()
	return druid.Source{InputSource: in, InputFormat: format, Fields: p.Fields, TimeField: tf, Encoding: p.req.Encoding}, nil
}

// constantSource is what a generated spec reads of the plan when the
// table has no time column: every row's __time is at.
func (p planned) constantSource(at time.Time) druid.Source {
	in, format := p.input()
	return druid.Source{InputSource: in, InputFormat: format, Fields: p.Fields, ConstantTime: at, Encoding: p.req.Encoding}
}
