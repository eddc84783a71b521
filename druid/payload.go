package druid

import (
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
// MaxPayloadBytes, and no packing of the plan's splits makes it smaller.
var ErrTooLarge = errors.New("larger than Druid's task runners take")

// checkPayload refuses a statement or task of n bytes above the bound.
func checkPayload(what string, n int) error {
	if n <= MaxPayloadBytes {
		return nil
	}
	return fmt.Errorf("%w: the %s is %d bytes, more than the %d bytes a generated task may be (Kubernetes' TASK_JSON "+
		"environment variable holds 127 KiB compressed, an MSQ controller task twice its statement): select fewer columns",
		ErrTooLarge, what, n, MaxPayloadBytes)
}
