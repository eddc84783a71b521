package handlers_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// druidDocsSpec is the iceberg inputSource of Druid's documentation, with
// the fixture's namespace and table: catalog and warehouse settings and all.
const druidDocsSpec = `{
  "type": "iceberg",
  "tableName": "t",
  "namespace": "fixtures",
  "icebergCatalog": {
    "type": "hive",
    "warehousePath": "hdfs://warehouse/path",
    "catalogUri": "thrift://hive-metastore.x.com:8970",
    "catalogProperties": {"hive.metastore.connect.retries": "1", "hive.metastore.execute.setugi": "false"}
  },
  "icebergFilter": {
    "type": "interval",
    "filterColumn": "event_time",
    "intervals": ["2020-01-01T00:00:00.000Z/2020-01-02T00:00:00.000Z"]
  },
  "warehouseSource": {"type": "hdfs"},
  "snapshotTime": "2099-01-01T00:00:00.000Z"
}`

func (s *testServer) post(t *testing.T, path, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := s.Client().Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestPostDruidSpec(t *testing.T) {
	srv := partitionedFixture(t).server(t)
	resp, body := srv.post(t, "/splits", druidDocsSpec)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var got struct {
		plan
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.InputSource.Type != "http" || len(got.InputSource.URIs) == 0 || got.Mode != "v2" {
		t.Fatalf("answer %s", body)
	}
	joined := strings.Join(got.Warnings, "\n")
	if !strings.Contains(joined, "icebergCatalog is ignored") || !strings.Contains(joined, "warehouseSource is ignored") {
		t.Fatalf("warnings %q", got.Warnings)
	}
	if bytes.Contains(body, []byte("hive-metastore")) {
		t.Fatal("the answer echoes the ignored catalog")
	}
	// The same table asked for with GET gives the same splits.
	get := srv.plan(t, q("table", "fixtures.t", "icebergFilter", `{"type":"interval","filterColumn":"event_time","intervals":["2020-01-01T00:00:00.000Z/2020-01-02T00:00:00.000Z"]}`,
		"snapshotTime", "2099-01-01T00:00:00Z"))
	if strings.Join(get.InputSource.URIs, " ") != strings.Join(got.InputSource.URIs, " ") {
		t.Fatal("POST and GET planned different splits")
	}

	// What Druid's mapper ignores is ignored here too, and named; Druid's
	// DateTime forms all plan (epoch millis, Joda's ISO forms, null).
	for _, tc := range []struct{ name, body, warning string }{
		{"unknown field", `{"type":"iceberg","namespace":"fixtures","tableName":"t","tableNmae":"x"}`, "tableNmae is ignored"},
		{"a newer Druid's property", `{"type":"iceberg","namespace":"fixtures","tableName":"t","v2DeleteHandling":"apply"}`,
			"v2DeleteHandling is ignored: the sidecar always applies the table's delete files"},
		{"an unknown filter field", `{"type":"iceberg","namespace":"fixtures","tableName":"t","icebergFilter":{"type":"equals","filterColumn":"id","filterValue":6,"extra":1}}`,
			"icebergFilter.extra is ignored"},
		{"epoch millis", `{"type":"iceberg","namespace":"fixtures","tableName":"t","snapshotTime":4070908800000}`, ""},
		{"a Joda offset", `{"type":"iceberg","namespace":"fixtures","tableName":"t","snapshotTime":"2099-01-01T00:00+0000"}`, ""},
		{"a month", `{"type":"iceberg","namespace":"fixtures","tableName":"t","snapshotTime":"2099-01"}`, ""},
		{"null", `{"type":"iceberg","namespace":"fixtures","tableName":"t","snapshotTime":null}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := srv.post(t, "/splits", tc.body)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), tc.warning) {
				t.Fatalf("%d %s; want 200 warning %q", resp.StatusCode, body, tc.warning)
			}
		})
	}

	for _, tc := range []struct {
		name, body, want string
		status           int
	}{
		{"wrong type", `{"type":"iceberg","namespace":"fixtures","tableName":7}`, "tableName", 400},
		{"snapshotTime neither millis nor ISO", `{"type":"iceberg","namespace":"fixtures","tableName":"t","snapshotTime":"yesterday"}`, "snapshotTime", 400},
		{"missing table", `{"type":"iceberg","namespace":"fixtures"}`, "tableName are required", 400},
		{"other input source", `{"type":"s3","namespace":"fixtures","tableName":"t"}`, "want iceberg", 400},
		{"bad filter", `{"type":"iceberg","namespace":"fixtures","tableName":"t","icebergFilter":{"type":"equals","filterColumn":"nope","filterValue":1}}`, `no column \"nope\"`, 400},
		{"bad residual mode", `{"type":"iceberg","namespace":"fixtures","tableName":"t","residualFilterMode":"loud"}`, "residualFilterMode", 400},
		{"two objects", `{"type":"iceberg","namespace":"fixtures","tableName":"t"} {}`, "one JSON object", 400},
		{"residual refused", `{"type":"iceberg","namespace":"fixtures","tableName":"t","residualFilterMode":"fail","icebergFilter":{"type":"equals","filterColumn":"id","filterValue":6}}`, "residualFilterMode=fail", 409},
		{"too large", `{"type":"iceberg","namespace":"` + strings.Repeat("x", 2<<20) + `"}`, "larger than", 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := srv.post(t, "/splits", tc.body)
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
				t.Fatalf("%d %s; want %d containing %s", resp.StatusCode, body, tc.status, tc.want)
			}
			errorCode(t, body)
		})
	}
}
