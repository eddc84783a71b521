package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/druidiceberg/sidecar/catalog"
)

// configFile is the --config file: one or more named catalogs.
//
//	defaultCatalog: lake          # optional when there is one catalog
//	catalogs:
//	  - name: lake                # ?catalog=lake
//	    type: rest
//	    uri: https://polaris:8181/api/catalog
//	    warehouse: lake
//	    properties:
//	      credential: {env: POLARIS_CREDENTIAL}
//	      s3.secret-access-key: {file: /run/secrets/s3-secret}
//	    locationMap:
//	      - {from: "s3://lake/", to: "s3://lake-replica/"}
//	    allowTables: [sales, ops.audit] # optional; default: every table
//	    dataRoots: ["s3://imports/"]    # optional
//	    allowStoragePrefixes: ["s3://lake"] # optional
//	    scanPlanning: auto              # optional: auto, local or remote
type configFile struct {
	DefaultCatalog string        `yaml:"defaultCatalog"`
	Catalogs       []catalogYAML `yaml:"catalogs"`
}

type catalogYAML struct {
	Name string `yaml:"name"`
	Type string `yaml:"type"`
	// CatalogName is the name handed to iceberg-go when it differs from
	// Name; the SQL catalog keys its rows by it.
	CatalogName string            `yaml:"catalogName"`
	URI         value             `yaml:"uri"`
	Warehouse   value             `yaml:"warehouse"`
	Properties  map[string]value  `yaml:"properties"`
	LocationMap []mappingYAML     `yaml:"locationMap"`
	Tables      map[string]string `yaml:"tables"`
	// AllowTables, DataRoots and AllowStoragePrefixes are catalog.Config's
	// Allow, DataRoots and StoragePrefixes.
	AllowTables          []string `yaml:"allowTables"`
	DataRoots            []string `yaml:"dataRoots"`
	AllowStoragePrefixes []string `yaml:"allowStoragePrefixes"`
	// ScanPlanning is catalog.Config's ScanPlanning (--scan-planning).
	ScanPlanning string `yaml:"scanPlanning"`
}

type mappingYAML struct {
	From string `yaml:"from"`
	To   string `yaml:"to"`
}

// value is a configuration string: written inline, or read from an
// environment variable ({env: NAME}) or a file ({file: PATH}) so that
// secrets stay out of the file. What comes from env or a file is treated as
// a secret: scrubbed from every error and log line.
type value struct {
	Literal string
	Env     string
	File    string
}

func (v *value) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Decode(&v.Literal)
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if val.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: %s: want a string", val.Line, k.Value)
			}
			switch k.Value {
			case "env":
				v.Env = val.Value
			case "file":
				v.File = val.Value
			default:
				return fmt.Errorf("line %d: field %s not found: want {env: NAME} or {file: PATH}", k.Line, k.Value)
			}
		}
		if (v.Env == "") == (v.File == "") {
			return fmt.Errorf("line %d: give exactly one of env and file", n.Line)
		}
		return nil
	}
	return fmt.Errorf("line %d: want a string, {env: NAME} or {file: PATH}", n.Line)
}

// yamlError makes a decoding error one line that speaks of the file's
// sections, not of Go types.
func yamlError(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	r := strings.NewReplacer(" in type main.configFile", " at the top level", " in type main.catalogYAML", " in a catalog",
		" in type main.mappingYAML", " in a locationMap entry")
	return r.Replace(strings.Join(te.Errors, "; "))
}

// resolve returns the value and whether it is a secret. The error names the
// variable or file, never a value.
func (v value) resolve(getenv func(string) string) (string, bool, error) {
	switch {
	case v.Env != "":
		s := getenv(v.Env)
		if s == "" {
			return "", false, fmt.Errorf("environment variable %s is not set", v.Env)
		}
		return s, true, nil
	case v.File != "":
		b, err := os.ReadFile(v.File)
		if err != nil {
			return "", false, err
		}
		s := strings.TrimRight(string(b), "\r\n")
		if s == "" {
			return "", false, fmt.Errorf("%s is empty", v.File)
		}
		return s, true, nil
	}
	return v.Literal, false, nil
}

