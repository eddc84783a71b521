package handlers_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestProjection: columns= narrows the rows to those keys, in schema order,
// whatever order the request names them in.
func TestProjection(t *testing.T) {
	srv := partitionedFixture(t).server(t)
	all := srv.rows(t, srv.plan(t, q("table", "fixtures.t")))
	p := srv.plan(t, q("table", "fixtures.t", "columns", "event_time,id"))
	got := srv.rows(t, p)
	if len(got) != len(all) || len(got) == 0 {
		t.Fatalf("projection gave %d rows, the full read %d", len(got), len(all))
	}
	for i, line := range got {
		if !strings.HasPrefix(line, `{"id":`) || !strings.Contains(line, `,"event_time":`) || strings.Count(line, `":`) != 2 {
			t.Fatalf("row %q: want exactly id then event_time", line)
		}
		var full, proj map[string]any
		if err := json.Unmarshal([]byte(all[i]), &full); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(line), &proj); err != nil {
			t.Fatal(err)
		}
		if proj["id"] != full["id"] || proj["event_time"] != full["event_time"] {
			t.Fatalf("projected row %s differs from %s", line, all[i])
		}
	}
}
