package handlers

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// planRequest is a request to plan a table as the client sent it, read
// from a query (planQuery: GET /splits, the Druid spec routes, /changes)
// or from a Druid iceberg inputSource (planSpec: POST /splits): each value
// in its type, not yet checked. request checks it and makes the planner's
// splits.Request, the same way whichever way it came.
//
// A parameter is added here, in this file: its field, its name in
// planParams and its reading in planQuery, its property in icebergSpec
// and specFields when a Druid spec takes it, and its check in request.
type planRequest struct {
	table        string
	snapshotID   *int64
	snapshotTime *time.Time
	ref          string
	fromSnapshot *int64

	mode    string
	columns []string
	// metaColumns are the names of the metadata columns asked for, as
	// given.
	metaColumns    []string
	timestamps     string
	geo            string
	binaryAsString bool
	compression    string
	// minSplits is nil when the request names none (a Druid spec's 0).
	minSplits *int

	filter        *druid.Filter
	residualMode  string
	applyResidual bool
}

// planParams are the query parameters of a plan request (GET /splits and,
// beside their own, the Druid spec routes'); any other is a 400 that names
// it, so a typo never silently plans something else. True marks those that
// /changes takes too: the table, its catalog, and what shapes the rows.
var planParams = map[string]bool{
	"table": true, "catalog": true, "snapshotId": false, "snapshotTime": false, "ref": false,
	"fromSnapshot": false, "toSnapshot": false,
	"mode": true, "columns": true, "metadataColumns": true, "timestamps": true, "binaryAsString": true, "geo": true,
	"minSplits": true, "compression": true,
	"icebergFilter": false, "residualFilterMode": false, "applyResidual": false,
}

// maxMinSplits bounds minSplits: Druid runs one subtask per split, and no
// cluster runs more at once.
const maxMinSplits = 10_000

// checkQuery refuses a query that names a parameter known does not take,
// or one parameter twice.
func checkQuery(q url.Values, known func(name string) bool) error {
	var unknown []string
	for k, v := range q {
		if !known(k) {
			unknown = append(unknown, k)
		} else if len(v) > 1 {
			return fmt.Errorf("%w: query parameter %s given %d times", errBadRequest, k, len(v))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("%w: unknown query parameter %s", errBadRequest, strings.Join(unknown, ", "))
	}
	return nil
}

// queryID reads the snapshot id a query parameter names; nil when absent.
func queryID(q url.Values, name string) (*int64, error) {
	v := q.Get(name)
	if v == "" {
		return nil, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s is not an integer", errBadRequest, name, fault.Quote(v))
	}
	return &id, nil
}

// queryBool reads a boolean query parameter into dst; absent leaves it.
func queryBool(q url.Values, name string, dst *bool) error {
	v := q.Get(name)
	if v == "" {
		return nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%w: %s %s: want true or false", errBadRequest, name, fault.Quote(v))
	}
	*dst = b
	return nil
}

// planQuery reads a plan request from a query; extra names the other
// parameters a route that builds on it takes.
func planQuery(q url.Values, extra map[string]bool) (planRequest, error) {
	if err := checkQuery(q, func(k string) bool { _, ok := planParams[k]; return ok || extra[k] }); err != nil {
		return planRequest{}, err
	}
	p := planRequest{
		table: q.Get("table"), ref: q.Get("ref"),
		mode: q.Get("mode"), timestamps: q.Get("timestamps"), geo: q.Get("geo"), compression: q.Get("compression"),
		residualMode: q.Get("residualFilterMode"),
	}
	if p.table == "" {
		return p, fmt.Errorf("%w: query parameter table is required (table=NAMESPACE.NAME)", errBadRequest)
	}
	var err error
	if p.snapshotID, err = queryID(q, "snapshotId"); err != nil {
		return p, err
	}
	if p.fromSnapshot, err = queryID(q, "fromSnapshot"); err != nil {
		return p, err
	}
	to, err := queryID(q, "toSnapshot")
	switch {
	case err != nil:
		return p, err
	case to != nil && p.snapshotID != nil:
		return p, fmt.Errorf("%w: toSnapshot and snapshotId name the same thing; give one", errBadRequest)
	case to != nil:
		p.snapshotID = to
	}
	if v := q.Get("snapshotTime"); v != "" {
		t, err := parseTime(v)
		if err != nil {
			return p, err
		}
		p.snapshotTime = &t
	}
	if v := q.Get("columns"); v != "" {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c == "" {
				return p, fmt.Errorf("%w: columns %s has an empty name", errBadRequest, fault.Quote(v))
			}
			p.columns = append(p.columns, c)
		}
	}
	if v := q.Get("metadataColumns"); v != "" {
		p.metaColumns = strings.Split(v, ",")
	}
	if err := queryBool(q, "binaryAsString", &p.binaryAsString); err != nil {
		return p, err
	}
	if v := q.Get("icebergFilter"); v != "" {
		if err := druid.CheckFilterBounds([]byte(v)); err != nil {
			return p, err
		}
		p.filter = &druid.Filter{}
		if err := json.Unmarshal([]byte(v), p.filter); err != nil {
			return p, fmt.Errorf("%w: %w", errBadRequest, err)
		}
	}
	if v := q.Get("minSplits"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return p, minSplitsError(v)
		}
		p.minSplits = &n
	}
	if err := queryBool(q, "applyResidual", &p.applyResidual); err != nil {
		return p, err
	}
	return p, nil
}

