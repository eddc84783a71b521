package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/druidiceberg/sidecar/splits"
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
	SnapshotTime       string          `json:"snapshotTime"`
	ResidualFilterMode string          `json:"residualFilterMode"`
	IcebergCatalog     json.RawMessage `json:"icebergCatalog"`
	WarehouseSource    json.RawMessage `json:"warehouseSource"`

	SnapshotID     *int64   `json:"snapshotId"`
	Ref            string   `json:"ref"`
	Mode           string   `json:"mode"`
	Columns        []string `json:"columns"`
	Timestamps     string   `json:"timestamps"`
	BinaryAsString bool     `json:"binaryAsString"`
	ApplyResidual  bool     `json:"applyResidual"`
	MinSplits      int      `json:"minSplits"`
	Compression    string   `json:"compression"`
}

// postSplits plans the table of a Druid iceberg inputSource and answers
// like GET /splits: paste the answer's inputSource and inputFormat in
// place of the iceberg ones.
func (s *server) postSplits(w http.ResponseWriter, r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return errorf(http.StatusUnsupportedMediaType, "unsupported_media_type", "send the Druid inputSource as application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSpecBytes))
	dec.DisallowUnknownFields()
	var spec icebergSpec
	if err := dec.Decode(&spec); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return errorf(http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is larger than %d bytes", maxSpecBytes))
		}
		// encoding/json names the unknown field: `json: unknown field "x"`.
		return fmt.Errorf("%w: body: %w", splits.ErrBadRequest, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: body: one JSON object expected", splits.ErrBadRequest)
	}
	if spec.Type != "" && spec.Type != "iceberg" {
		return fmt.Errorf("%w: inputSource type %q: want iceberg", splits.ErrBadRequest, spec.Type)
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
	if spec.SnapshotTime != "" {
		t, err := parseTime(spec.SnapshotTime)
		if err != nil {
			return err
		}
		req.SnapshotTime = &t
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
	var warnings []string
	if len(spec.IcebergCatalog) > 0 {
		warnings = append(warnings, "icebergCatalog is ignored: the sidecar plans against the catalog it was started with")
	}
	if len(spec.WarehouseSource) > 0 {
		warnings = append(warnings, "warehouseSource is ignored: the sidecar reads files with the storage it was started with")
	}
	return s.planAndAnswer(w, r, req, warnings)
}
