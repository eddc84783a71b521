package handlers_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"gopkg.in/yaml.v3"

	"github.com/druidiceberg/sidecar/api"
	"github.com/druidiceberg/sidecar/handlers"
)

// TestRoutesMatchOpenAPI walks the live chi router and holds every route
// against api/openapi.yaml, both ways.
func TestRoutesMatchOpenAPI(t *testing.T) {
	var doc struct {
		OpenAPI string                    `yaml:"openapi"`
		Paths   map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatalf("api/openapi.yaml: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi %q, want 3.1", doc.OpenAPI)
	}
	var inSpec []string
	for path, ops := range doc.Paths {
		for method := range ops {
			inSpec = append(inSpec, strings.ToUpper(method)+" "+path)
		}
	}

	router := handlers.New(handlers.Config{Gatherer: nil})
	routes, ok := router.(chi.Routes)
	if !ok {
		t.Fatalf("router is %T, not chi.Routes", router)
	}
	var live []string
	err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		live = append(live, method+" "+route)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// /metrics exists only when a Gatherer is wired; main always wires one.
	live = append(live, "GET /metrics")

	slices.Sort(inSpec)
	slices.Sort(live)
	live = slices.Compact(live)
	if !slices.Equal(inSpec, live) {
		t.Fatalf("routes and api/openapi.yaml differ\n live: %v\n spec: %v", live, inSpec)
	}
}