// queryRequest reads a plan request from a query (planQuery) and checks it
// (request).
func queryRequest(q url.Values, extra map[string]bool) (planRequest, splits.Request, error) {
	p, err := planQuery(q, extra)
	if err != nil {
		return p, splits.Request{}, err
	}
	req, err := p.request()
	return p, req, err
}

// icebergSpec is the body of POST /splits: a Druid `iceberg` inputSource,
// plus the sidecar's own optional fields.
type icebergSpec struct {
	Type               string          `json:"type"`
	Namespace          string          `json:"namespace"`
	TableName          string          `json:"tableName"`
	IcebergFilter      *druid.Filter   `json:"icebergFilter"`
	SnapshotTime       json.RawMessage `json:"snapshotTime"`
	ResidualFilterMode string          `json:"residualFilterMode"`
	IcebergCatalog     json.RawMessage `json:"icebergCatalog"`
	WarehouseSource    json.RawMessage `json:"warehouseSource"`

	SnapshotID     *int64   `json:"snapshotId"`
	Ref            string   `json:"ref"`
	Mode           string   `json:"mode"`
	Columns        []string `json:"columns"`
	MetaColumns    []string `json:"metadataColumns"`
	Timestamps     string   `json:"timestamps"`
	BinaryAsString bool     `json:"binaryAsString"`
	Geo            string   `json:"geo"`
	ApplyResidual  bool     `json:"applyResidual"`
	MinSplits      int      `json:"minSplits"`
	Compression    string   `json:"compression"`
}

// specFields are the properties icebergSpec reads. Druid's mapper ignores
// any other (processing/src/main/java/org/apache/druid/jackson/
// DefaultObjectMapper.java: FAIL_ON_UNKNOWN_PROPERTIES false), so a spec
// written for a newer Druid still plans here; the answer's warnings name
// what was ignored.
var specFields = map[string]bool{
	"type": true, "namespace": true, "tableName": true, "icebergFilter": true, "snapshotTime": true,
	"residualFilterMode": true, "icebergCatalog": true, "warehouseSource": true,
	"snapshotId": true, "ref": true, "mode": true, "columns": true, "timestamps": true, "binaryAsString": true, "geo": true,
	"metadataColumns": true, "applyResidual": true, "minSplits": true, "compression": true,
}

// planSpec reads a plan request from the properties of a Druid iceberg
// inputSource; the warnings name what it ignores.
func planSpec(body map[string]json.RawMessage) (planRequest, []string, error) {
	var warnings []string
	ignored := 0
	known := make(map[string]json.RawMessage, len(body))
	for _, k := range slices.Sorted(maps.Keys(body)) {
		if specFields[k] {
			known[k] = body[k]
			continue
		}
		if ignored++; ignored <= druid.MaxIgnoredWarnings {
			warnings = append(warnings, ignoredWarning(k))
		}
	}
	if ignored > druid.MaxIgnoredWarnings {
		warnings = append(warnings, fmt.Sprintf("%d more ignored fields", ignored-druid.MaxIgnoredWarnings))
	}
	// The known properties, decoded once more into their types (a map of
	// raw JSON always encodes).
	raw, _ := json.Marshal(known)
	var spec icebergSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return planRequest{}, nil, fmt.Errorf("%w: body: %w", errBadRequest, err)
	}
	if spec.Type != "" && spec.Type != "iceberg" {
		return planRequest{}, nil, fmt.Errorf("%w: inputSource type %s: want iceberg", errBadRequest, fault.Quote(spec.Type))
	}
	if spec.Namespace == "" || spec.TableName == "" {
		return planRequest{}, nil, fmt.Errorf("%w: namespace and tableName are required", errBadRequest)
	}
	p := planRequest{
		table: spec.Namespace + "." + spec.TableName, snapshotID: spec.SnapshotID, ref: spec.Ref,
		mode: spec.Mode, columns: spec.Columns, metaColumns: spec.MetaColumns, timestamps: spec.Timestamps, geo: spec.Geo,
		binaryAsString: spec.BinaryAsString, compression: spec.Compression,
		filter: spec.IcebergFilter, residualMode: spec.ResidualFilterMode, applyResidual: spec.ApplyResidual,
	}
	if spec.MinSplits != 0 {
		p.minSplits = &spec.MinSplits
	}
	var err error
	if p.snapshotTime, err = snapshotTime(spec.SnapshotTime); err != nil {
		return p, nil, err
	}
	if len(spec.IcebergCatalog) > 0 {
		warnings = append(warnings, "icebergCatalog is ignored: the sidecar plans against the catalog it was started with")
	}
	if len(spec.WarehouseSource) > 0 {
		warnings = append(warnings, "warehouseSource is ignored: the sidecar reads files with the storage it was started with")
	}
	return p, warnings, nil
}

