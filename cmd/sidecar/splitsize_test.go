package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/tablegen"
)

func TestTargetSplitSize(t *testing.T) {
	tests := []struct {
		args []string
		env  string
		want int64
	}{
		{nil, "", 1 << 30},
		{[]string{"--target-split-size", "1GiB"}, "", 1 << 30},
		{[]string{"--target-split-size", "256MiB"}, "", 256 << 20},
		{[]string{"--target-split-size", "64KiB"}, "", 64 << 10},
		{[]string{"--target-split-size", "1048576"}, "", 1 << 20},
		{[]string{"--target-split-size", "1000B"}, "", 1000},
		{[]string{"--target-split-size", "0"}, "", 0},
		{[]string{"--target-split-size", "256MB"}, "", 256_000_000}, // decimal units are decimal, as in Druid
		{nil, "512MiB", 512 << 20},
		{[]string{"--target-split-size", "2GiB"}, "0", 2 << 30},
	}
	for _, tc := range tests {
		getenv := func(k string) string {
			if k == "SIDECAR_TARGET_SPLIT_SIZE" {
				return tc.env
			}
			return ""
		}
		cfg, err := parseServe(tc.args, getenv, io.Discard)
		if err != nil {
			t.Fatalf("%v env %q: %v", tc.args, tc.env, err)
		}
		if int64(cfg.TargetSplitSize) != tc.want {
			t.Errorf("%v env %q: %d, want %d", tc.args, tc.env, cfg.TargetSplitSize, tc.want)
		}
	}
	for _, bad := range []string{"1.5GiB", "-1", "lots", "MiB", "9999999TiB"} {
		_, err := parseServe([]string{"--target-split-size", bad}, func(string) string { return "" }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "target-split-size") {
			t.Errorf("--target-split-size %s: %v, want an error naming the flag", bad, err)
		}
	}
	var help strings.Builder
	_, _ = parseServe([]string{"-h"}, func(string) string { return "" }, &help)
	if !strings.Contains(help.String(), "-target-split-size") || !strings.Contains(help.String(), "1GiB") {
		t.Errorf("serve -h does not list --target-split-size with its default:\n%s", help.String())
	}
}

// TestServeSplitsLargeFiles: --target-split-size reaches the planner of
// every catalog: with a small one, a table's larger files are served as
// several URIs whose rows together are the table's live rows.
func TestServeSplitsLargeFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wh := filepath.Join(dir, "warehouse")
	cat, err := hadoop.NewCatalog("sidecar", wh, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tablegen.RowGroups(context.Background(), cat, table.Identifier{"rg", "t"}, 2, tablegen.SplitOffsetsKept); err != nil {
		t.Fatal(err)
	}
	_ = cat.Close()
	for _, tc := range []struct {
		size string
		many bool
	}{{"4000", true}, {"0", false}} {
		s, _ := startServeArgs(t, []string{
			"--addr", "127.0.0.1:0", "--warehouse", wh, "--token-key-file", filepath.Join(dir, "token.key"),
			"--target-split-size", tc.size,
		}, nil)
		p := getPlan(t, s.base+"/splits?table=rg.t")
		rows := 0
		for _, u := range p.InputSource.URIs {
			rows += strings.Count(string(getBody(t, u)), "\n")
		}
		s.stop(t)
		if n := len(p.InputSource.URIs); (n > 3) != tc.many || rows != len(tablegen.RowGroupsLiveIDs()) {
			t.Fatalf("--target-split-size %s: %d URIs for 3 data files with %d rows; want %d rows",
				tc.size, n, rows, len(tablegen.RowGroupsLiveIDs()))
		}
	}
}
