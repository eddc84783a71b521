package sidecartest

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/internal/testenv"
)

// The integration tier's real servers, started by the tests on 127.0.0.1
// and stopped by their pid (`go test -tags integration`; .ci/run runs it).
// Each start and stop is logged, so the run's log says which servers ran.

// Proc is a server process a test starts.
type Proc struct {
	Name string
	Args []string
	Env  []string
	// Log is the file the process writes its output to.
	Log string
	// Ready reports whether the server answers.
	Ready func() error
	// StopSignal asks the server to stop (SIGTERM when zero); it gets
	// StopGrace (5 s when zero) before SIGKILL.
	StopSignal syscall.Signal
	StopGrace  time.Duration

	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts the process and waits, up to 90 s, until it answers; it is
// stopped when the test ends, if it runs then.
func (p *Proc) Start(t testing.TB) {
	t.Helper()
	out, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(p.Args[0], p.Args[1:]...)
	p.cmd.Env = append(os.Environ(), p.Env...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	// Its own process group, so that a stop reaches any child it spawns.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("start %s: %v", p.Name, err)
	}
	done := make(chan struct{})
	p.done = done
	cmd := p.cmd
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(done)
	}()
	t.Cleanup(func() { p.Stop(t) })
	began := time.Now()
	// The process sends no notification when it answers: asking again is
	// the only way to know.
	testenv.Poll(t, 90*time.Second, func() error {
		select {
		case <-done:
			t.Fatalf("%s exited before it answered: %v; its log:\n%s", p.Name, cmd.ProcessState, logTail(p.Log))
		default:
		}
		if err := p.Ready(); err != nil {
			return fmt.Errorf("%s does not answer: %w; its log:\n%s", p.Name, err, logTail(p.Log))
		}
		return nil
	})
	t.Logf("started %s, pid %d, answering after %s", p.Name, cmd.Process.Pid, time.Since(began).Round(time.Millisecond))
}

// Stop stops the process by its pid: its stop signal, then SIGKILL after
// its grace. A process that does not run is left as it is.
func (p *Proc) Stop(t testing.TB) {
	t.Helper()
	if p.cmd == nil {
		return
	}
	pid := p.cmd.Process.Pid
	began := time.Now()
	sig, grace := cmp.Or(p.StopSignal, syscall.SIGTERM), cmp.Or(p.StopGrace, 5*time.Second)
	_ = syscall.Kill(-pid, sig)
	how := "stopped"
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-p.done
		how = "killed (it outlived its grace)"
	}
	p.cmd = nil
	t.Logf("%s %s, pid %d, in %s", how, p.Name, pid, time.Since(began).Round(time.Millisecond))
}

// Kill kills the process at once, as a crash would.
func (p *Proc) Kill(t testing.TB) {
	t.Helper()
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-p.done
	p.cmd = nil
	t.Logf("killed %s, pid %d", p.Name, pid)
}

func logTail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// PortPair returns a free loopback port p whose p+10000 is free too:
// SeaweedFS serves gRPC on each HTTP port plus 10000. A port is handed out
// once per test process: a server that has not bound its ports yet must
// not share them with one started beside it, or one server's clients
// would reach the other's store.
func PortPair(t testing.TB) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 200 {
		p := 11000 + rand.IntN(9000)
		if !handedOut.ports[p] && free(p) && free(p+10000) {
			handedOut.ports[p] = true
			return p
		}
	}
	t.Fatal("no free port pair")
	return 0
}

// handedOut is the ports PortPair has returned in this process.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

