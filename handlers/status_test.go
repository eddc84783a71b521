package handlers_test

import (
	"context"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/internal/testenv"
)

// TestStatusPage: the page lists the catalog's tables with their current
// snapshot, and for a table shows why it is on the row path: its files,
// their delete files and, on request, the rows each kind of delete removes.
func TestStatusPage(t *testing.T) {
	srv := newDemoServer(t)
	resp, body := srv.get(t, "/")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	page := string(body)
	for _, want := range []string{`href="?catalog=sidecar&amp;table=demo.customers"`, `href="?catalog=sidecar&amp;table=demo.orders"`, "Catalog <b>sidecar</b> (local)"} {
		if !strings.Contains(page, want) {
			t.Errorf("/ lacks %q", want)
		}
	}

	if n := len(regexp.MustCompile(`<td>\d{6,} \(\d{4}-`).FindAllString(page, -1)); n != 2 {
		t.Errorf("/ shows %d current snapshots, want 2", n)
	}

	_, body = srv.get(t, "/?table=demo.orders&counts=1")
	page = string(body)
	if !strings.Contains(page, `<b class="v2">v2</b>`) || !strings.Contains(page, "pos-deletes-00001.parquet") {
		t.Fatalf("the plan of demo.orders does not show the row path and its delete file:\n%s", page)
	}
	// File A (orders 1001-1005) loses two rows by position and one by
	// equality; file B (1006-1007) loses one by position.
	cells := regexp.MustCompile(`(?s)<td>([^<]*(?:<br>[^<]*)*)</td><td>(\d+)</td></tr>`).FindAllStringSubmatch(page, -1)
	var got []string
	for _, c := range cells {
		got = append(got, strings.Join(strings.Fields(strings.ReplaceAll(c[1], "<br>", " ")), " ")+" live "+c[2])
	}
	want := []string{"equality: 1 position: 2 live 2", "position: 1 live 1"} // kinds in name order
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("deleted and live rows per file %q, want %q", got, want)
	}

	// Names are escaped: a hostile table name cannot inject markup.
	_, body = srv.get(t, "/?table=%3Cscript%3Ealert(1)%3C/script%3E")
	if strings.Contains(string(body), "<script>") {
		t.Fatal("the status page echoes markup from the query")
	}
}

// TestStatusPageScreenshot renders the page in headless Chromium (Debian's
// chromium package) and checks the screenshot is a real page. Optional on a
// workstation, required in CI, which installs Chromium (.ci/run).
func TestStatusPageScreenshot(t *testing.T) {
	t.Parallel()
	bin := testenv.Tool(t, "chromium", "apt-get install chromium")
	testenv.SkipShort(t, "starts Chromium")
	srv := newDemoServer(t)
	out := filepath.Join(t.TempDir(), "status.png")
	if dir := os.Getenv("SIDECAR_SCREENSHOT_DIR"); dir != "" {
		out = filepath.Join(dir, "status.png")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--window-size=1400,900", "--screenshot="+out,
		srv.URL+"/?table=demo.orders&counts=1")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, msg)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1400 || b.Dy() != 900 {
		t.Fatalf("screenshot is %v", b)
	}
	// A blank page is one colour; the rendered tables are not.
	colours := map[[3]uint32]bool{}
	for y := 0; y < 900; y += 7 {
		for x := 0; x < 1400; x += 7 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 12, g >> 12, b >> 12}] = true
		}
	}
	if len(colours) < 4 {
		t.Fatalf("the screenshot holds %d colours: a blank page", len(colours))
	}
}
