package handlers_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/internal/golden"
	"github.com/druidiceberg/sidecar/sidecartest"
)

func TestDruidTask(t *testing.T) {
	srv := partitionedFixture(t).server(t)
	resp, body := srv.get(t, "/druid/task?table=fixtures.t&dataSource=events&timestampColumn=event_time&maxNumConcurrentSubTasks=4")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var task struct {
		Type string `json:"type"`
		Spec struct {
			DataSchema struct {
				DataSource    string `json:"dataSource"`
				TimestampSpec struct {
					Column string `json:"column"`
					Format string `json:"format"`
				} `json:"timestampSpec"`
				DimensionsSpec  map[string]any `json:"dimensionsSpec"`
				GranularitySpec map[string]any `json:"granularitySpec"`
			} `json:"dataSchema"`
			IOConfig struct {
				Type        string `json:"type"`
				InputSource struct {
					Type string   `json:"type"`
					URIs []string `json:"uris"`
				} `json:"inputSource"`
				InputFormat map[string]any `json:"inputFormat"`
			} `json:"ioConfig"`
			TuningConfig struct {
				Type                     string `json:"type"`
				MaxNumConcurrentSubTasks int    `json:"maxNumConcurrentSubTasks"`
			} `json:"tuningConfig"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(body, &task); err != nil {
		t.Fatal(err)
	}
	sp := task.Spec
	if task.Type != "index_parallel" || sp.DataSchema.DataSource != "events" || sp.DataSchema.TimestampSpec.Column != "event_time" ||
		sp.DataSchema.TimestampSpec.Format != "millis" || sp.IOConfig.Type != "index_parallel" || sp.IOConfig.InputSource.Type != "http" ||
		len(sp.IOConfig.InputSource.URIs) == 0 || sp.IOConfig.InputFormat["type"] != "json" || sp.TuningConfig.Type != "index_parallel" ||
		sp.TuningConfig.MaxNumConcurrentSubTasks != 4 || sp.DataSchema.DimensionsSpec == nil || sp.DataSchema.GranularitySpec == nil {
		t.Fatalf("task misses a field Druid requires: %s", body)
	}
	golden.Check(t, "druid_task.json", sidecartest.NormalizeURIs(srv.URL, body))

	resp, body = srv.post(t, "/splits", druidDocsSpec)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	// The splits list names the fixture's data files, whose paths are
	// stable; the tokens and the base URL are normalised.
	golden.Check(t, "druid_docs_spec_answer.json", sidecartest.NormalizeURIs(srv.URL, body))

	for _, tc := range []struct{ path, want string }{
		{"/druid/task?table=fixtures.t&timestampColumn=event_time", "dataSource is required"},
		{"/druid/task?table=fixtures.t&dataSource=e", "timestampColumn is required"},
		{"/druid/task?table=fixtures.t&dataSource=e&timestampColumn=user", "want a timestamp"},
		{"/druid/task?table=fixtures.t&dataSource=e&timestampColumn=nope", "not a column"},
		{"/druid/task?table=fixtures.t&dataSource=e&timestampColumn=event_time&segmentGranularity=fortnight", "segmentGranularity"},
		{"/druid/sql?table=fixtures.t&dataSource=e&timestampColumn=event_time&statement=upsert", "want insert or replace"},
		{"/druid/sql?table=fixtures.t&dataSource=e&timestampColumn=event_time&overwrite=all", "goes with statement=replace"},
		{"/druid/sql?table=fixtures.t&dataSource=e&timestampColumn=event_time&statement=replace&overwrite=yesterday", "START/END"},
	} {
		resp, body := srv.get(t, tc.path)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s; want 400 containing %q", tc.path, resp.StatusCode, body, tc.want)
		}
	}
}

func TestDruidSQL(t *testing.T) {
	srv := partitionedFixture(t).server(t)
	for _, tc := range []struct{ name, query string }{
		{"msq_insert.json", "statement=insert"},
		{"msq_replace_interval.json", "statement=replace&overwrite=2020-01-01T00:00:00Z/2020-01-02T00:00:00Z&partitionedBy=hour"},
		{"msq_replace_all.json", "statement=replace&columns=id,event_time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := srv.get(t, "/druid/sql?table=fixtures.t&dataSource=events&timestampColumn=event_time&"+tc.query)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			var task struct {
				Query   string         `json:"query"`
				Context map[string]any `json:"context"`
			}
			if err := json.Unmarshal(body, &task); err != nil || task.Query == "" {
				t.Fatalf("%v: %s", err, body)
			}
			golden.Check(t, tc.name, sidecartest.NormalizeURIs(srv.URL, body))
		})
	}
}

// TestEmptyPlanSaysWhy: an answer over a plan without files says why there
// is nothing to ingest, since Druid refuses an http inputSource without
// URIs (the planner marks the plan empty; the answer words it).
func TestEmptyPlanSaysWhy(t *testing.T) {
	t.Parallel()
	srv := partitionedFixture(t).server(t)
	resp, body := srv.get(t, "/druid/sql?table=fixtures.t&dataSource=events&timestampColumn=event_time&statement=replace&overwrite=1990-01-01/1990-01-02")
	var task struct{ Warnings []string }
	if err := json.Unmarshal(body, &task); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if len(task.Warnings) == 0 || !strings.Contains(task.Warnings[0], "nothing to ingest") {
		t.Fatalf("warnings %q", task.Warnings)
	}
}
