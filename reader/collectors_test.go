package reader_test

import (
	"context"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/token"
)

// TestReaderMetrics runs packed splits with positional deletes through two
// Readers that share a delete cache and a registry, as a reader per
// catalog does, and holds the registry's series to the streams' own Stats
// and the cache's; a split opened and never run (a HEAD) counts nothing.
// The scrape passes promtool.
func TestReaderMetrics(t *testing.T) {
	dir := t.TempDir()
	ss, want := packedWideDeletes(t, dir, 4, 10, 3, 0, 0)
	reg := prometheus.NewRegistry()
	cache := deletes.NewCache(64<<20, reg)
	readers := []fsReader{
		{Reader: reader.New(reg, reader.WithDeleteCache(cache)), fs: testFS(dir)},
		{Reader: reader.New(reg, reader.WithDeleteCache(cache)), fs: testFS(dir)},
	}
	var read, emitted int64
	loads := map[token.DeleteKind]int64{}
	deleted := map[token.DeleteKind]int64{}
	for i, r := range readers {
		got, st := readParts(t, r, ss[2*i:2*i+2], tableOf(idSchema))
		if len(got) != len(want[2*i])+len(want[2*i+1]) {
			t.Fatalf("split %d: %d rows, want %d", i, len(got), len(want[2*i])+len(want[2*i+1]))
		}
		read, emitted = read+st.RowsRead, emitted+st.RowsEmitted
		for k, n := range st.DeleteFilesLoaded {
			loads[k] += n
		}
		for k, n := range st.RowsDeleted {
			deleted[k] += n
		}
	}
	// Opened, never run: its delete file is loaded, and not counted.
	head := fsReader{Reader: reader.New(reg), fs: testFS(dir)}
	st, err := head.OpenAll(context.Background(), ss[:1], tableOf(idSchema))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	cs := cache.Stats()
	wantSeries := map[string]float64{
		"sidecar_rows_read_total":                            float64(read),
		"sidecar_rows_emitted_total":                         float64(emitted),
		`sidecar_rows_deleted_total{kind="position"}`:        float64(deleted[token.DeletePosition]),
		`sidecar_delete_file_loads_total{kind="position"}`:   float64(loads[token.DeletePosition]),
		`sidecar_delete_cache_hits_total{kind="position"}`:   float64(cs.Hits[token.DeletePosition]),
		`sidecar_delete_cache_misses_total{kind="position"}`: float64(cs.Misses[token.DeletePosition]),
		"sidecar_delete_cache_bytes":                         float64(cs.Bytes),
	}
	if emitted == 0 || deleted[token.DeletePosition] == 0 || loads[token.DeletePosition] == 0 || cs.Hits[token.DeletePosition] == 0 {
		t.Fatalf("the splits read %d rows, deleted %v, loaded %v, cache %+v: not what the test needs", emitted, deleted, loads, cs)
	}
	testenv.PromtoolCheckGatherer(t, reg)
	got := gathered(t, reg)
	for series, w := range wantSeries {
		if g, ok := got[series]; !ok || g != w {
			t.Errorf("%s = %v (present %v), want %v", series, g, ok, w)
		}
	}
	for _, name := range []string{"sidecar_rows_filtered_total", "sidecar_invalid_utf8_values_total", "sidecar_delete_cache_evictions_total"} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 1 {
			t.Errorf("%s: %d series (%v), want 1", name, n, err)
		}
	}
}

// TestReaderWithoutRegistry: a Reader and a DeleteCache on no registry
// read as well, their counts exported nowhere.
func TestReaderWithoutRegistry(t *testing.T) {
	dir := t.TempDir()
	ss, want := packedWideDeletes(t, dir, 1, 10, 3, 0, 0)
	r := fsReader{Reader: reader.New(nil, reader.WithDeleteCache(deletes.NewCache(64<<20, nil))), fs: testFS(dir)}
	got, _ := readParts(t, r, ss, tableOf(idSchema))
	if !slices.Equal(got, want[0]) {
		t.Errorf("got %q, want %q", got, want[0])
	}
}

// gathered is what reg exports, as name{labels} → value.
func gathered(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				key += "{" + l.GetName() + `="` + l.GetValue() + `"}`
			}
			out[key] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return out
}
