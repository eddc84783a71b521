package main

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// syncConfig is the one configuration of `sidecar sync`, validated before
// anything starts: one struct per component, each registering its own
// flags. Flags come first; SIDECAR_<NAME> environment variables fill what
// the flags leave unset. The pairs come from the --config file.
type syncConfig struct {
	syncLoopConfig
	sidecarClientConfig
	druidConfig
	// HTTPTimeout bounds one request to the sidecar or Druid.
	HTTPTimeout time.Duration
	logConfig
}

// syncLoopConfig is what sync keeps in step, and how often.
type syncLoopConfig struct {
	ConfigFile string
	Pairs      []syncPair
	StateFile  string
	Once       bool
	DryRun     bool
	Interval   time.Duration
}

func (c *syncLoopConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.ConfigFile, "config", "", "YAML file of the (table → datasource) pairs to keep in step (required)")
	fs.StringVar(&c.StateFile, "state-file", "./sidecar-sync-state.json", "where the last snapshot applied per datasource is kept")
	fs.BoolVar(&c.Once, "once", false, "sync every pair once and exit (for cron); otherwise loop every --interval")
	fs.BoolVar(&c.DryRun, "dry-run", false, "print the statements that would be submitted; submit nothing, write no state")
	fs.DurationVar(&c.Interval, "interval", 5*time.Minute, "time between two syncs in a loop")
}

// sidecarClientConfig is the running sidecar that sync asks for changes.
type sidecarClientConfig struct {
	SidecarURL string
	// SidecarAuth is the Basic credentials sync presents to the sidecar;
	// nil sends none. They come from a file or the environment, never
	// from a flag value.
	SidecarAuthFile string
	SidecarAuth     *credential
}

func (c *sidecarClientConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.SidecarURL, "sidecar", "http://127.0.0.1:8080", "base URL of the running sidecar that plans the changes (GET /changes)")
	fs.StringVar(&c.SidecarAuthFile, "basic-auth-file", "", "file whose first username:password line is sent to the sidecar (or SIDECAR_BASIC_AUTH_USERNAME and _PASSWORD)")
}

// druidConfig is the Druid cluster sync submits to, and how it waits for
// its tasks.
type druidConfig struct {
	// DruidURL is a Router: statements and task status both go there,
	// unless BrokerURL or OverlordURLs say otherwise.
	DruidURL string
	// BrokerURL is where statements go: a Broker, or a Router.
	BrokerURL string
	// OverlordURLs are the Overlords (comma-separated), or a Router with
	// the management proxy: where task status comes from. A standby's
	// redirect is followed to one of them only.
	OverlordURLs string
	// CoordinatorURL is where the segments of an emptied interval are
	// marked unused on a Druid before 29: a Coordinator, or a Router.
	CoordinatorURL string
	// MaxTasks is the most Druid tasks sync's statements take at once,
	// each counting its maxNumTasks (the controller and its workers).
	MaxTasks     int
	PollInterval time.Duration
	TaskTimeout  time.Duration
	// DruidAuth is the Basic credentials sync presents to Druid; nil
	// sends none. They come from a file or the environment, never from a
	// flag value.
	DruidAuthFile string
	DruidAuth     *credential
}

func (c *druidConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.DruidURL, "druid", "", "base URL of a Druid Router, e.g. http://router:8888, for statements and task status "+
		"(the task API needs druid.router.managementProxy.enabled=true); or give --druid-broker and --druid-overlord")
	fs.StringVar(&c.BrokerURL, "druid-broker", "", "base URL of a Druid Broker (or Router) that takes the statements; default --druid")
	fs.StringVar(&c.OverlordURLs, "druid-overlord", "", "base URLs of the Druid Overlords, comma-separated (or a Router with the "+
		"management proxy), for task status; a standby's redirect is followed only to one of them; default --druid")
	fs.StringVar(&c.CoordinatorURL, "druid-coordinator", "", "base URL of the Druid Coordinator (or a Router with the management "+
		"proxy) that drops the segments of an interval that lost its last row, on a Druid before 29; default --druid, "+
		"else the first --druid-overlord (a Coordinator that runs the Overlord)")
	fs.IntVar(&c.MaxTasks, "max-tasks", 4, "most Druid tasks sync's statements take at once, each counting its maxNumTasks "+
		"(the controller and its workers)")
	fs.DurationVar(&c.PollInterval, "poll-interval", 5*time.Second, "time between two task status requests")
	fs.DurationVar(&c.TaskTimeout, "task-timeout", 2*time.Hour, "how long a sync waits for its Druid tasks before it gives up (the work is redone next time)")
	fs.StringVar(&c.DruidAuthFile, "druid-auth-file", "", "file whose first username:password line is sent to Druid (or SIDECAR_DRUID_USERNAME and _PASSWORD)")
}

