package druidsim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/klauspost/compress/gzip"
)

// Runner is the Overlord's task runner (druid.indexer.runner.type), which
// decides how large a task's payload, its JSON, may be.
type Runner int

// The task runners the model knows.
const (
	// RunnerHTTP is httpRemote, the default: the payload goes to the
	// worker over HTTP, without a limit the model knows.
	RunnerHTTP Runner = iota
	// RunnerZooKeeper is remote: RemoteTaskRunner.announceTask writes the
	// task's JSON into a znode and refuses one larger than
	// druid.indexer.runner.maxZnodeBytes (RemoteTaskRunnerConfig, default
	// CuratorUtils.DEFAULT_MAX_ZNODE_BYTES, 512 KiB): "Length of raw bytes
	// for task too large".
	RunnerZooKeeper
	// RunnerKubernetes is the Kubernetes task runner passing the payload
	// in the pod's TASK_JSON environment variable, gzip-compressed and
	// base64-encoded (Base64Compression.compressBase64), which holds at
	// most DruidK8sConstants.MAX_ENV_VARIABLE_KBS, 130,048 bytes. Newer
	// runners put a larger payload into deep storage instead
	// (shouldUseDeepStorageForTaskPayload, apache/druid#14887); this one
	// is the runner without that way out.
	RunnerKubernetes
)

// The payload limits, in bytes.
const (
	maxZnodeBytes       = 512 * 1024
	maxEnvVariableBytes = 130_048
)

// check refuses a submission whose payload the runner cannot hand a
// worker.
func (r Runner) check(sub Submission) error {
	if r == RunnerHTTP {
		return nil
	}
	payload, err := taskPayload(sub)
	if err != nil {
		return nil // the task fails on its own when it runs
	}
	switch r {
	case RunnerZooKeeper:
		if len(payload) > maxZnodeBytes {
			return fmt.Errorf("Length of raw bytes for task too large[%d > %d]", len(payload), maxZnodeBytes)
		}
	case RunnerKubernetes:
		if n := compressedBase64(payload); n > maxEnvVariableBytes {
			return fmt.Errorf("the task's payload is %d bytes as TASK_JSON (gzip, base64), more than the %d an environment "+
				"variable holds (DruidK8sConstants.MAX_ENV_VARIABLE_KBS): the peon cannot start", n, maxEnvVariableBytes)
		}
	}
	return nil
}

// taskPayload is the JSON the Overlord stores and hands a worker for a
// submission. For an SQL task that is the MSQControllerTask the Broker
// makes of the statement: its querySpec, whose external datasource holds
// the EXTERN inputSource, inputFormat and signature, and, beside it, the
// statement itself (sqlQuery, "enables users, and the web console, to see
// the original SQL query") and its context (sqlQueryContext). So a
// statement's URIs are in the payload twice.
func taskPayload(sub Submission) ([]byte, error) {
	if sub.Task != nil {
		return sub.Task, nil
	}
	st, err := parseStatement(sub.Query)
	if err != nil {
		return nil, err
	}
	var columns []string
	for _, it := range st.items {
		columns = append(columns, it.name)
	}
	return json.Marshal(map[string]any{
		"type": "query_controller", "id": sub.ID,
		"spec": map[string]any{
			"query": map[string]any{
				"queryType": "scan",
				"dataSource": map[string]any{"type": "external", "inputSource": st.inputSource, "inputFormat": st.inputFormat,
					"signature": st.signature},
				"columns": columns, "context": sub.Context,
			},
			"destination": map[string]any{"type": "dataSource", "dataSource": st.dataSource},
		},
		"sqlQuery": sub.Query, "sqlQueryContext": sub.Context,
	})
}

// compressedBase64 is the length of Base64Compression.compressBase64(b).
func compressedBase64(b []byte) int {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return base64.StdEncoding.EncodedLen(buf.Len())
}
