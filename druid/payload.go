package druid

import (
	"encoding/json"
	"errors"
	"fmt"
)

// MaxPayloadBytes bounds every statement and task the sidecar generates,
// so that Druid's task runners can hand the task to a worker:
//
//   - The Kubernetes task runner passes a task to its pod in the TASK_JSON
//     environment variable, gzip-compressed and base64-encoded, which holds
//     at most 130,048 bytes (DruidK8sConstants.MAX_ENV_VARIABLE_KBS; newer
//     runners store a larger payload in deep storage instead,
//     apache/druid#14887). Base64 makes 4 bytes of 3, so a payload that
//     does not compress (signed tokens barely do) fits up to about 95 KiB.
//   - ZooKeeper-based task assignment (druid.indexer.runner.type=remote)
//     writes the task into a znode of at most
//     druid.indexer.runner.maxZnodeBytes, 512 KiB by default
//     (RemoteTaskRunner: "Length of raw bytes for task too large").
//
// An MSQ statement becomes a controller task (MSQControllerTask) that holds
// the statement's text (sqlQuery) and its planned query, whose external
// datasource holds the same inputSource again: its payload is about twice
// the statement. At 40 KiB a statement's controller stays under 85 KiB,
// within TASK_JSON even uncompressed; an index_parallel task's supervisor
// holds its URIs once, and each subtask one of them.
const MaxPayloadBytes = 40 << 10

// ErrTooLarge: a generated statement or task would be larger than
// MaxPayloadBytes. The error is a *TooLargeError.
var ErrTooLarge = errors.New("larger than Druid's task runners take")

// TooLargeError is a statement or task larger than MaxPayloadBytes.
type TooLargeError struct {
	// What was generated: a statement or a task.
	What string
	// Size is its length in bytes.
	Size int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: the %s is %d bytes, more than the %d bytes a generated task may be (Kubernetes' TASK_JSON "+
		"environment variable holds 127 KiB compressed, an MSQ controller task twice its statement): select fewer columns",
		ErrTooLarge, e.What, e.Size, MaxPayloadBytes)
}

// Is makes errors.Is(err, ErrTooLarge) hold.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// checkPayload refuses a statement or task of n bytes above the bound.
func checkPayload(what string, n int) error {
	if n <= MaxPayloadBytes {
		return nil
	}
	return &TooLargeError{What: what, Size: n}
}

// FitURIs is how many URIs a statement or task over s may read to stay
// within MaxPayloadBytes, when over s it is size bytes: what the bound
// leaves beside everything but the URIs, in URIs of their mean length. ok
// is false when fewer URIs would not bring it within the bound.
func (s Source) FitURIs(size int) (n int, ok bool) {
	uris := s.InputSource.URIs
	if len(uris) == 0 || s.empty() {
		return 0, false
	}
	uriBytes := 0
	for _, u := range uris {
		// As the spec spells it: a JSON string, and a comma.
		raw, err := json.Marshal(u)
		if err != nil {
			return 0, false
		}
		uriBytes += len(raw) + 1
	}
	room := MaxPayloadBytes - (size - uriBytes)
	// A tenth to spare: the URIs of another packing differ in length.
	n = room * 9 / 10 * len(uris) / uriBytes
	if n < 1 || n >= len(uris) {
		return 0, false
	}
	return n, true
}
