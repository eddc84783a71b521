// Package e2e holds the tests that must cross HTTP: a Druid, real
// (tools/druid) or modelled (internal/druidsim), that reads the sidecar's
// specs, statements and row streams as it would in production; whole-system
// runs against real servers (SeaweedFS, PostgreSQL, Iceberg's REST catalog,
// the vending front: -tags integration); and the load test, which runs
// Druid-like and hostile clients against the real router on a real
// listener. Each test serves the sidecar with sidecartest; a test
// of one component's behaviour belongs in that component's package.
//
// The tiers:
//
//	go test ./e2e/                                          # the Druid model, the load test
//	go test -tags druid -run '^TestRealDruid' ./e2e/        # a real Druid (DRUID_OVERLORD, DRUID_BROKER)
//	go test -tags integration -run '^TestReal' ./e2e/       # real servers
package e2e
