package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// syncState is the state file of sync: per datasource, the snapshot whose
// rows Druid holds.
type syncState struct {
	Version     int                    `json:"version"`
	DataSources map[string]*checkpoint `json:"dataSources"`
}

// checkpoint is what Druid holds of one datasource. It is valid for a
// pair only while table, catalog, time column (or constant time) and
// granularity are the pair's: another pair starts over with an initial
// load.
type checkpoint struct {
	Table        string `json:"table"`
	Catalog      string `json:"catalog,omitempty"`
	TimeColumn   string `json:"timeColumn"`
	ConstantTime string `json:"constantTime,omitempty"`
	Granularity  string `json:"granularity"`
	// Loaded says the datasource holds the rows of SnapshotID (null for a
	// table that had no snapshot when it was loaded).
	Loaded     bool   `json:"loaded"`
	SnapshotID *int64 `json:"snapshotId"`
	// Pending are the intervals (or ALL) of work submitted after
	// SnapshotID was applied and not known to have succeeded everywhere:
	// written before the tasks are submitted, cleared when all succeeded.
	// Druid may hold them at any state, so the next sync re-ingests them
	// whatever the snapshots say, unless Tasks says Druid did the work.
	Pending []string `json:"pending,omitempty"`
	// Target is the snapshot the tasks of Tasks ingest (null for a table
	// that had no snapshot).
	Target *int64 `json:"target,omitempty"`
	// Tasks are, per pending interval, the ids of the Druid tasks
	// submitted for it toward Target, the latest last: each chosen by
	// sync and written before the task is submitted, so that a sync
	// killed after submitting can ask Druid how its work ended.
	Tasks   map[string][]string `json:"tasks,omitempty"`
	Updated string              `json:"updated"`
}

// stateVersion is the state file's format: 2 adds target and tasks. A
// version 1 file reads as one without task ids (its pending work is
// redone whole) and is written back as version 2.
const stateVersion = 2

// matches says whether the checkpoint was made for the pair.
func (c *checkpoint) matches(p syncPair) bool {
	return c != nil && c.Table == p.Table && c.Catalog == p.Catalog && c.TimeColumn == p.TimeColumn && c.ConstantTime == p.ConstantTime &&
		c.Granularity == p.Granularity
}

// readState reads the state file; a missing file is an empty state. A file
// that does not parse is an error, never a silent start over.
func readState(path string) (syncState, error) {
	st := syncState{Version: stateVersion, DataSources: map[string]*checkpoint{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read state file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return st, fmt.Errorf("state file %s does not parse (move it away to start over with a full load): %w", path, err)
	}
	if st.Version != 1 && st.Version != stateVersion {
		return st, fmt.Errorf("state file %s has version %d, want 1 or %d (a newer sidecar wrote it?)", path, st.Version, stateVersion)
	}
	st.Version = stateVersion
	if st.DataSources == nil {
		st.DataSources = map[string]*checkpoint{}
	}
	return st, nil
}

// writeState replaces the state file atomically: a temporary file in the
// same folder, synced, renamed over the old one, and the folder synced, so
// a crash leaves the old state or the new one, never a mix.
func writeState(path string, st syncState) (err error) {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write state file %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("sync state file %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close state file %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace state file %s: %w", path, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open state folder %s: %w", dir, err)
	}
	if err := d.Sync(); err != nil {
		_ = d.Close()
		return fmt.Errorf("sync state folder %s: %w", dir, err)
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("close state folder %s: %w", dir, err)
	}
	return nil
}

// union adds to a the elements of b it lacks, keeping a's order.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// maxInclude is the most include intervals GET /changes takes.
const maxInclude = 1000

// coalesce returns intervals (START/END in ISO 8601, or ALL) as at most
// limit intervals that cover them: ALL when one is ALL, else sorted, and
// runs of consecutive ones each joined into one that spans them
// (re-ingesting the time between them is more work, never a wrong answer).
// An interval it cannot read is kept as it is, for the sidecar to refuse.
func coalesce(intervals []string, limit int) []string {
	if len(intervals) <= limit {
		return intervals
	}
	type span struct{ start, end time.Time }
	var spans []span
	var other []string
	for _, iv := range intervals {
		if strings.EqualFold(iv, "ALL") {
			return []string{"ALL"}
		}
		a, b, ok := strings.Cut(iv, "/")
		start, err1 := time.Parse(time.RFC3339Nano, a)
		end, err2 := time.Parse(time.RFC3339Nano, b)
		if !ok || err1 != nil || err2 != nil {
			other = append(other, iv)
			continue
		}
		spans = append(spans, span{start, end})
	}
	slices.SortFunc(spans, func(x, y span) int { return x.start.Compare(y.start) })
	room := max(1, limit-len(other))
	per := (len(spans) + room - 1) / room
	out := other
	for i := 0; i < len(spans); i += per {
		group := spans[i:min(i+per, len(spans))]
		end := group[0].end
		for _, g := range group {
			if g.end.After(end) {
				end = g.end
			}
		}
		const layout = "2006-01-02T15:04:05.000Z"
		out = append(out, group[0].start.UTC().Format(layout)+"/"+end.UTC().Format(layout))
	}
	return out
}
