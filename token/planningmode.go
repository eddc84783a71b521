package token

import (
	"fmt"
	"slices"
)

// ScanPlanning says where a catalog's scans are planned: by the sidecar
// from the table's manifests (local), by the catalog's server through the
// REST spec's planning endpoints (remote), or by the server when it
// advertises them (auto). The configuration (cmd/sidecar) parses it, the
// catalog (catalog) and the planner (splits) act on it.
type ScanPlanning string

// The scan-planning modes, as iceberg-go's table.ScanPlanningMode names
// them.
const (
	ScanPlanningAuto   ScanPlanning = "auto"
	ScanPlanningLocal  ScanPlanning = "local"
	ScanPlanningRemote ScanPlanning = "remote"
)

// ScanPlanningModes are the modes ParseScanPlanning accepts.
var ScanPlanningModes = []ScanPlanning{ScanPlanningAuto, ScanPlanningLocal, ScanPlanningRemote}

// ParseScanPlanning parses a mode; the empty string is auto.
func ParseScanPlanning(s string) (ScanPlanning, error) {
	if s == "" {
		return ScanPlanningAuto, nil
	}
	m := ScanPlanning(s)
	if !slices.Contains(ScanPlanningModes, m) {
		return "", fmt.Errorf("scan planning %q: want auto, local or remote", s)
	}
	return m, nil
}

// PlanMeter charges what a plan on a catalog's server holds to the plan's
// memory, before it is held: the bytes of each of the server's answers as
// they arrive, before iceberg-go parses the answer, and then the answer's
// entries in place of its bytes. An error ends the plan. The planner
// (splits) makes it from the memory budget; the catalog (catalog)
// calls it from the transport its REST client reads the answers through.
type PlanMeter interface {
	// Answer charges the answer being read, of which read bytes have
	// arrived so far; the next answer starts again from its first bytes.
	Answer(read int64) error
	// Entries charges n more entries (data files, delete files and plan
	// tasks) of an answer that was read, before they are decoded; the
	// answer's bytes are no longer charged.
	Entries(n int64) error
}