// catalogNameRE is what a catalog name may be: it goes into URLs and logs.
var catalogNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// loadConfigFile reads and validates the --config file. Parsing is strict:
// an unknown key is an error, so a typo never silently changes what is
// served.
func loadConfigFile(path string, getenv func(string) string) (cats []catalog.Config, def string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("--config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f configFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, "", fmt.Errorf("--config %s is empty", path)
		}
		return nil, "", fmt.Errorf("--config %s: %s", path, yamlError(err))
	}
	if err := dec.Decode(new(configFile)); !errors.Is(err, io.EOF) {
		return nil, "", fmt.Errorf("--config %s: one YAML document expected", path)
	}
	if len(f.Catalogs) == 0 {
		return nil, "", fmt.Errorf("--config %s: no catalog under catalogs", path)
	}
	var names []string
	for i, c := range f.Catalogs {
		e, err := c.entry(getenv)
		if err != nil {
			name := c.Name
			if name == "" {
				name = fmt.Sprintf("#%d", i+1)
			}
			return nil, "", fmt.Errorf("--config %s: catalog %s: %w", path, name, err)
		}
		if slices.Contains(names, e.Name) {
			return nil, "", fmt.Errorf("--config %s: catalog %s is defined twice", path, e.Name)
		}
		names = append(names, e.Name)
		cats = append(cats, e)
	}
	if f.DefaultCatalog != "" && !slices.Contains(names, f.DefaultCatalog) {
		return nil, "", fmt.Errorf("--config %s: defaultCatalog %s is not one of the catalogs (%s)",
			path, f.DefaultCatalog, strings.Join(names, ", "))
	}
	return cats, f.DefaultCatalog, nil
}

// entry validates one catalog and resolves its references.
func (c catalogYAML) entry(getenv func(string) string) (catalog.Config, error) {
	if !catalogNameRE.MatchString(c.Name) {
		return catalog.Config{}, fmt.Errorf("name %q: want letters, digits, '_', '.' or '-' (at most 64)", c.Name)
	}
	e := catalog.Config{Name: c.Name, IcebergName: c.CatalogName, Tables: c.Tables, Props: map[string]string{},
		Allow: c.AllowTables, DataRoots: c.DataRoots, StoragePrefixes: c.AllowStoragePrefixes, ScanPlanning: c.ScanPlanning}
	resolve := func(field string, v value) (string, error) {
		s, secret, err := v.resolve(getenv)
		if err != nil {
			return "", fmt.Errorf("%s: %w", field, err)
		}
		if secret {
			e.Secrets = append(e.Secrets, s)
		}
		if v.File != "" {
			// A credential file: no table may open it.
			e.PrivateFiles = append(e.PrivateFiles, v.File)
		}
		return s, nil
	}
	var err error
	for k, v := range c.Properties {
		if e.Props[k], err = resolve("properties."+k, v); err != nil {
			return e, err
		}
	}
	// A field and a property of the same meaning: as with the flags
	// (settle), both given must agree.
	for _, f := range []struct {
		field string
		v     value
		to    *string
		key   string
	}{{"type", value{Literal: c.Type}, &e.Type, "type"}, {"uri", c.URI, &e.URI, "uri"}, {"warehouse", c.Warehouse, &e.Warehouse, "warehouse"}} {
		s, err := resolve(f.field, f.v)
		if err != nil {
			return e, err
		}
		if *f.to, err = settle(f.field, s, s != "", "properties.", e.Props, f.key); err != nil {
			return e, err
		}
	}
	for i, m := range c.LocationMap {
		if m.From == "" || m.To == "" {
			return e, fmt.Errorf("locationMap #%d: want both from and to", i+1)
		}
		e.LocationMap = append(e.LocationMap, catalog.Mapping{From: m.From, To: m.To})
	}
	if err := e.Validate(); err != nil {
		return e, err
	}
	return e, nil
}
