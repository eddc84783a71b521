package handlers_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestHostileDataSourceName: a line feed (or another control character) in
// dataSource was written into the task spec and the statement, names
// Druid's DataSchema refuses (IdUtils.validateId), so the work handed out
// could never run. Every route that takes a dataSource now answers such a
// name with a 400 that says what Druid refuses, before it plans.
func TestHostileDataSourceName(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	for _, route := range []string{
		"/druid/task?" + q("table", "demo.orders", "timestampColumn", "order_ts").Encode(),
		"/druid/sql?" + q("table", "demo.orders", "timestampColumn", "order_ts").Encode(),
		"/changes?" + q("table", "demo.orders", "timeColumn", "order_ts").Encode(),
	} {
		for _, name := range []string{"orders\nx", "orders\r", "a\tb", "a\x01b", "a\u0085b", "a/b", ".orders", "a😢"} {
			path := route + "&" + q("dataSource", name).Encode()
			resp, body := srv.get(t, path)
			if resp.StatusCode != http.StatusBadRequest || errorCode(t, body) != "bad_request" || !strings.Contains(string(body), "Druid refuses") {
				t.Errorf("%s: %d %.300s, want 400 bad_request saying Druid refuses the name", path, resp.StatusCode, body)
			}
		}
		if resp, body := srv.get(t, route+"&dataSource=my+orders"); resp.StatusCode != http.StatusOK {
			t.Errorf("%s with dataSource %q: %d %.300s", route, "my orders", resp.StatusCode, body)
		}
	}
}
