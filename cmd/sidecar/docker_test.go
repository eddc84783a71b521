package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/druidiceberg/sidecar/internal/testlog"
	"github.com/druidiceberg/sidecar/internal/testnet"
)

var updateExamples = flag.Bool("update-examples", false, "rewrite docker/examples/ from what the container generates")

// repoRoot is the module root, the Dockerfile's build context.
const repoRoot = "../.."

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, …
	args string
}

// stage is a Dockerfile build stage.
type stage struct {
	from, name string
	body       []instruction
}

// parseDockerfile splits a Dockerfile into its stages. It knows what this
// repository's Dockerfile uses: comments, `\` continuations, ARG before FROM.
func parseDockerfile(t *testing.T, path string) []stage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stages []stage
	var line strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if line.Len() == 0 && (l == "" || strings.HasPrefix(l, "#")) {
			continue
		}
		if cont, ok := strings.CutSuffix(l, `\`); ok {
			line.WriteString(cont + " ")
			continue
		}
		line.WriteString(l)
		cmd, args, _ := strings.Cut(line.String(), " ")
		line.Reset()
		in := instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			st := stage{from: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				t.Fatalf("%s: %s before the first FROM", path, in.cmd)
			}
			continue
		}
		stages[len(stages)-1].body = append(stages[len(stages)-1].body, in)
	}
	if line.Len() > 0 {
		t.Fatalf("%s ends in a continuation", path)
	}
	return stages
}

// shellWords splits a shell command line: blanks separate words, double and
// single quotes group them. Enough for a RUN line; no expansion.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("unterminated quote in %q", s)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// TestDockerfile checks what can be checked without a Docker engine: the
// Dockerfile is multi-stage, builds a static binary (CGO_ENABLED=0) stamped
// with the version and with every optional catalog and store, and runs as
// a non-root user on a distroless or scratch base; the image's ENTRYPOINT
// plus compose.yaml's command serve the demo, hand out URIs under the
// public URL and stop cleanly on SIGTERM; and docker/examples/ are what
// that server generates for the demo tables.
func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t, filepath.Join(repoRoot, "docker", "Dockerfile"))
	if len(stages) < 2 {
		t.Fatalf("Dockerfile has %d stages, want a build stage and a runtime stage", len(stages))
	}
	final := stages[len(stages)-1]
	if !strings.HasPrefix(final.from, "gcr.io/distroless/static") && final.from != "scratch" {
		t.Errorf("the runtime stage is FROM %s, want distroless static or scratch", final.from)
	}
	var user string
	var entrypoint []string
	copiesBinary := false
	for _, in := range final.body {
		switch in.cmd {
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(in.args), &entrypoint); err != nil {
				t.Fatalf("ENTRYPOINT is not the exec (JSON) form: %v", err)
			}
		case "COPY":
			copiesBinary = copiesBinary || strings.Contains(in.args, "--from=build") && strings.HasSuffix(in.args, " /sidecar")
		case "RUN":
			t.Errorf("the runtime stage runs %q: distroless has no shell", in.args)
		}
	}
	if u, _, _ := strings.Cut(user, ":"); u == "" || u == "root" || u == "0" {
		t.Errorf("the image runs as %q, want a non-root USER", user)
	}
	if !copiesBinary {
		t.Error("the runtime stage does not copy /sidecar from the build stage")
	}
	if len(entrypoint) < 2 || entrypoint[0] != "/sidecar" || entrypoint[1] != "serve" {
		t.Fatalf("ENTRYPOINT %q, want /sidecar serve …", entrypoint)
	}

	var build []string
	for _, in := range stages[0].body {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			build = shellWords(t, in.args)
		}
	}
	i := slices.Index(build, "go")
	if i < 0 || !slices.Contains(build[:i], "CGO_ENABLED=0") {
		t.Fatalf("the build stage's go build line %q does not set CGO_ENABLED=0", build)
	}
	args := build[i+1:]
	// A static binary (no cgo), stamped with the version, with every
	// optional catalog and store. The line itself is not run: that would
	// build the whole sidecar a second time in the tests, and the tests'
	// own build (this test binary, run as the sidecar) serves the checks
	// below.
	if !slices.Contains(args, "-trimpath") || !slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "-X main.version=${VERSION}") }) {
		t.Errorf("go build %q: want -trimpath and -ldflags -X main.version=${VERSION}", args)
	}
	if k := slices.Index(args, "-tags"); k < 0 || k+1 >= len(args) {
		t.Errorf("go build %q: want -tags with every optional catalog and store", args)
	} else {
		for _, o := range optional {
			if !slices.Contains(strings.Split(args[k+1], ","), o.tag) {
				t.Errorf("go build -tags %s: the image lacks %s", args[k+1], o.tag)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	compose := parseCompose(t)
	checkContainer(t, ctx, entrypoint, compose.Services["sidecar"].Command)
}

// composeFile is the part of docker/compose.yaml the test reads.
type composeFile struct {
	Services map[string]struct {
		Image string `yaml:"image"`
		Build struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
		Command   []string `yaml:"command"`
		Volumes   []string `yaml:"volumes"`
		DependsOn []string `yaml:"depends_on"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

func parseCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docker", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("docker/compose.yaml: %v", err)
	}
	sc, ok := c.Services["sidecar"]
	if !ok {
		t.Fatal("docker/compose.yaml has no sidecar service")
	}
	if filepath.Join("docker", sc.Build.Context, sc.Build.Dockerfile) != filepath.Join("docker", "Dockerfile") {
		t.Errorf("the sidecar service builds %s in %s, want docker/Dockerfile in the repository root", sc.Build.Dockerfile, sc.Build.Context)
	}
	if i := slices.Index(sc.Command, "--public-url"); i < 0 || i+1 >= len(sc.Command) || sc.Command[i+1] != "http://sidecar:8080" {
		t.Errorf("the sidecar service's command %q lacks --public-url http://sidecar:8080", sc.Command)
	}
	mountsWarehouse := false
	for _, v := range sc.Volumes {
		mountsWarehouse = mountsWarehouse || strings.HasSuffix(v, ":/warehouse") || strings.Contains(v, ":/warehouse:")
	}
	if !mountsWarehouse {
		t.Error("the sidecar service mounts no warehouse at /warehouse")
	}
	for _, name := range []string{"coordinator", "broker", "historical", "middlemanager", "router"} {
		s, ok := c.Services[name]
		if !ok {
			t.Errorf("docker/compose.yaml has no Druid %s", name)
			continue
		}
		if !strings.HasPrefix(s.Image, "apache/druid:") {
			t.Errorf("%s runs %q, want apache/druid", name, s.Image)
		}
	}
	for name, s := range c.Services {
		for _, v := range s.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if !strings.HasPrefix(src, ".") && !strings.HasPrefix(src, "/") {
				if _, ok := c.Volumes[src]; !ok {
					t.Errorf("service %s mounts undeclared volume %s", name, src)
				}
			}
		}
		for _, d := range s.DependsOn {
			if _, ok := c.Services[d]; !ok {
				t.Errorf("service %s depends on unknown service %s", name, d)
			}
		}
	}
	return c
}

