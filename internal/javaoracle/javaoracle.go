// Package javaoracle runs Iceberg's reference implementation, Iceberg Java,
// as a second oracle: tools/icebergjava writes random table histories with
// it and records, for every commit and every snapshot, the rows Iceberg
// Java's own generic reader returns, encoded by the sidecar's value contract
// (docs/values.md). Only tests import this package.
//
// The writer is built with Maven once and cached (tools/icebergjava/build.sh);
// a machine without java or mvn skips the tests that need it, and under CI
// fails them (internal/testenv).
package javaoracle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/internal/testenv"
)

// History is one random table history as Iceberg Java wrote and read it.
type History struct {
	Seed          int64    `json:"seed"`
	FormatVersion int      `json:"formatVersion"`
	Commits       []Commit `json:"commits"`
	// Snapshots are every snapshot of the final table, read by id (time
	// travel, under the schema the snapshot was written with).
	Snapshots []Snapshot `json:"snapshots"`
}

// Commit is one commit of a history: what it did, the metadata file it
// wrote, and the rows of the table's current snapshot under the table's
// schema then.
type Commit struct {
	What       string            `json:"what"`
	Metadata   string            `json:"metadata"`
	SnapshotID *int64            `json:"snapshotId"`
	Rows       []json.RawMessage `json:"rows"`
}

// Snapshot is the rows Iceberg Java reads at one snapshot.
type Snapshot struct {
	SnapshotID int64             `json:"snapshotId"`
	Rows       []json.RawMessage `json:"rows"`
}

// MetadataColumns are the metadata columns every row of a history carries:
// _file and _pos, and on format version 3 the row-lineage columns.
func (h History) MetadataColumns() []string {
	if h.FormatVersion >= 3 {
		return []string{"_row_id", "_last_updated_sequence_number", "_file", "_pos"}
	}
	return []string{"_file", "_pos"}
}

// Steps lists what every commit did, one a line, for a failure message.
func (h History) Steps() string {
	var b strings.Builder
	for i, c := range h.Commits {
		fmt.Fprintf(&b, "  %d: %s\n", i, c.What)
	}
	return b.String()
}

// Writer returns the folder of the built writer's jars, building it on the
// first call of the process (and only where the cache lacks it). Without
// java or mvn it calls testenv.Missing.
func Writer(t testing.TB) string {
	t.Helper()
	return testenv.JavaTool(t, "icebergjava", "the Iceberg Java history writer")
}

// LongDefault writes the long-default scenario under dir: a format version
// 3 table of two rows given a long column whose initial-default, 2^53 + 1,
// a float64 cannot hold.
func LongDefault(t testing.TB, dir string) History {
	t.Helper()
	run(t, "the long-default scenario", dir, "long-default")
	return read(t, filepath.Join(dir, "long-default"))
}

// Write writes the histories of seeds first to first+count-1 under dir, one
// folder each, in one Java process, and returns them in seed order.
func Write(t testing.TB, dir string, first int64, count int) []History {
	t.Helper()
	run(t, fmt.Sprintf("seeds %d to %d", first, first+int64(count)-1), dir, strconv.FormatInt(first, 10), strconv.Itoa(count))
	out := make([]History, 0, count)
	for seed := first; seed < first+int64(count); seed++ {
		out = append(out, read(t, filepath.Join(dir, "h"+strconv.FormatInt(seed, 10))))
	}
	return out
}

// Table is what Iceberg Java's generic reader reads in a table another
// writer wrote: every snapshot, or the error it failed with.
type Table struct {
	Metadata  string     `json:"metadata"`
	Error     string     `json:"error"`
	Snapshots []Snapshot `json:"snapshots"`
}

// Read reads every snapshot of the tables at the given metadata files with
// Iceberg Java's generic reader (table columns only, each snapshot under
// its own schema), in one Java process; out is a file it may write.
func Read(t testing.TB, out string, metadata []string) []Table {
	t.Helper()
	run(t, fmt.Sprintf("reading %d tables", len(metadata)), append([]string{"read", out}, metadata...)...)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("read Iceberg Java's rows: %v", err)
	}
	var r struct {
		Tables []Table `json:"tables"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("Iceberg Java's rows: %v", err)
	}
	return r.Tables
}

// run runs the writer with args; what names the run in a failure.
func run(t testing.TB, what string, args ...string) {
	t.Helper()
	jars := Writer(t)
	var stderr bytes.Buffer
	cmd := testenv.JavaCommand(jars, "sidecar.icebergjava.Main", args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("Iceberg Java history writer, %s: %v\n%s", what, err, stderr.Bytes())
	}
}

// read reads the history.json of the history in dir.
func read(t testing.TB, dir string) History {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "history.json"))
	if err != nil {
		t.Fatalf("read history: %v", err)
	}
	var h History
	if err := json.Unmarshal(data, &h); err != nil {
		t.Fatalf("history %s: %v", dir, err)
	}
	return h
}