// ignoredWarning says what an ignored property of the spec means.
func ignoredWarning(name string) string {
	if name == "v2DeleteHandling" {
		return "v2DeleteHandling is ignored: the sidecar always applies the table's delete files"
	}
	return fmt.Sprintf("%s is ignored: the sidecar does not know it (Druid too ignores properties it does not know)", fault.Short(name))
}

// snapshotTime reads a Druid DateTime property (JodaStuff's deserializer):
// an integer is epoch milliseconds, a string an ISO 8601 date-time, null
// or "" no time at all.
func snapshotTime(raw json.RawMessage) (*time.Time, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var ms int64
	if err := json.Unmarshal(raw, &ms); err == nil {
		t := time.UnixMilli(ms).UTC()
		return &t, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%w: snapshotTime %s: want epoch milliseconds or an ISO 8601 date-time", errBadRequest, raw)
	}
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	t, err := parseTime(s)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// parseTime reads snapshotTime as Druid reads a DateTime: the ISO 8601
// forms Joda takes (druid.ParseInstant).
func parseTime(v string) (time.Time, error) {
	t, err := druid.ParseInstant(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: snapshotTime: %w", errBadRequest, err)
	}
	return t, nil
}

// request checks p and makes the planner's request of it: the one place
// a plan request is checked, however it came.
func (p planRequest) request() (splits.Request, error) {
	req := splits.Request{
		Table: p.table, SnapshotID: p.snapshotID, SnapshotTime: p.snapshotTime, Ref: p.ref, FromSnapshot: p.fromSnapshot,
		Columns: p.columns, Filter: p.filter, ApplyResidual: p.applyResidual,
	}
	var err error
	if req.Mode, err = splits.ParseMode(p.mode); err != nil {
		return req, err
	}
	if req.MetaColumns, err = metaColumns(p.metaColumns); err != nil {
		return req, err
	}
	if req.Encoding.ISOTimestamps, err = either("timestamps", p.timestamps, "millis", "iso"); err != nil {
		return req, err
	}
	if req.Encoding.GeoWKB, err = either("geo", p.geo, "wkt", "wkb"); err != nil {
		return req, err
	}
	req.Encoding.BinaryAsString = p.binaryAsString
	if req.Compression, err = splits.ParseCompression(p.compression); err != nil {
		return req, err
	}
	if p.minSplits != nil {
		if n := *p.minSplits; n < 0 || n > maxMinSplits {
			return req, minSplitsError(strconv.Itoa(n))
		}
		req.MinSplits = *p.minSplits
	}
	if req.ResidualMode, err = splits.ParseResidualMode(p.residualMode); err != nil {
		return req, err
	}
	// Resolving columns costs their number times the table's.
	if len(p.columns) > maxColumns {
		return req, fmt.Errorf("%w: columns names %d columns, more than the %d allowed", errBadRequest, len(p.columns), maxColumns)
	}
	return req, nil
}

// metaColumns reads the metadata columns named (token.ParseMetaColumns),
// each trimmed.
func metaColumns(names []string) (token.MetaColumns, error) {
	trimmed := make([]string, len(names))
	for i, n := range names {
		if trimmed[i] = strings.TrimSpace(n); trimmed[i] == "" {
			return 0, fmt.Errorf("%w: metadataColumns has an empty name", errBadRequest)
		}
	}
	return token.ParseMetaColumns(trimmed)
}

// either reads parameter name of two values: "" and the default def are
// false, other true.
func either(name, v, def, other string) (bool, error) {
	switch v {
	case "", def:
		return false, nil
	case other:
		return true, nil
	}
	return false, fmt.Errorf("%w: %s %s: want %s or %s", errBadRequest, name, fault.Quote(v), def, other)
}

// minSplitsError refuses minSplits v.
func minSplitsError(v string) error {
	return fmt.Errorf("%w: minSplits %q: want a whole number from 0 to %d", errBadRequest, v, maxMinSplits)
}
