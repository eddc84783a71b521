package handlers_test

import (
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// historyOptions are the options of the random history i
// (tablegen.NthHistory), which the integration tier writes through
// Iceberg's REST catalog server as the reader's TestThreeOracles writes
// them locally.
func historyOptions(i int) tablegen.HistoryOptions { return tablegen.NthHistory(i) }
