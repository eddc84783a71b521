package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// The targets of packed splits, plan-reference tokens and compressed
// streams (docs/performance.md):
//
//   - 8. a table of 20,000 small data files with an equality delete plans,
//     with the default options, into at most 64 URIs of at most 2 KiB each,
//     whose rows are exactly iceberg-go's, and a second server with the same
//     key serves byte-identical streams for every URI;
//   - 9. a packed split streams at the rate of one file's split (within
//     10%);
//   - 10. a table of 100,000 data files plans in at most twice the CPU of
//     iceberg-go's PlanFiles alone, under 512 MiB of server RSS, with an
//     answer in proportion to its splits;
//   - 11. compressed streams: the bytes on the wire and the server's CPU per
//     row against plain NDJSON (a table, not a pass or fail).

// wideWarehouse returns the local warehouse of tablegen.Wide's table
// wide.orders of that size, building it once (a build that did not finish
// is built again).
func (b *bench) wideWarehouse(ctx context.Context, data, deletes int) (string, *table.Table, error) {
	wh := filepath.Join(b.dir, fmt.Sprintf("wide-%d-%d", data, deletes))
	done := filepath.Join(wh, "complete")
	ident := table.Identifier{"wide", "orders"}
	if _, err := os.Stat(done); errors.Is(err, os.ErrNotExist) {
		if err := os.RemoveAll(wh); err != nil {
			return "", nil, err
		}
		cat, err := hadoop.NewCatalog("bench", wh, nil)
		if err != nil {
			return "", nil, err
		}
		fmt.Fprintf(os.Stderr, "writing a table of %d data files and %d delete files into %s…\n", data, deletes, wh)
		start := time.Now()
		_, err = tablegen.Wide(ctx, cat, ident, data, deletes)
		if err == nil {
			err = os.WriteFile(done, nil, 0o644)
		}
		if err = errors.Join(err, cat.Close()); err != nil {
			return "", nil, fmt.Errorf("build the wide table: %w", err)
		}
		fmt.Fprintf(os.Stderr, "written in %s\n", time.Since(start).Round(time.Second))
	}
	cat, err := hadoop.NewCatalog("bench", wh, nil)
	if err != nil {
		return "", nil, err
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, ident)
	return wh, tbl, err
}

// serveMain starts a sidecar with the default options over the main
// table's warehouse, writing the table first when absent.
func (b *bench) serveMain(ctx context.Context) (string, *server, error) {
	wh := filepath.Join(b.dir, fmt.Sprintf("main-%d", b.rows))
	if _, err := b.table(ctx, wh, b.rows, 8, 0.05, 0.01); err != nil {
		return "", nil, err
	}
	srv, err := b.serve(ctx, wh)
	return wh, srv, err
}

// getBytes reads an answer whole.
func getBytes(c *http.Client, uri string) ([]byte, error) {
	resp, err := c.Get(uri)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %d %s", uri, resp.StatusCode, body)
	}
	return body, err
}

// smallFiles measures target 8.
func (b *bench) smallFiles(ctx context.Context) error {
	files := 20_000
	if b.quick {
		files = 2_000
	}
	wh, tbl, err := b.wideWarehouse(ctx, files, 10)
	if err != nil {
		return err
	}
	srv, err := b.serve(ctx, wh)
	if err != nil {
		return err
	}
	defer srv.stop()
	other, err := b.serve(ctx, wh)
	if err != nil {
		return err
	}
	defer other.stop()
	uris, err := srv.plan("table=wide.orders")
	if err != nil {
		return err
	}
	longest := 0
	var got []string
	c := &http.Client{}
	for _, u := range uris {
		longest = max(longest, len(u))
		body, err := getBytes(c, u)
		if err != nil {
			return err
		}
		again, err := getBytes(c, strings.Replace(u, srv.base, other.base, 1))
		if err != nil {
			return err
		}
		if !bytes.Equal(body, again) {
			return fmt.Errorf("%s: the second server serves other bytes", u)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
			if line != "" {
				got = append(got, line)
			}
		}
	}
	// iceberg-go's ReadTasks leaves out the identity partition's column,
	// which the files do not store: its ids, and the table's own rows.
	oracle, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
	if err != nil {
		return err
	}
	want := tablegen.WideLiveRows(files, 10)
	exact := sameRows(got, want) && sameRows(column(got, "id"), column(oracle, "id"))
	fmt.Fprintf(b.out, "small files: %d data files (with an equality delete) plan into %d URIs of at most %d bytes; "+
		"%d rows, exactly the table's (and iceberg-go's ids): %v; a second server serves the same bytes for every URI\n\n",
		files, len(uris), longest, len(got), exact)
	b.add(result{target: fmt.Sprintf("8. URIs for %d small files", files), measured: fmt.Sprintf("%d URIs", len(uris)),
		anchor: "64 URIs", ratio: float64(len(uris)) / 64, want: "≤ 1", pass: len(uris) <= 64})
	b.add(result{target: "8. longest URI", measured: fmt.Sprintf("%d bytes", longest), anchor: "2 KiB",
		ratio: float64(longest) / 2048, want: "≤ 1", pass: longest <= 2048})
	b.add(result{target: "8. rows of the packed plan", measured: fmt.Sprintf("%d rows", len(got)),
		anchor: fmt.Sprintf("the table's %d rows", len(want)), ratio: float64(len(got)) / float64(max(len(want), 1)),
		want: "= 1, same rows", pass: exact})
	return nil
}