// credential is one username and password.

// syncPair is one Iceberg table kept in step with one Druid datasource.
type syncPair struct {
	Table      string `yaml:"table"`
	Catalog    string `yaml:"catalog"`
	DataSource string `yaml:"dataSource"`
	TimeColumn string `yaml:"timeColumn"`
	// ConstantTime, for a table without a time column instead of
	// TimeColumn, is every row's __time (GET /changes' constantTime), an
	// ISO 8601 instant kept as Druid writes it.
	ConstantTime string `yaml:"constantTime"`
	// Granularity is the datasource's segment granularity; DAY when empty.
	Granularity string `yaml:"granularity"`
	// Mode is GET /changes' mode: auto (raw Parquet files where no delete
	// file applies), rows or files.
	Mode string `yaml:"mode"`
	// Context is merged over the MSQ context /changes gives each statement.
	Context map[string]any `yaml:"context"`
	// ClusteredBy are the statements' CLUSTERED BY columns (GET /changes'
	// clusteredBy).
	ClusteredBy []string `yaml:"clusteredBy"`
}

// syncFile is the --config file of sync.
//
//	pairs:
//	  - table: sales.orders        # NAMESPACE.NAME
//	    catalog: lake              # optional: the sidecar's ?catalog=
//	    dataSource: orders
//	    timeColumn: order_ts       # or, for a table without one, constantTime: 2000-01-01T00:00:00Z
//	    granularity: DAY           # optional; the datasource's segment granularity
//	    mode: auto                 # optional: auto, rows or files
//	    context: {maxNumTasks: 4}  # optional: merged over the MSQ context
//	    clusteredBy: [customer]    # optional: CLUSTERED BY of every statement
type syncFile struct {
	Pairs []syncPair `yaml:"pairs"`
}

// parseSync parses the arguments of `sidecar sync`.
func parseSync(args []string, getenv func(string) string, help io.Writer) (syncConfig, error) {
	fs := flag.NewFlagSet("sidecar sync", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c syncConfig
	c.syncLoopConfig.register(fs)
	c.sidecarClientConfig.register(fs)
	c.druidConfig.register(fs)
	fs.DurationVar(&c.HTTPTimeout, "http-timeout", 5*time.Minute, "timeout of one request to the sidecar or Druid")
	c.logConfig.register(fs)
	if _, err := parseFlags(fs, args, getenv, help, "usage: sidecar sync --config sync.yaml [flags]"); err != nil {
		return c, err
	}
	var err error
	if c.SidecarAuth, err = oneCredential("--basic-auth-file", c.SidecarAuthFile,
		"SIDECAR_BASIC_AUTH_USERNAME", "SIDECAR_BASIC_AUTH_PASSWORD", getenv); err != nil {
		return c, err
	}
	if c.DruidAuth, err = oneCredential("--druid-auth-file", c.DruidAuthFile,
		"SIDECAR_DRUID_USERNAME", "SIDECAR_DRUID_PASSWORD", getenv); err != nil {
		return c, err
	}
	if err := c.validate(); err != nil {
		return c, err
	}
	if c.Pairs, err = loadSyncFile(c.ConfigFile); err != nil {
		return c, err
	}
	for _, p := range c.Pairs {
		if n := maxNumTasks(p.Context); n > c.MaxTasks {
			return c, fmt.Errorf("--config %s: pair %s: context maxNumTasks %d is more than --max-tasks %d, so its statements "+
				"could never be submitted", c.ConfigFile, p.DataSource, n, c.MaxTasks)
		}
	}
	return c, nil
}

func (c syncConfig) validate() error {
	if c.ConfigFile == "" {
		return errors.New("--config is required: the YAML file of the pairs to sync")
	}
	urls := []struct{ flag, val string }{{"--sidecar", c.SidecarURL}, {"--druid", c.DruidURL}, {"--druid-broker", c.BrokerURL}, {"--druid-coordinator", c.CoordinatorURL}}
	for _, o := range c.overlords() {
		if o != c.DruidURL {
			urls = append(urls, struct{ flag, val string }{"--druid-overlord", o})
		}
	}
	for _, u := range urls {
		if u.val == "" {
			continue
		}
		p, err := url.Parse(u.val)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("%s %q: want an http(s) URL such as http://host:8888", u.flag, u.val)
		}
	}
	if c.SidecarURL == "" {
		return errors.New("--sidecar is required")
	}
	if (c.broker() == "" || len(c.overlords()) == 0) && !c.DryRun {
		return errors.New("--druid (a Router), or --druid-broker and --druid-overlord, are required (or --dry-run)")
	}
	if c.MaxTasks < 2 {
		return fmt.Errorf("--max-tasks %d: an MSQ statement takes at least 2 tasks (a controller and a worker)", c.MaxTasks)
	}
	if c.StateFile == "" && !c.DryRun {
		return errors.New("--state-file must not be empty")
	}
	if c.Interval <= 0 || c.PollInterval <= 0 || c.TaskTimeout <= 0 || c.HTTPTimeout <= 0 {
		return errors.New("--interval, --poll-interval, --task-timeout and --http-timeout must be positive")
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("--log-format %q: want text or json", c.LogFormat)
	}
	return nil
}

