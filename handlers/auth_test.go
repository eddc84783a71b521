package handlers_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/testlog"
)

func TestBasicAuth(t *testing.T) {
	const password = "s3cret-Pa55:word"
	f := positionalFixture(t)
	var logs testlog.Buffer
	srv := newServer(t, sidecatalog.Config{
		Type:   "static",
		Tables: map[string]string{"fixtures.t": filepath.Join(f.Dir, f.Metadata)},
	}, f.mappings(), func(c *handlers.Config) {
		c.BasicAuth = []handlers.Credential{{Username: "druid", Password: password}}
		c.DruidPasswordEnv = "SIDECAR_HTTP_PASSWORD"
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})

	do := func(path, user, pass string) (*http.Response, []byte) {
		t.Helper()
		if user == "" {
			return srv.get(t, path)
		}
		return srv.get(t, path, "Authorization", basicAuth(user, pass))
	}

	for _, tc := range []struct{ name, user, pass string }{
		{"no credentials", "", ""},
		{"wrong password", "druid", password + "x"},
		{"wrong user", "admin", password},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do("/splits?table=fixtures.t", tc.user, tc.pass)
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
				t.Fatalf("%d, WWW-Authenticate %q: %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
			}
			if errorCode(t, body) != "unauthorized" {
				t.Fatalf("body %s", body)
			}
		})
	}

	resp, body := do("/splits?table=fixtures.t", "druid", password)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("valid credentials: %d %s", resp.StatusCode, body)
	}
	var p struct {
		InputSource struct {
			URIs     []string `json:"uris"`
			Username string   `json:"httpAuthenticationUsername"`
			Password struct {
				Type     string `json:"type"`
				Variable string `json:"variable"`
			} `json:"httpAuthenticationPassword"`
		} `json:"inputSource"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	if p.InputSource.Username != "druid" || p.InputSource.Password.Type != "environment" || p.InputSource.Password.Variable != "SIDECAR_HTTP_PASSWORD" {
		t.Fatalf("inputSource credentials %+v", p.InputSource)
	}
	rows := strings.TrimPrefix(p.InputSource.URIs[0], srv.URL)
	if resp, _ := do(rows, "", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("rows without credentials: %d", resp.StatusCode)
	}
	if resp, _ := do(rows, "druid", password); resp.StatusCode != http.StatusOK {
		t.Fatalf("rows with credentials: %d", resp.StatusCode)
	}
	for _, open := range []string{"/healthz", "/readyz", "/metrics"} {
		if resp, _ := do(open, "", ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s must not need credentials: %d", open, resp.StatusCode)
		}
	}
	if strings.Contains(string(body), password) || strings.Contains(logs.String(), password) {
		t.Fatal("the password appears in an answer or a log line")
	}
	if !strings.Contains(logs.String(), `"status":401`) {
		t.Fatalf("the 401s were not logged: %s", logs.String())
	}
}
