package sidecartest

import (
	"testing"

	"github.com/druidiceberg/sidecar/internal/sharedtables"
)

// Main is sharedtables.Main: it runs the tests of m with
// testenv.CollectLess, removes the shared warehouses
// (sharedtables.Warehouse), and returns the exit code: a package whose
// tests share warehouses has
//
//	func TestMain(m *testing.M) { os.Exit(sidecartest.Main(m)) }
func Main(m *testing.M) int { return sharedtables.Main(m) }