// column keeps one column of JSON objects, as objects of that column.
func column(lines []string, name string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(l), &obj) != nil {
			return nil
		}
		out = append(out, fmt.Sprintf(`{%q:%s}`, name, obj[name]))
	}
	return out
}

// sameRows reports whether two lists of JSON objects hold the same rows,
// whatever their order.
func sameRows(got, want []string) bool {
	canon := func(lines []string) []string {
		out := make([]string, 0, len(lines))
		for _, l := range lines {
			var v any
			if json.Unmarshal([]byte(l), &v) != nil {
				return nil
			}
			b, _ := json.Marshal(v)
			out = append(out, string(b))
		}
		slices.Sort(out)
		return out
	}
	return len(got) == len(want) && slices.Equal(canon(got), canon(want))
}

// packedStreams measures target 9 on the main table: its files read as one
// packed split against the same files as one split each, one stream, in
// rounds.
func (b *bench) packedStreams(ctx context.Context) error {
	wh, srv, err := b.serveMain(ctx)
	if err != nil {
		return err
	}
	defer srv.stop()
	packed, err := srv.plan("table=bench.orders&mode=rows")
	if err != nil {
		return err
	}
	each, err := b.serve(ctx, wh, "--target-split-size", "0")
	if err != nil {
		return err
	}
	defer each.stop()
	single, err := each.plan("table=bench.orders&mode=rows")
	if err != nil {
		return err
	}
	if len(packed) != 1 || len(single) != 8 {
		return fmt.Errorf("the main table packs into %d splits and %d unpacked, want 1 and 8", len(packed), len(single))
	}
	if _, _, err := readAll(packed, 1); err != nil { // warm-up
		return err
	}
	var ratios []float64
	var last [2]float64
	for range b.rounds {
		n1, d1, err := readAll(packed, 1)
		if err != nil {
			return err
		}
		n2, d2, err := readAll(single, 1)
		if err != nil {
			return err
		}
		if n1 != n2 {
			return fmt.Errorf("the packed split reads %d rows, the files one by one %d", n1, n2)
		}
		last = [2]float64{float64(n1) / d1.Seconds(), float64(n2) / d2.Seconds()}
		ratios = append(ratios, last[0]/last[1])
	}
	ratio := median(ratios)
	fmt.Fprintf(b.out, "packed split: the main table's 8 files as one split at %s rows/s, as 8 splits one after the other "+
		"at %s rows/s (last round); median ratio of %d rounds %.2f\n\n", mrows(last[0]), mrows(last[1]), len(ratios), ratio)
	b.add(result{target: "9. packed split vs one file a split", measured: mrows(last[0]) + " rows/s", anchor: mrows(last[1]) + " rows/s",
		ratio: ratio, want: "≥ 0.90", pass: ratio >= 0.90})
	return nil
}

// planMemoryLimit is the Go soft memory limit (GOMEMLIMIT) of the sidecar
// that target 10's peak RSS is measured with. Most of a plan's memory is
// iceberg-go's PlanFiles holding every data file with its column statistics
// (about 2.6 KB a file, so 260 MiB for 100,000), and without a limit Go's
// collector lets the heap grow to twice what is live before it collects.
const planMemoryLimit = "448MiB"

// widePlanning measures target 10: with the default GOGC, and with a
// memory limit.
func (b *bench) widePlanning(ctx context.Context) error {
	if err := b.widePlanningWith(ctx, ""); err != nil {
		return err
	}
	return b.widePlanningWith(ctx, planMemoryLimit)
}