func free(port int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

var (
	weedOnce sync.Once
	weedBin  string
	weedErr  error
)

// weedBinary is SeaweedFS's weed: $SIDECAR_WEED, or what
// tools/seaweedfs/build.sh builds (and caches) on first use.
func weedBinary(t testing.TB) string {
	t.Helper()
	weedOnce.Do(func() {
		if weedBin = os.Getenv("SIDECAR_WEED"); weedBin != "" {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		cmd := exec.Command("bash", filepath.Join(filepath.Dir(file), "..", "tools", "seaweedfs", "build.sh"))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		weedBin, weedErr = strings.TrimSpace(string(out)), err
	})
	if weedErr != nil {
		testenv.Missing(t, fmt.Sprintf("SeaweedFS is not built: tools/seaweedfs/build.sh: %v (it needs Go and network access; or set SIDECAR_WEED to a weed binary)", weedErr))
	}
	return weedBin
}

// Seaweed is SeaweedFS's `weed mini`: an Iceberg REST catalog over its own
// S3 store, bound to 127.0.0.1 with telemetry off.
type Seaweed struct {
	Proc
	RESTURL, S3URL string
	// Bucket is the table bucket the REST catalog serves; PlainBucket is
	// an ordinary S3 bucket, for the other catalogs' warehouses.
	Bucket, PlainBucket string
	// AccessKey and SecretKey are an admin's: they read and write every
	// bucket, through S3 and the catalog, and may write IAM when
	// WithIdentities allowed it.
	AccessKey string
	SecretKey string
	// ReaderKey and ReaderSecret (WithIdentities) are the catalog principal
	// of a client that only reads: the catalog lets it list and load tables,
	// S3 refuses its keys, so it reads data only with vended credentials.
	ReaderKey, ReaderSecret string
	// CredentialRole (WithVending) is the role the catalog assumes to vend
	// table-scoped STS credentials.
	CredentialRole string
}

// SeaweedOption changes how NewSeaweed configures a SeaweedFS.
type SeaweedOption func(t testing.TB, w *Seaweed, dir string)

// WithIdentities configures SeaweedFS's advanced IAM (-s3.config and
// -s3.iam.config, with STS) and allows IAM writes on the S3 port
// (-s3.iam.readOnly=false), as test/s3tables/sts_integration in SeaweedFS's
// own repository does. Besides the admin it knows the reader (ReaderKey),
// whose identity may only get and list S3 Tables resources, and a role
// over every object, which the catalog may assume to vend.
// The S3 store refuses requests without valid keys as it always does.
func WithIdentities() SeaweedOption {
	return func(t testing.TB, w *Seaweed, dir string) {
		w.ReaderKey = "sidecar-reader"
		w.ReaderSecret = "sidecar-reader-secret-" + strconv.Itoa(rand.IntN(1e6))
		w.CredentialRole = "arn:aws:iam::role/SidecarVended"
		signing := make([]byte, 32)
		for i := range signing {
			signing[i] = byte(rand.IntN(256))
		}
		allow := func(actions ...string) map[string]any {
			return map[string]any{"Version": "2012-10-17", "Statement": []map[string]any{
				{"Effect": "Allow", "Action": actions, "Resource": []string{"*"}},
			}}
		}
		config := map[string]any{
			"identities": []map[string]any{{
				"name":        "sidecar-reader",
				"credentials": []map[string]string{{"accessKey": w.ReaderKey, "secretKey": w.ReaderSecret}},
				"actions":     []string{"s3tables:Get*", "s3tables:List*"},
			}},
			"sts": map[string]any{"tokenDuration": "1h", "maxSessionLength": "12h", "issuer": "seaweedfs-sts",
				"signingKey": base64.StdEncoding.EncodeToString(signing)},
			"policy": map[string]any{"defaultEffect": "Deny", "storeType": "memory"},
			// The catalog narrows each session to the table, and to reading
			// unless the caller may update the table, so the admin writing
			// a table gets a session that writes it.
			"policies": []map[string]any{{"name": "Objects", "document": allow("s3:*")}},
			"roles": []map[string]any{{
				"roleName": "SidecarVended", "roleArn": w.CredentialRole,
				"attachedPolicies": []string{"Objects"},
				// The catalog assumes the role as the provider
				// "iceberg-catalog", which only a Federated principal
				// statement for sts:AssumeRoleWithCredentials admits.
				"trustPolicy": map[string]any{"Version": "2012-10-17", "Statement": []map[string]any{
					{"Effect": "Allow", "Principal": map[string]string{"Federated": "iceberg-catalog"},
						"Action": []string{"sts:AssumeRoleWithCredentials"}},
				}},
			}},
		}
		b, err := json.MarshalIndent(config, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "iam.json")
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		w.Args = append(w.Args, "-s3.config="+file, "-s3.iam.config="+file, "-s3.iam.readOnly=false")
	}
}

// WithVending is WithIdentities, and the REST catalog vends: a table-load
// answer to a client that asks for vended credentials (iceberg-go always
// does) carries STS session credentials scoped to the table's location,
// read-only unless the caller may update the table, with their expiry
// (s3.session-token-expires-at-ms), in config and storage-credentials. The
// sessions last 900 s, the shortest STS allows. SeaweedFS serves no
// credentials endpoint: a client renews by loading the table again.
func WithVending() SeaweedOption {
	return func(t testing.TB, w *Seaweed, dir string) {
		WithIdentities()(t, w, dir)
		w.Args = append(w.Args, "-s3.iceberg.credentialRole="+w.CredentialRole, "-s3.iceberg.credentialDurationSeconds=900")
	}
}

// StartSeaweed starts a SeaweedFS with one table bucket, stopped when the
// test ends.
func StartSeaweed(t testing.TB, opts ...SeaweedOption) *Seaweed {
	t.Helper()
	w := NewSeaweed(t, opts...)
	w.Start(t)
	return w
}

// NewSeaweed configures a SeaweedFS on free ports without starting it; it
// is stopped when the test ends.
func NewSeaweed(t testing.TB, opts ...SeaweedOption) *Seaweed {
	t.Helper()
	// Its S3 store is reached with explicit keys and region; the AWS SDK
	// must not probe the instance-metadata address off this machine.
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	bin := weedBinary(t)
	dir := t.TempDir()
	for _, d := range []string{"data", "logs"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	master, volume, filer, s3, rest, admin := PortPair(t), PortPair(t), PortPair(t), PortPair(t), PortPair(t), PortPair(t)
	w := &Seaweed{
		RESTURL:     fmt.Sprintf("http://127.0.0.1:%d", rest),
		S3URL:       fmt.Sprintf("http://127.0.0.1:%d", s3),
		Bucket:      "warehouse",
		PlainBucket: "lake",
		AccessKey:   "sidecar-test",
		SecretKey:   "sidecar-test-secret-" + strconv.Itoa(rand.IntN(1e6)),
	}
	w.Proc = Proc{
		Name: fmt.Sprintf("SeaweedFS (REST catalog %s, S3 %s)", w.RESTURL, w.S3URL),
		Args: []string{bin, "-logdir=" + filepath.Join(dir, "logs"), "mini",
			"-dir=" + filepath.Join(dir, "data"),
			"-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-master.telemetry=false",
			"-master.port=" + strconv.Itoa(master), "-volume.port=" + strconv.Itoa(volume),
			"-filer.port=" + strconv.Itoa(filer), "-s3.port=" + strconv.Itoa(s3),
			"-s3.port.iceberg=" + strconv.Itoa(rest), "-s3.port.lance=0",
			"-admin.port=" + strconv.Itoa(admin), "-admin.port.legacy=0",
			"-webdav=false", "-admin.ui=false", "-tableBucket=" + w.Bucket, "-bucket=" + w.PlainBucket},
		Env: []string{"AWS_ACCESS_KEY_ID=" + w.AccessKey, "AWS_SECRET_ACCESS_KEY=" + w.SecretKey},
		Log: filepath.Join(dir, "weed.log"),
	}
	for _, o := range opts {
		o(t, w, dir)
	}
	w.Ready = func() error {
		if err := httpOK(w.RESTURL + "/v1/config"); err != nil {
			return err
		}
		// The buckets are created after the services answer, and the
		// welcome banner is printed after that.
		if b, _ := os.ReadFile(w.Log); !strings.Contains(string(b), "All enabled components are running") {
			return errors.New("buckets not created yet")
		}
		return nil
	}
	t.Cleanup(func() { w.Stop(t) })
	return w
}

// Props are the REST catalog and FileIO properties that reach this
// SeaweedFS as the admin.
func (w *Seaweed) Props() map[string]string {
	p := w.S3Props()
	p["credential"] = w.AccessKey + ":" + w.SecretKey
	return p
}

// S3Props are the FileIO properties that reach its S3 store, with the keys
// and region always explicit: otherwise the AWS SDK looks for them off this
// machine.
func (w *Seaweed) S3Props() map[string]string {
	return map[string]string{
		"s3.endpoint":                 w.S3URL,
		"s3.access-key-id":            w.AccessKey,
		"s3.secret-access-key":        w.SecretKey,
		"s3.region":                   "us-east-1",
		"s3.force-virtual-addressing": "false",
	}
}

// ReaderProps are the REST catalog properties of a client that reads as
// the reader (WithIdentities), Polaris-style: OAuth2 client credentials
// (credential=id:secret, which iceberg-go exchanges at the catalog's
// /v1/oauth/tokens for a bearer token) with a scope, and no S3 keys at all.
func (w *Seaweed) ReaderProps() map[string]string {
	return map[string]string{"credential": w.ReaderKey + ":" + w.ReaderSecret, "scope": "PRINCIPAL_ROLE:ALL"}
}

func httpOK(url string) error {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// Postgres is a PostgreSQL server from Debian's packages on a private port
// and data directory, with password authentication.
type Postgres struct {
	Proc
	Port     int
	Password string
}

// StartPostgres initialises a cluster and starts it, stopped when the test
// ends. PostgreSQL refuses to run as root; as root it runs as the postgres
// user that Debian's package creates.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	dir, err := os.MkdirTemp("", "sidecar-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pg := &Postgres{Port: PortPair(t), Password: "pg-secret-" + strconv.Itoa(rand.IntN(1e6))}
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(pg.Password+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	var asUser []string
	if os.Geteuid() == 0 {
		asUser = []string{"runuser", "-u", "postgres", "--"}
		if err := os.Mkdir(data, 0o700); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("chown", "postgres:", data).CombinedOutput(); err != nil {
			t.Fatalf("chown the data directory to postgres: %v %s", err, out)
		}
	}
	initdb := append(asUser, testenv.PostgresTool(t, "initdb"), "-D", data, "-U", "postgres", "--auth=scram-sha-256",
		"--pwfile="+pwfile, "--no-sync", "--no-instructions")
	if out, err := exec.Command(initdb[0], initdb[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	pg.Proc = Proc{
		Name: fmt.Sprintf("PostgreSQL on 127.0.0.1:%d", pg.Port),
		Args: append(asUser, testenv.PostgresTool(t, "postgres"), "-D", data, "-p", strconv.Itoa(pg.Port),
			"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+data, "-c", "fsync=off"),
		Log: filepath.Join(dir, "postgres.log"),
		// Fast shutdown: the catalog's pooled connections would hold off
		// the default smart one.
		StopSignal: syscall.SIGINT,
	}
	pg.Ready = func() error {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", pg.Port), time.Second)
		if err != nil {
			return err
		}
		conn.Close()
		// Accepting connections is not yet accepting queries.
		out, err := exec.Command(testenv.PostgresTool(t, "pg_isready"), "-h", "127.0.0.1", "-p", strconv.Itoa(pg.Port)).CombinedOutput()
		if err != nil {
			return errors.New(strings.TrimSpace(string(out)))
		}
		return nil
	}
	pg.Start(t)
	return pg
}

// URI is the connection URI of the server with the given password.
func (pg *Postgres) URI(password string) string {
	return fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", password, pg.Port)
}
