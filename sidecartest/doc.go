// Package sidecartest serves the sidecar's real router to tests and reads
// what it answers, as net/http/httptest serves a handler: a Server wires a
// catalog, the planner, the changes differ and the reader as cmd/sidecar
// does, on an httptest server with a private metrics registry, and its
// methods plan, read row streams and ask for Druid's specs and changes over
// HTTP, checking the framing of what comes back.
//
// Beside the server it holds what several test packages share: the
// engine-written fixture tables and their expected rows, a TestMain that
// removes the warehouses written once per test binary (Main), the harness that holds a Druid
// datasource to a table's rows (the model of internal/druidsim, and a real
// Druid with CheckModel), the real servers of the integration tier
// (SeaweedFS, PostgreSQL), a client that reads as Druid's http input
// source does, and the hostile clients and benchmark tables of the load
// tests.
//
// Only tests import it; the binary never links it (cmd/sidecar's
// TestBinaryLinksNoTestOnlyPackage).
package sidecartest