// examples are docker/examples/, each what the demo server answers to a
// request, with the tokens replaced by placeholders.
var examples = []struct{ file, path string }{
	{"orders-index-parallel.json", "/druid/task?table=demo.orders&dataSource=orders&timestampColumn=order_ts"},
	{"orders-msq-insert.json", "/druid/sql?table=demo.orders&dataSource=orders&timestampColumn=order_ts"},
	{"customers-index-parallel.json", "/druid/task?table=demo.customers&dataSource=customers&timestampColumn=signup_date"},
}

// checkContainer runs the built binary as the container would (the
// ENTRYPOINT, then compose's command), with the container's paths moved into
// a temp dir and the address onto loopback, and stops it with SIGTERM.
func checkContainer(t *testing.T, ctx context.Context, entrypoint, command []string) {
	t.Helper()
	dir := t.TempDir()
	addr := testnet.FreeAddr(t)
	var args []string
	for _, a := range append(slices.Clone(entrypoint[1:]), command...) {
		switch {
		case a == "0.0.0.0:8080":
			a = addr
		case a == "/warehouse" || strings.HasPrefix(a, "/keys/"):
			a = filepath.Join(dir, filepath.Base(a))
		}
		args = append(args, a)
	}
	var logs testlog.Buffer
	cmd := sidecarCommand(ctx, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// It says when it listens (compose's command logs JSON); its exit
	// ends the wait.
	starting, exitedEarly := context.WithCancelCause(ctx)
	defer exitedEarly(nil)
	starting, cancel := context.WithTimeoutCause(starting, 2*time.Minute, errors.New("it logged no listening line within 2 minutes"))
	defer cancel()
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		why := errors.New("it exited before it listened")
		if err != nil {
			why = fmt.Errorf("it exited before it listened: %w", err)
		}
		exitedEarly(why)
		exited <- err
	}()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	if err := logs.Await(starting, func(l string) bool { return strings.Contains(l, `"msg":"listening"`) }); err != nil {
		t.Fatalf("the container's command did not start: %v\n%s", err, logs.String())
	}
	base := "http://" + addr
	if body := getBody(t, base+"/healthz"); string(body) != "ok\n" {
		t.Fatalf("/healthz: %q", body)
	}
	if body := getBody(t, base+"/readyz"); string(body) != "ready\n" {
		t.Fatalf("/readyz: %q", body)
	}
	for _, u := range getPlan(t, base+"/splits?table=demo.orders").InputSource.URIs {
		if !strings.HasPrefix(u, "http://sidecar:8080/splits/") {
			t.Fatalf("URI %s is not under the compose public URL", u)
		}
	}

	for _, ex := range examples {
		got := exampleOf(t, getBody(t, base+ex.path))
		path := filepath.Join(repoRoot, "docker", "examples", ex.file)
		if *updateExamples {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./cmd/sidecar -run TestDockerfile -update-examples writes it)", err)
		}
		var g, w any
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s is not what %s generates (go test ./cmd/sidecar -run TestDockerfile -update-examples rewrites it)\n got: %s", path, ex.path, got)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("no exit within a minute of SIGTERM")
	}
	if !strings.Contains(logs.String(), `"msg":"shutting down"`) {
		t.Errorf("no JSON shutdown line in the logs:\n%s", logs.String())
	}
}

// tokenURI matches the URIs the demo server hands out under the compose
// public URL.
var tokenURI = regexp.MustCompile(`http://sidecar:8080/(splits|files)/[A-Za-z0-9_\-.]+`)

// exampleOf replaces the tokens of a generated spec (they pin the warehouse's
// absolute paths and the snapshot) with numbered placeholders.
func exampleOf(t *testing.T, body []byte) []byte {
	t.Helper()
	seen := map[string]string{}
	out := tokenURI.ReplaceAllFunc(body, func(m []byte) []byte {
		p, ok := seen[string(m)]
		if !ok {
			route := tokenURI.FindSubmatch(m)[1]
			p = fmt.Sprintf("http://sidecar:8080/%s/<token-%d>", route, len(seen)+1)
			seen[string(m)] = p
		}
		return []byte(p)
	})
	if len(seen) == 0 {
		t.Fatalf("no token URI in %s", body)
	}
	return out
}
