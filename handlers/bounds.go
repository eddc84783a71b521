package handlers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/druidiceberg/sidecar/druid"
)

// The bounds of client input that no domain package owns, each answered
// with a 400 that names it. The filter's own bounds are splits'
// (druid.CheckFilterBounds).
const (
	// maxColumns bounds the columns one request names: resolving them
	// costs their number times the table's (planRequest.request).
	maxColumns = 10_000
	// maxIncludeIntervals bounds the include intervals of GET /changes.
	maxIncludeIntervals = 1000
)

// checkSpecFilter checks every icebergFilter member of a POST /splits body
// against druid.CheckFilterBounds before the body is decoded: decoding a
// filter costs its depth times its size. It puts back what it read, and
// leaves a body that is not a JSON object, or larger than maxSpecBytes, to
// the decoder, which says what is wrong. Every member is checked, not the
// last of a name: encoding/json decodes each duplicate, and matches names
// regardless of case.
func checkSpecFilter(r *http.Request) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxSpecBytes+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil || len(body) > maxSpecBytes {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		name, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil
		}
		if strings.EqualFold(name, "icebergFilter") {
			if err := druid.CheckFilterBounds(value); err != nil {
				return err
			}
		}
	}
	return nil
}
