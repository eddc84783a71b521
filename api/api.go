// Package api holds the sidecar's HTTP contract, api/openapi.yaml, embedded so
// the server can serve it at /openapi.yaml and tests can hold the live router
// against it.
package api

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document of the HTTP API.
//
//go:embed openapi.yaml
var OpenAPI []byte
