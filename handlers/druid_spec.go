package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxSpecBytes bounds the body of POST /splits; a Druid inputSource is a
// few kilobytes.
const maxSpecBytes = 1 << 20

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
		return fmt.Errorf("%w: body: %w", errBadRequest, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: body: one JSON object expected", errBadRequest)
	}
	p, warnings, err := planSpec(body)
	if err != nil {
		return err
	}
	req, err := p.request()
	if err != nil {
		return err
	}
	return s.answerSplits(w, r, req, warnings)
}
