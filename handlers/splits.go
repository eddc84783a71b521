package handlers

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// splitsResponse is the answer of GET and POST /splits.
type splitsResponse struct {
	Table       string                `json:"table"`
	SnapshotID  *int64                `json:"snapshotId"`
	Mode        splits.Path           `json:"mode"`
	InputSource druid.HTTPInputSource `json:"inputSource"`
	InputFormat druid.InputFormat     `json:"inputFormat"`
	Columns     []planColumn          `json:"columns"`
	Splits      []splitResponse       `json:"splits"`
	// Warnings tell the client what it may not expect, such as an empty
	// plan, ignored fields of a Druid spec, or residual filters under
	// residualFilterMode=warn.
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
	// before deletes (token.Split.RecordCount), is an estimate: the split
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
	_, req, err := queryRequest(r.URL.Query(), nil)
	if err != nil {
		return err
	}
	return s.answerSplits(w, r, req, nil)
}

// answerSplits plans req and writes the answer of /splits; warnings (those
// of the request) come first.
func (s *server) answerSplits(w http.ResponseWriter, r *http.Request, req splits.Request, warnings []string) error {
	pl, err := s.plan(r, req)
	if err != nil {
		return err
	}
	return writeSplits(w, pl.answer(warnings))
}

// answer is the answer of /splits for the plan; warnings (those of the
// request) come first.
func (p planned) answer(warnings []string) splitsResponse {
	in, format := p.input()
	resp := splitsResponse{
		Table:       p.Table,
		Mode:        p.Path,
		InputSource: in,
		InputFormat: format,
		Columns:     planColumns(p.Fields, p.req.Encoding),
		Splits:      make([]splitResponse, 0, len(p.Splits)),
		Warnings:    append(append([]string{}, warnings...), p.warnings()...),
	}
	if p.SnapshotID != 0 {
		id := p.SnapshotID
		resp.SnapshotID = &id
	}
	for i, ps := range p.Splits {
		resp.Splits = append(resp.Splits, describeSplit(ps, in.URIs[i]))
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
			case token.DeletePosition:
				out.PositionDeleteFiles++
			case token.DeleteEquality:
				out.EqualityDeleteFiles++
			case token.DeleteDeletionVector:
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
