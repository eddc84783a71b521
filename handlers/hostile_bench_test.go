package handlers_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/sidecartest"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/handlers"
)

// hostileBenchTable is the table of BenchmarkStreamsBesideAttackers:
// 100,000 rows in 4 data files with 5% positional and 1% equality deletes,
// written once into the system temp folder.
var hostileBenchTable struct {
	once sync.Once
	dir  string
	err  error
}

// BenchmarkStreamsBesideAttackers measures what hostile clients cost the
// legitimate ones: 8 Druid-like clients read every split of a table whole
// (byte-exact against a reference read), quiet and beside the first
// attackers of TestLoadAndLeaks (filters nested and wide, trickled bodies,
// 900 KB values, names that are not names, too many include intervals;
// not those of moreAttacks, which need tables of their own), each repeating its
// attack for the whole benchmark. Compare the two MB/s, run alternately
// (-count repeats one sub-benchmark before the next):
//
//	for i in 1 2 3 4; do for v in quiet hostile; do
//	  go test -run '^$' -bench "StreamsBesideAttackers/$v" -benchtime 3x ./handlers/ | grep MB/s
//	done; done
func BenchmarkStreamsBesideAttackers(b *testing.B) {
	hostileBenchTable.once.Do(func() {
		dir := filepath.Join(os.TempDir(), "sidecar-hostile-bench-100000-4")
		_, err := sidecartest.CachedBenchTable(dir, table.Identifier{"load", "t"}, 100_000, 4)
		hostileBenchTable.dir, hostileBenchTable.err = dir, err
	})
	if hostileBenchTable.err != nil {
		b.Fatalf("benchmark table: %v", hostileBenchTable.err)
	}
	const clients = 8
	srv := newServer(b, sidecatalog.Config{Type: "local", Warehouse: hostileBenchTable.dir}, nil,
		func(c *handlers.Config) { c.MaxStreams, c.BodyTimeout = 4*clients, time.Second })
	p := srv.plan(b, q("table", "load.t"))
	var targets []sidecartest.LoadTarget
	var size int64
	for _, u := range p.InputSource.URIs {
		path := strings.TrimPrefix(u, srv.URL)
		resp, body := srv.get(b, path)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("reference read of %s: %d", path, resp.StatusCode)
		}
		targets = append(targets, sidecartest.LoadTarget{Path: path, Want: body})
		size += int64(len(body))
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	readAll := func() error {
		var wg sync.WaitGroup
		errs := make(chan error, clients)
		for c := range clients {
			wg.Go(func() {
				for i := range targets {
					tg := targets[(c+i)%len(targets)]
					resp, err := client.Get(srv.URL + tg.Path)
					if err != nil {
						errs <- err
						return
					}
					cmp := &sidecartest.Comparer{Want: tg.Want}
					_, err = io.Copy(cmp, resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != http.StatusOK || cmp.Differ || cmp.Off != len(tg.Want) {
						errs <- fmt.Errorf("GET %s: %d, %v, %d of %d bytes, differ %v", tg.Path, resp.StatusCode, err, cmp.Off, len(tg.Want), cmp.Differ)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		return <-errs
	}

	for _, hostile := range []bool{false, true} {
		name := "quiet"
		if hostile {
			name = "hostile"
		}
		b.Run(name, func(b *testing.B) {
			stop := make(chan struct{})
			var attackers sync.WaitGroup
			var mu sync.Mutex
			seen := map[string]map[int]int{}
			if hostile {
				list, done := sidecartest.Attacks(srv.served())
				defer done()
				for _, a := range list {
					attackers.Go(func() {
						for {
							select {
							case <-stop:
								return
							default:
							}
							status, err := a.Run()
							mu.Lock()
							if seen[a.Name] == nil {
								seen[a.Name] = map[int]int{}
							}
							seen[a.Name][status]++
							mu.Unlock()
							if err != nil || !slices.Contains(a.Want, status) {
								b.Errorf("%s: %d, %v", a.Name, status, err)
								return
							}
						}
					})
				}
			}
			b.SetBytes(clients * size)
			for b.Loop() {
				if err := readAll(); err != nil {
					b.Fatal(err)
				}
			}
			close(stop)
			attackers.Wait()
			if hostile {
				b.Logf("attacks answered: %v", seen)
			}
		})
	}
}
