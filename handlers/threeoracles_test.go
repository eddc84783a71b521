package handlers_test

import (
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// historyLayouts are the time columns and partition layouts the random
// tablegen histories cycle through.
var historyLayouts = []struct {
	time   tablegen.TimeKind
	layout tablegen.Layout
}{
	{tablegen.TimeTimestamp, tablegen.LayoutDay},
	{tablegen.TimeTimestampTz, tablegen.LayoutCategory},
	{tablegen.TimeDate, tablegen.LayoutUnpartitioned},
	{tablegen.TimeLongMillis, tablegen.LayoutCategory},
	{tablegen.TimeTimestamp, tablegen.LayoutUnpartitioned},
}

// historyOptions are the options of the random history i: seed i+1, the
// layout i of historyLayouts (cycling).
func historyOptions(i int) tablegen.HistoryOptions {
	l := historyLayouts[i%len(historyLayouts)]
	return tablegen.HistoryOptions{Seed: uint64(i + 1), Time: l.time, Layout: l.layout}
}