// broker is where statements go.
func (c druidConfig) broker() string { return cmp.Or(c.BrokerURL, c.DruidURL) }

// coordinator is where segments are marked unused.
func (c druidConfig) coordinator() string {
	if o := c.overlords(); len(o) > 0 {
		return cmp.Or(c.CoordinatorURL, c.DruidURL, o[0])
	}
	return cmp.Or(c.CoordinatorURL, c.DruidURL)
}

// overlords are where task status comes from.
func (c druidConfig) overlords() []string {
	var out []string
	for _, o := range strings.Split(c.OverlordURLs, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
		}
	}
	if len(out) == 0 && c.DruidURL != "" {
		out = []string{c.DruidURL}
	}
	return out
}

// maxNumTasks is the Druid tasks an MSQ statement of this context runs:
// its maxNumTasks (MultiStageQueryContext, default 2), the controller
// included.
func maxNumTasks(qctx map[string]any) int {
	switch n := qctx["maxNumTasks"].(type) {
	case float64:
		return max(int(n), 2)
	case int:
		return max(n, 2)
	}
	return 2
}

// loadSyncFile reads and validates the pairs. Parsing is strict: an
// unknown key is an error that names it and its line.
func loadSyncFile(path string) ([]syncPair, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f syncFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("--config %s is empty", path)
		}
		var te *yaml.TypeError
		if errors.As(err, &te) {
			r := strings.NewReplacer(" in type main.syncFile", " at the top level", " in type main.syncPair", " in a pair")
			return nil, fmt.Errorf("--config %s: %s", path, r.Replace(strings.Join(te.Errors, "; ")))
		}
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	if err := dec.Decode(new(syncFile)); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("--config %s: one YAML document expected", path)
	}
	if len(f.Pairs) == 0 {
		return nil, fmt.Errorf("--config %s: no pair under pairs", path)
	}
	var seen []string
	for i := range f.Pairs {
		p := &f.Pairs[i]
		where := fmt.Sprintf("--config %s: pair %d", path, i+1)
		if p.DataSource == "" || p.TimeColumn == "" && p.ConstantTime == "" {
			return nil, fmt.Errorf("%s: dataSource and timeColumn (or constantTime, for a table without a time column) are required", where)
		}
		if p.ConstantTime != "" {
			if p.TimeColumn != "" {
				return nil, fmt.Errorf("%s: timeColumn and constantTime exclude each other: give one", where)
			}
			at, err := druid.ParseInstant(p.ConstantTime)
			if y := at.UTC().Year(); err == nil && (y < 1 || y > 9999) {
				err = errors.New("want a time in the years 1 to 9999")
			}
			if err != nil {
				return nil, fmt.Errorf("%s: constantTime: %w", where, err)
			}
			p.ConstantTime = at.UTC().Format("2006-01-02T15:04:05.000Z")
		}
		if _, err := token.ParseIdentifier(p.Table); err != nil {
			return nil, fmt.Errorf("%s: table: %w", where, err)
		}
		if err := druid.CheckDataSource(p.DataSource); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		g, err := druid.ParseGranularity(p.Granularity)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		p.Granularity = string(g)
		m, err := splits.ParseMode(p.Mode)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		p.Mode = string(m)
		for _, c := range p.ClusteredBy {
			// /changes takes them comma-separated.
			if strings.TrimSpace(c) == "" || strings.Contains(c, ",") {
				return nil, fmt.Errorf("%s: clusteredBy %q: want column names, without commas", where, c)
			}
		}
		if slices.Contains(seen, p.DataSource) {
			return nil, fmt.Errorf("%s: dataSource %q is the target of another pair: a datasource mirrors one table", where, p.DataSource)
		}
		seen = append(seen, p.DataSource)
	}
	return f.Pairs, nil
}
