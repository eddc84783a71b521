package splits

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog/rest"
)

// BenchmarkPlanAnswerDecode decodes a catalog server's plan answer of
// 20,000 file scan tasks as iceberg-go's REST client does (a json.Decoder
// over the body into rest.PlanTableScanResponse), bare and with column
// statistics, and reports what it allocates and what the decoded answer
// keeps, per byte of the answer: the measure of PlanAnswerBytesPerByte.
func BenchmarkPlanAnswerDecode(b *testing.B) {
	for _, stats := range []bool{false, true} {
		b.Run(fmt.Sprintf("stats=%v", stats), func(b *testing.B) {
			answer := planAnswer(20_000, stats)
			var allocated, kept float64
			for b.Loop() {
				runtime.GC()
				var before, after, live runtime.MemStats
				runtime.ReadMemStats(&before)
				var resp rest.PlanTableScanResponse
				if err := json.NewDecoder(bytes.NewReader(answer)).Decode(&resp); err != nil {
					b.Fatal(err)
				}
				runtime.ReadMemStats(&after)
				runtime.GC()
				runtime.ReadMemStats(&live)
				runtime.KeepAlive(resp)
				allocated = float64(after.TotalAlloc-before.TotalAlloc) / float64(len(answer))
				kept = float64(int64(live.HeapAlloc)-int64(before.HeapAlloc)) / float64(len(answer))
			}
			b.ReportMetric(allocated, "alloc-bytes/answer-byte")
			b.ReportMetric(kept, "kept-bytes/answer-byte")
			b.ReportMetric(float64(len(answer))/20_000, "answer-bytes/task")
		})
	}
}

// planAnswer is a completed plan answer of n file scan tasks, each of a
// data file of its own, with or without the column statistics Iceberg's
// server sends.
func planAnswer(n int, stats bool) []byte {
	var sb strings.Builder
	sb.WriteString(`{"status":"completed","plan-id":"p","file-scan-tasks":[`)
	for i := range n {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"data-file":{"spec-id":0,"partition":[19783],"content":"data","file-path":`+
			`"file:/w/hist/t/data/ts_day=2024-03-01/00000-%d-0c3ee2e7-1b49-4b8e-9c1f-5d1d3f1f0c11.parquet",`+
			`"file-format":"parquet","file-size-in-bytes":1234,"record-count":12`, i)
		if stats {
			sb.WriteString(`,"column-sizes":{"keys":[1,2,3,4],"values":[50,60,70,80]},` +
				`"value-counts":{"keys":[1,2,3,4],"values":[12,12,12,12]},` +
				`"null-value-counts":{"keys":[1,2,3,4],"values":[0,0,0,0]},` +
				`"lower-bounds":{"keys":[1,2,3,4],"values":["0100000000000000","00a0","63","0a00000000000000"]},` +
				`"upper-bounds":{"keys":[1,2,3,4],"values":["0c00000000000000","00a0","63","7800000000000000"]}`)
		}
		sb.WriteString(`},"delete-file-references":[0]}`)
	}
	sb.WriteString(`],"delete-files":[{"spec-id":0,"partition":[],"content":"position-deletes","file-path":"d.parquet",` +
		`"file-format":"parquet","file-size-in-bytes":1,"record-count":1}]}`)
	return []byte(sb.String())
}
