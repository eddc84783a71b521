package javaoracle

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// Compare fails t unless got, the rows reader read at where (a commit or a
// snapshot of h), are want, Iceberg Java's, as multisets of values
// (tablegen.CanonicalRows). The failure names the seed and format version, the rows
// only one side has, every commit of h, and how to run the seed alone:
// rerun, a go test command, with -java-first-seed and -histories 1.
func (h History) Compare(t testing.TB, reader, where string, got []string, want []json.RawMessage, rerun string) {
	t.Helper()
	w := make([]string, len(want))
	for i, r := range want {
		w[i] = string(r)
	}
	missing, extra, err := tablegen.RowDiff(got, w)
	if err != nil {
		t.Fatalf("seed %d, %s: %v", h.Seed, where, err)
	}
	if len(missing)+len(extra) > 0 {
		t.Fatalf("seed %d (format version %d), %s: %s's rows differ from Iceberg Java's\n"+
			"only Iceberg Java (%d):\n  %s\nonly %s (%d):\n  %s\nthe history:\n%s"+
			"this seed alone: %s -args -java-first-seed %d -histories 1",
			h.Seed, h.FormatVersion, where, reader, len(missing), strings.Join(missing, "\n  "),
			reader, len(extra), strings.Join(extra, "\n  "), h.Steps(), rerun, h.Seed)
	}
}
