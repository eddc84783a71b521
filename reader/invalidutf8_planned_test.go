package reader_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/token"
)

// TestInvalidUTF8Counted: bytes that are not UTF-8, written as text
// (binaryAsString), are replaced with U+FFFD and counted in the reader's
// sidecar_invalid_utf8_values_total; as base64 they are neither.
func TestInvalidUTF8Counted(t *testing.T) {
	dir, _ := sharedScenarios(t)
	reg := prometheus.NewRegistry()
	pr := localPlanned(t, dir)
	pr.Reader = reader.New(reg)
	invalid := func() float64 {
		t.Helper()
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() == "sidecar_invalid_utf8_values_total" {
				return f.GetMetric()[0].GetCounter().GetValue()
			}
		}
		t.Fatal("the reader registers no sidecar_invalid_utf8_values_total")
		return 0
	}
	pr.Rows(t, pr.Plan(t, rowsRequest("scenarios.no_deletes", 0)))
	if n := invalid(); n != 0 {
		t.Fatalf("base64 binaries counted %v invalid UTF-8 values", n)
	}
	req := rowsRequest("scenarios.no_deletes", 0)
	req.Encoding = token.Encoding{BinaryAsString: true}
	replaced := 0
	for _, l := range pr.Rows(t, pr.Plan(t, req)) {
		var row map[string]any
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatal(err)
		}
		if p, ok := row["payload"].(string); ok && strings.Contains(p, "\ufffd") {
			replaced++
		}
	}
	if n := invalid(); replaced == 0 || n < float64(replaced) {
		t.Fatalf("%d rows hold U+FFFD but the metric counts %v", replaced, n)
	}
}
