package split

import (
	"fmt"
	"slices"
)

// ScanPlanning says where a catalog's scans are planned: by the sidecar
// from the table's manifests (local), by the catalog's server through the
// REST spec's planning endpoints (remote), or by the server when it
// advertises them (auto). The configuration (cmd/sidecar) parses it, the
// catalog (splits/catalog) and the planner (splits) act on it.
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