// widePlanningWith measures target 10 with the sidecar's GOMEMLIMIT set to
// limit ("": none).
func (b *bench) widePlanningWith(ctx context.Context, limit string) error {
	files := 100_000
	if b.quick {
		files = 10_000
	}
	wh, tbl, err := b.wideWarehouse(ctx, files, 1_000)
	if err != nil {
		return err
	}
	env := b.env
	if limit != "" {
		b.env = append(slices.Clone(env), "GOMEMLIMIT="+limit)
	}
	srv, err := b.serve(ctx, wh)
	b.env = env
	if err != nil {
		return err
	}
	defer srv.stop()
	if _, err := getBytes(http.DefaultClient, srv.base+"/splits?table=wide.orders"); err != nil { // warm-up
		return err
	}
	if err := srv.resetPeak(); err != nil {
		return err
	}
	var ratios []float64
	var planCPU, anchorCPU time.Duration
	var answer []byte
	for range b.rounds {
		own0 := ownCPU()
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			return err
		}
		anchorCPU = ownCPU() - own0
		if len(tasks) != files {
			return fmt.Errorf("PlanFiles gave %d files, want %d", len(tasks), files)
		}
		c0 := srv.cpu()
		if answer, err = getBytes(http.DefaultClient, srv.base+"/splits?table=wide.orders"); err != nil {
			return err
		}
		planCPU = srv.cpu() - c0
		ratios = append(ratios, planCPU.Seconds()/anchorCPU.Seconds())
	}
	peak, err := srv.peakRSS()
	if err != nil {
		return err
	}
	var p struct {
		Splits []struct {
			DataFiles int `json:"dataFiles"`
		} `json:"splits"`
	}
	if err := json.Unmarshal(answer, &p); err != nil {
		return err
	}
	packedFiles := 0
	for _, s := range p.Splits {
		packedFiles += s.DataFiles
	}
	if packedFiles != files {
		return fmt.Errorf("the plan packs %d files, the table has %d", packedFiles, files)
	}
	ratio := median(ratios)
	with := "GOMEMLIMIT unset"
	if limit != "" {
		with = "GOMEMLIMIT=" + limit
	}
	fmt.Fprintf(b.out, "planning (%s): %d data files in %d splits: GET /splits %s of server CPU, PlanFiles %s (last round); "+
		"median ratio of %d rounds %.2f; server peak RSS %s; answer %d bytes, %d a split\n\n",
		with, files, len(p.Splits), planCPU.Round(time.Millisecond), anchorCPU.Round(time.Millisecond), len(ratios), ratio,
		mib(peak), len(answer), len(answer)/max(len(p.Splits), 1))
	b.add(result{target: fmt.Sprintf("10. plan CPU, %d files, %s", files, with), measured: planCPU.Round(time.Millisecond).String(),
		anchor: "PlanFiles " + anchorCPU.Round(time.Millisecond).String(), ratio: ratio, want: "≤ 2", pass: ratio <= 2})
	if limit == "" {
		// Shown, not held: the target is for a sidecar with a memory limit.
		fmt.Fprintf(b.out, "(without a memory limit the peak is Go's collector at its default GOGC, not the plan)\n\n")
		return nil
	}
	b.add(result{target: fmt.Sprintf("10. server peak RSS, %d files, %s", files, with), measured: mib(peak), anchor: "512 MiB",
		ratio: float64(peak) / (512 << 20), want: "< 1", pass: peak < 512<<20})
	return nil
}

// compressionTable measures the figures of compressed streams (11) on the
// main table: each compression's bytes on the wire and server CPU per row,
// one stream, against plain NDJSON.
func (b *bench) compressionTable(ctx context.Context) error {
	_, srv, err := b.serveMain(ctx)
	if err != nil {
		return err
	}
	defer srv.stop()
	plain, err := srv.plan("table=bench.orders&mode=rows&minSplits=8")
	if err != nil {
		return err
	}
	rows, _, err := readAll(plain, 1)
	if err != nil {
		return err
	}
	type figures struct{ bytes, cpu, rate float64 }
	var base figures
	for _, c := range []string{"none", "gzip", "zstd"} {
		uris, err := srv.plan("table=bench.orders&mode=rows&minSplits=8&compression=" + c)
		if err != nil {
			return err
		}
		var wire int64
		c0, start := srv.cpu(), time.Now()
		for _, u := range uris {
			body, err := getBytes(http.DefaultClient, u)
			if err != nil {
				return err
			}
			wire += int64(len(body))
		}
		f := figures{float64(wire) / float64(rows), float64((srv.cpu() - c0).Nanoseconds()) / float64(rows),
			float64(rows) / time.Since(start).Seconds()}
		if c == "none" {
			base = f
		}
		fmt.Fprintf(b.out, "compression %s: %.1f bytes and %.0f ns of server CPU a row, %s rows/s on one stream; "+
			"%.2f× the bytes and %.2f× the CPU of plain NDJSON\n", c, f.bytes, f.cpu, mrows(f.rate), f.bytes/base.bytes, f.cpu/base.cpu)
	}
	fmt.Fprintln(b.out)
	return nil
}

// packingTargets measures targets 8 to 11.
func (b *bench) packingTargets(ctx context.Context) error {
	for _, f := range []func(context.Context) error{b.smallFiles, b.packedStreams, b.widePlanning, b.compressionTable} {
		if err := f(ctx); err != nil {
			return err
		}
	}
	return nil
}
