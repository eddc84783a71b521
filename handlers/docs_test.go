package handlers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/handlers"
)

// apiDoc is the HTTP API reference that TestDocs holds to the server.
const apiDoc = "../docs/api.md"

// TestDocsErrorCodes holds the error table of docs/api.md to the error codes
// the handlers can send, both ways: every code written in the handlers'
// source (errorf calls, apiError literals, toAPIError's mapping) has a row
// that gives its HTTP status, and every row names a code the server sends.
func TestDocsErrorCodes(t *testing.T) {
	sent := sentErrorCodes(t)
	rows := docTableRows(t, "## Error codes")
	documented := map[string]string{}
	for _, row := range rows {
		cells := strings.Split(strings.Trim(row, "|"), "|")
		if len(cells) < 2 {
			continue
		}
		code := strings.Trim(strings.TrimSpace(cells[0]), "`")
		documented[code] = strings.TrimSpace(cells[1])
	}
	for code, statuses := range sent {
		doc, ok := documented[code]
		if !ok {
			t.Errorf("error code %q (HTTP %v) is not in the error table of %s", code, statuses, apiDoc)
			continue
		}
		for _, st := range statuses {
			if !strings.Contains(doc, strconv.Itoa(st)) {
				t.Errorf("error code %q is sent with HTTP %d, but %s gives it %q", code, st, apiDoc, doc)
			}
		}
	}
	for code := range documented {
		if _, ok := sent[code]; !ok {
			t.Errorf("%s documents error code %q, which no handler sends", apiDoc, code)
		}
	}
}

// TestDocsRoutes holds the route table of docs/api.md to the routes of the
// live router, both ways: every METHOD /pattern that chi.Walk finds has a
// row, and every row is a live route.
func TestDocsRoutes(t *testing.T) {
	router := handlers.New(handlers.Config{Gatherer: prometheus.NewRegistry()})
	routes, ok := router.(chi.Routes)
	if !ok {
		t.Fatalf("router is %T, not chi.Routes", router)
	}
	live := map[string]bool{}
	err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		live[method+" "+route] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !live["GET /splits/{token}/rows"] || !live["GET /metrics"] {
		t.Fatalf("chi.Walk found %v: not the sidecar's router", live)
	}
	routeRE := regexp.MustCompile("^\\|\\s*`((?:GET|POST|PUT|PATCH|DELETE) /[^`]*)`")
	documented := map[string]bool{}
	for _, row := range docTableRows(t, "## Routes") {
		if m := routeRE.FindStringSubmatch(row); m != nil {
			documented[m[1]] = true
		}
	}
	for r := range live {
		if !documented[r] {
			t.Errorf("route %q is not in the route table of %s", r, apiDoc)
		}
	}
	for r := range documented {
		if !live[r] {
			t.Errorf("%s documents route %q, which the router does not have", apiDoc, r)
		}
	}
}

// docTableRows returns the table rows (lines starting with "|", header and
// rule lines left out) of the section of docs/api.md under heading, up to
// the next heading of the same level.
func docTableRows(t *testing.T, heading string) []string {
	t.Helper()
	data, err := os.ReadFile(apiDoc)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	start := slices.Index(lines, heading)
	if start < 0 {
		t.Fatalf("%s has no line %q", apiDoc, heading)
	}
	level := heading[:strings.Index(heading, " ")+1]
	var rows []string
	header := true
	for _, l := range lines[start+1:] {
		if strings.HasPrefix(l, level) {
			break
		}
		if !strings.HasPrefix(l, "|") {
			header = true
			continue
		}
		if header || strings.HasPrefix(l, "|---") || strings.HasPrefix(l, "| ---") {
			header = false
			continue
		}
		rows = append(rows, l)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no table rows under %q", apiDoc, heading)
	}
	return rows
}

// sentErrorCodes scans the handlers' non-test source for the error codes it
// can send, each with the HTTP statuses it is sent with: the code argument
// of errorf(status, code, …), the Code of an apiError{Status: …, Code: …}
// literal, and each `status, code = http.StatusX, "code"` of toAPIError.
func sentErrorCodes(t *testing.T) map[string][]int {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	statuses := httpStatuses()
	status := func(e ast.Expr, pos token.Position) int {
		if sel, ok := e.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "http" {
				if n, ok := statuses[sel.Sel.Name]; ok {
					return n
				}
			}
		}
		t.Errorf("%s: an error code's status is not an http.StatusX constant; write it as one so that TestDocsErrorCodes can check it", pos)
		return 0
	}
	code := func(e ast.Expr) (string, bool) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(lit.Value)
		return s, err == nil
	}
	out := map[string][]int{}
	add := func(c string, st int) {
		if _, ok := out[c]; !ok {
			out[c] = nil
		}
		if st != 0 && !slices.Contains(out[c], st) {
			out[c] = append(out[c], st)
		}
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "errorf" && len(n.Args) == 3 {
					c, ok := code(n.Args[1])
					if !ok {
						t.Errorf("%s: errorf's code is not a string literal", fset.Position(n.Pos()))
						return true
					}
					add(c, status(n.Args[0], fset.Position(n.Pos())))
				}
			case *ast.CompositeLit:
				var c string
				var st ast.Expr
				for _, el := range n.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					switch k, _ := kv.Key.(*ast.Ident); {
					case k == nil:
					case k.Name == "Code":
						c, _ = code(kv.Value)
					case k.Name == "Status":
						st = kv.Value
					}
				}
				if c != "" && st != nil {
					add(c, status(st, fset.Position(n.Pos())))
				}
			case *ast.AssignStmt:
				// status, code = http.StatusX, "code"
				si, ci := -1, -1
				for i, lhs := range n.Lhs {
					if id, ok := lhs.(*ast.Ident); ok && id.Name == "status" {
						si = i
					} else if ok && id.Name == "code" {
						ci = i
					}
				}
				if si >= 0 && ci >= 0 && len(n.Rhs) == len(n.Lhs) {
					if c, ok := code(n.Rhs[ci]); ok {
						add(c, status(n.Rhs[si], fset.Position(n.Pos())))
					}
				}
			}
			return true
		})
	}
	// The scan must see the codes that every server sends; finding none
	// means it no longer understands the source.
	for _, c := range []string{"internal", "bad_request", "table_not_found", "not_found", "method_not_allowed", "plan_timeout"} {
		if _, ok := out[c]; !ok {
			t.Fatalf("the scan of the handlers' source found no error code %q (found %v): update sentErrorCodes", c, out)
		}
	}
	return out
}

// httpStatuses maps the names of net/http's status constants to their
// values, derived from http.StatusText ("Request Entity Too Large" is
// StatusRequestEntityTooLarge).
func httpStatuses() map[string]int {
	out := map[string]int{}
	for n := 100; n < 600; n++ {
		text := http.StatusText(n)
		if text == "" {
			continue
		}
		out["Status"+strings.NewReplacer(" ", "", "-", "", "'", "").Replace(text)] = n
	}
	return out
}
