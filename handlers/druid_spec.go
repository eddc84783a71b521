package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/splits/split"
)

// maxSpecBytes bounds the body of POST /splits; a Druid inputSource is a
// few kilobytes.
const maxSpecBytes = 1 << 20

// icebergSpec is the body of POST /splits: a Druid `iceberg` inputSource,
// plus the sidecar's own optional fields.
type icebergSpec struct {
	Type               string          `json:"type"`
	Namespace          string          `json:"namespace"`
	TableName          string          `json:"tableName"`
	IcebergFilter      *splits.Filter  `json:"icebergFilter"`
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

// ignoredWarning says what an ignored property of the spec means.
func ignoredWarning(name string) string {
	if name == "v2DeleteHandling" {
		return "v2DeleteHandling is ignored: the sidecar always applies the table's delete files"
	}
	return fmt.Sprintf("%s is ignored: the sidecar does not know it (Druid too ignores properties it does not know)", split.Short(name))
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
		return nil, fmt.Errorf("%w: snapshotTime %s: want epoch milliseconds or an ISO 8601 date-time", splits.ErrBadRequest, raw)
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

// postSplits plans the table of a Druid iceberg inputSource and answers
// like GET /splits: paste the answer's inputSource and inputFormat in
// place of the iceberg ones.
func (s *server) postSplits(w http.ResponseWriter, r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return errorf(http.StatusUnsupportedMediaType, "unsupported_media_type", "send the Druid inputSource as application/json")
	}
	if err := checkSpecFilter(r); err != nil {
		return err
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSpecBytes))
	var body map[string]json.RawMessage
	if err := dec.Decode(&body); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return errorf(http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is larger than %d bytes", maxSpecBytes))
		}
		return fmt.Errorf("%w: body: %w", splits.ErrBadRequest, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: body: one JSON object expected", splits.ErrBadRequest)
	}
	var warnings []string
	ignored := 0
	for _, k := range slices.Sorted(maps.Keys(body)) {
		if !specFields[k] {
			if ignored++; ignored <= splits.MaxIgnoredWarnings {
				warnings = append(warnings, ignoredWarning(k))
			}
			delete(body, k)
		}
	}
	if ignored > splits.MaxIgnoredWarnings {
		warnings = append(warnings, fmt.Sprintf("%d more ignored fields", ignored-splits.MaxIgnoredWarnings))
	}
	// The known properties, decoded once more into their types (a map of
	// raw JSON always encodes).
	known, _ := json.Marshal(body)
	var spec icebergSpec
	if err := json.Unmarshal(known, &spec); err != nil {
		return fmt.Errorf("%w: body: %w", splits.ErrBadRequest, err)
	}
	if spec.Type != "" && spec.Type != "iceberg" {
		return fmt.Errorf("%w: inputSource type %s: want iceberg", splits.ErrBadRequest, split.Quote(spec.Type))
	}
	if spec.Namespace == "" || spec.TableName == "" {
		return fmt.Errorf("%w: namespace and tableName are required", splits.ErrBadRequest)
	}
	req := splits.Request{
		Table:      spec.Namespace + "." + spec.TableName,
		SnapshotID: spec.SnapshotID,
		Ref:        spec.Ref,
		Columns:    spec.Columns,
		Filter:     spec.IcebergFilter,

		ApplyResidual: spec.ApplyResidual,
	}
	if spec.MinSplits != 0 {
		n, err := parseMinSplits(strconv.Itoa(spec.MinSplits))
		if err != nil {
			return err
		}
		req.MinSplits = n
	}
	req.Encoding.BinaryAsString = spec.BinaryAsString
	var err error
	if req.Encoding.GeoWKB, err = parseGeo(spec.Geo); err != nil {
		return err
	}
	if req.MetaColumns, err = parseMetaColumns(spec.MetaColumns); err != nil {
		return err
	}
	if req.SnapshotTime, err = snapshotTime(spec.SnapshotTime); err != nil {
		return err
	}
	if req.Mode, err = splits.ParseMode(spec.Mode); err != nil {
		return err
	}
	if req.Compression, err = splits.ParseCompression(spec.Compression); err != nil {
		return err
	}
	if req.ResidualMode, err = splits.ParseResidualMode(spec.ResidualFilterMode); err != nil {
		return err
	}
	switch spec.Timestamps {
	case "", "millis":
	case "iso":
		req.Encoding.ISOTimestamps = true
	default:
		return fmt.Errorf("%w: timestamps %q: want millis or iso", splits.ErrBadRequest, spec.Timestamps)
	}
	if len(spec.IcebergCatalog) > 0 {
		warnings = append(warnings, "icebergCatalog is ignored: the sidecar plans against the catalog it was started with")
	}
	if len(spec.WarehouseSource) > 0 {
		warnings = append(warnings, "warehouseSource is ignored: the sidecar reads files with the storage it was started with")
	}
	return s.planAndAnswer(w, r, req, warnings)
}
