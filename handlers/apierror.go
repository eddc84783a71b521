package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// retryAfterSeconds is what a 503 asks clients to wait. Druid retries every
// failed request with its own backoff, so this is a hint, not a contract.
const retryAfterSeconds = 5

// Errors quote client input, which can be a megabyte: an error's message
// is cut to maxMessageBytes and the error a log line carries to
// maxLoggedErrorBytes, and the handlers quote a value with fault.Quote.
const (
	maxMessageBytes     = 1 << 10
	maxLoggedErrorBytes = 4 << 10
)

// clip cuts s to at most n bytes, at a character boundary, and says how
// long it was.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

// errBadRequest: the request is malformed, as the handlers read it (a
// parameter, a body). Its text is the domain's fault.ErrBadRequest's, and
// it is answered alike: 400 bad_request.
var errBadRequest = errors.New("bad request")

// apiError is an error with its HTTP rendering: Message goes to the client,
// Err to the log.
type apiError struct {
	Status  int
	Code    string
	Message string
	Err     error
}

func (e *apiError) Error() string { return e.Message }
func (e *apiError) Unwrap() error { return e.Err }

func errorf(status int, code, msg string) *apiError {
	return &apiError{Status: status, Code: code, Message: msg}
}

// toAPIError maps the domain packages' sentinels onto statuses and codes.
// The message is the error's own text: domain errors say what was being done
// and never carry secrets.
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	status, code := http.StatusInternalServerError, "internal"
	switch {
	case errors.Is(err, errBadRequest), errors.Is(err, fault.ErrBadRequest), errors.Is(err, druid.ErrInvalid):
		status, code = http.StatusBadRequest, "bad_request"
	case errors.Is(err, token.ErrMalformedToken):
		status, code = http.StatusBadRequest, "malformed_token"
	case errors.Is(err, token.ErrBadSignature):
		status, code = http.StatusForbidden, "bad_signature"
	case errors.Is(err, token.ErrTokenExpired):
		status, code = http.StatusGone, "token_expired"
	case errors.Is(err, fault.ErrTableNotFound):
		status, code = http.StatusNotFound, "table_not_found"
	case errors.Is(err, splits.ErrSnapshotNotFound):
		status, code = http.StatusNotFound, "snapshot_not_found"
	case errors.Is(err, druid.ErrNothingToRead):
		status, code = http.StatusConflict, "nothing_to_read"
	case errors.Is(err, splits.ErrPlanMismatch):
		status, code = http.StatusConflict, "plan_mismatch"
	case errors.Is(err, splits.ErrConflict):
		status, code = http.StatusConflict, "conflict"
	case errors.Is(err, fault.ErrForbiddenLocation):
		// A path outside the roots of its table and catalog: refused
		// before anything was opened.
		status, code = http.StatusForbidden, "forbidden_location"
	case errors.Is(err, fault.ErrNotServed):
		status, code = http.StatusForbidden, "table_not_served"
	case errors.Is(err, fs.ErrNotExist):
		// A pinned file is gone: the table expired the snapshot or removed
		// orphan files after planning. Planning again gives valid tokens.
		status, code = http.StatusGone, "file_gone"
	case errors.Is(err, fault.ErrUpstream):
		// The catalog or object store answered with an error of its own
		// that is neither a refusal nor worth a retry.
		status, code = http.StatusBadGateway, "upstream_error"
	case errors.Is(err, fault.ErrDenied):
		// The catalog or object store refused the configured credentials:
		// an upstream's answer, which no retry changes.
		status, code = http.StatusBadGateway, "denied"
	case errors.Is(err, fault.ErrUnavailable):
		status, code = http.StatusServiceUnavailable, "unavailable"
	case errors.Is(err, memory.ErrBusy):
		status, code = http.StatusServiceUnavailable, "memory_busy"
	case errors.Is(err, memory.ErrTooLarge):
		status, code = http.StatusUnprocessableEntity, "memory_exceeded"
	case errors.Is(err, splits.ErrTooManySplits):
		status, code = http.StatusUnprocessableEntity, "too_many_splits"
	case errors.Is(err, druid.ErrTooLarge):
		status, code = http.StatusUnprocessableEntity, "spec_too_large"
	case errors.Is(err, fault.ErrUnsupported):
		status, code = http.StatusUnprocessableEntity, "unsupported"
	case splits.IsDamagedMetadata(err):
		status, code = http.StatusUnprocessableEntity, "damaged_metadata"
	case errors.Is(err, reader.ErrNoFieldIDs), errors.Is(err, reader.ErrCorruptFile),
		errors.Is(err, reader.ErrSchemaMismatch), errors.Is(err, reader.ErrUnsupported):
		status, code = http.StatusUnprocessableEntity, "unreadable_file"
	}
	msg := clip(err.Error(), maxMessageBytes)
	if status == http.StatusInternalServerError {
		msg = "internal error; see the sidecar's log"
	}
	if code == "denied" {
		msg += "; check the catalog's credentials in the sidecar's configuration"
	}
	if code == "damaged_metadata" {
		msg += "; the table's metadata needs repair (or the catalog names the wrong metadata file)"
	}
	if code == "file_gone" {
		msg += "; the table changed since planning: plan again with GET /splits"
	}
	return &apiError{Status: status, Code: code, Message: msg, Err: err}
}

// writeError renders any error as the JSON error body; it is the one place
// that does.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	ae := toAPIError(err)
	level := slog.LevelInfo
	if ae.Status >= 500 {
		level = slog.LevelError
	}
	cause := ae.Err
	if cause == nil {
		cause = ae
	}
	log.LogAttrs(r.Context(), level, "request failed",
		slog.Int("status", ae.Status), slog.String("code", ae.Code), slog.String("error", clip(cause.Error(), maxLoggedErrorBytes)))
	if ae.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	}
	if ae.Status == http.StatusRequestTimeout {
		// What is left of the body is still on the way: the connection
		// cannot carry another request.
		w.Header().Set("Connection", "close")
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(ae.Status)
	_, _ = w.Write(errorBody(ae.Code, ae.Message))
}

// errorBody is the JSON body of an error answer, newline-terminated.
func errorBody(code, message string) []byte {
	body := struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{}
	body.Error.Code, body.Error.Message = code, clip(message, maxMessageBytes)
	b, _ := json.Marshal(body) // two strings always encode
	return append(b, '\n')
}

// WriteRefusal writes the whole HTTP/1.1 answer to a connection refused
// before any of its requests was read (the listener is at its connection
// cap): 503 overloaded with Retry-After, as every 503 is, and Connection:
// close. The connection is new, so the write does not block.
func WriteRefusal(w io.Writer, maxConnections int) error {
	body := errorBody("overloaded", fmt.Sprintf(
		"%d connections are open and busy, the most this sidecar holds; retry shortly", maxConnections))
	_, err := fmt.Fprintf(w, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n"+
		"Retry-After: %d\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", retryAfterSeconds, len(body), body)
	return err
}
