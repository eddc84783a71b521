package druidsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// inputSource is the part of a Druid inputSource the model reads. Like
// Druid's mapper (DefaultObjectMapper: FAIL_ON_UNKNOWN_PROPERTIES false)
// it ignores properties it does not know.
type inputSource struct {
	Type     string   `json:"type"`
	URIs     []string `json:"uris"`
	Data     string   `json:"data"`
	Username string   `json:"httpAuthenticationUsername"`
	// Password is a PasswordProvider: a plain string
	// (DefaultPasswordProvider.fromString) or {"type":"environment",
	// "variable":…} (processing/src/main/java/org/apache/druid/metadata/
	// PasswordProvider.java).
	Password json.RawMessage `json:"httpAuthenticationPassword"`
}

// inputFormat is the part of a Druid inputFormat the model reads.
type inputFormat struct {
	Type           string `json:"type"`
	BinaryAsString bool   `json:"binaryAsString"`
	// FlattenSpec is a JSONPathSpec; the model reads fields of type path
	// whose expr is a root field ($.name), under useFieldDiscovery.
	FlattenSpec *struct {
		UseFieldDiscovery bool `json:"useFieldDiscovery"`
		Fields            []struct {
			Type string `json:"type"`
			Name string `json:"name"`
			Expr string `json:"expr"`
		} `json:"fields"`
	} `json:"flattenSpec"`
}

// flatten adds to a row the fields of the format's flattenSpec, as
// Druid's JSONFlattenerMaker does for a root path: the value of the named
// field, or null.
func (f inputFormat) flatten(row map[string]any) {
	if f.FlattenSpec == nil {
		return
	}
	for _, fl := range f.FlattenSpec.Fields {
		row[fl.Name] = row[strings.TrimPrefix(fl.Expr, "$.")]
	}
}

// source is one input source to read, checked as Druid constructs it.
type source struct {
	in     inputSource
	format inputFormat
}

// parseSource decodes and checks an inputSource and inputFormat as
// Druid's constructors do. HttpInputSource refuses an empty uris list
// (processing/src/main/java/org/apache/druid/data/input/impl/
// HttpInputSource.java: checkArgument(uris != null && !uris.isEmpty(),
// "Empty URIs")) and protocols other than http and https
// (HttpInputSourceConfig.DEFAULT_ALLOWED_PROTOCOLS).
func parseSource(src, format json.RawMessage) (source, error) {
	var s source
	if err := json.Unmarshal(src, &s.in); err != nil {
		return s, fmt.Errorf("inputSource: %w", err)
	}
	if err := json.Unmarshal(format, &s.format); err != nil {
		return s, fmt.Errorf("inputFormat: %w", err)
	}
	switch s.in.Type {
	case "http":
		if len(s.in.URIs) == 0 {
			return s, errors.New("HttpInputSource: Empty URIs")
		}
		for _, u := range s.in.URIs {
			p, err := url.Parse(u)
			if err != nil || (p.Scheme != "http" && p.Scheme != "https") {
				return s, fmt.Errorf("HttpInputSource: Only [http, https] protocols are allowed: %q", u)
			}
		}
	case "inline":
		if s.in.Data == "" {
			return s, errors.New("InlineInputSource: empty data")
		}
	default:
		return s, fmt.Errorf("inputSource type %q is not modelled", s.in.Type)
	}
	if fs := s.format.FlattenSpec; fs != nil {
		if !fs.UseFieldDiscovery {
			return s, errors.New("inputFormat flattenSpec without useFieldDiscovery is not modelled")
		}
		for _, f := range fs.Fields {
			if name := strings.TrimPrefix(f.Expr, "$."); f.Type != "path" || name == f.Expr || strings.ContainsAny(name, ".[]*$") {
				return s, fmt.Errorf("inputFormat flattenSpec field %s %q is not modelled", f.Type, f.Expr)
			}
		}
	}
	switch s.format.Type {
	case "json", "parquet":
	case "avro_ocf":
		// The sidecar never hands Druid an Avro file: Druid's avro_ocf
		// format (extensions-core/avro-extensions/src/main/java/org/apache/
		// druid/data/input/avro/AvroOCFReader.java) reads records by name
		// with the writer's schema, and AvroFlattenerMaker.transformValue
		// keeps a timestamp as its raw long, a decimal or uuid as bytes, and
		// drops a list's nulls: not the values Iceberg reads.
		return s, errors.New("inputFormat avro_ocf: Druid reads Iceberg's Avro files by name with other types; " +
			"the sidecar serves them on the row path")
	default:
		return s, fmt.Errorf("inputFormat type %q is not modelled", s.format.Type)
	}
	return s, nil
}

// read checks an input source and reads every row it serves.
func (d *Druid) read(ctx context.Context, src, format json.RawMessage) (source, []map[string]any, []int, error) {
	s, err := parseSource(src, format)
	if err != nil {
		return s, nil, nil, err
	}
	rows, uris, err := d.rows(ctx, s)
	return s, rows, uris, err
}

// rows reads every row of the source, as Druid's readers present them.
// A line the JSON reader cannot parse is an error: MSQ's default
// maxParseExceptions is 0 (MSQMode strict), native batch counts it.
// uris says, row by row, which of the source's URIs (its splits) the row
// came from.
func (d *Druid) rows(ctx context.Context, s source) (out []map[string]any, uris []int, err error) {
	bodies := [][]byte{[]byte(s.in.Data)}
	if s.in.Type == "http" {
		if bodies, err = d.fetchAll(ctx, s.in); err != nil {
			return nil, nil, err
		}
	}
	for i, b := range bodies {
		if s.format.Type == "parquet" {
			rows, err := d.parquetRows(b, s.format.BinaryAsString)
			if err != nil {
				return nil, nil, err
			}
			for _, r := range rows {
				s.format.flatten(r)
				uris = append(uris, i)
			}
			out = append(out, rows...)
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			obj, err := jacksonLine(line)
			if err != nil {
				return nil, nil, fmt.Errorf("CannotParseExternalData: line %q: %w", line, err)
			}
			s.format.flatten(obj)
			out = append(out, obj)
			uris = append(uris, i)
		}
	}
	return out, uris, nil
}

// password resolves a PasswordProvider.
func (d *Druid) password(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var plain string
	if json.Unmarshal(raw, &plain) == nil {
		return plain, nil
	}
	var p struct {
		Type     string `json:"type"`
		Variable string `json:"variable"`
		Password string `json:"password"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", fmt.Errorf("httpAuthenticationPassword: %w", err)
	}
	switch p.Type {
	case "", "default":
		return p.Password, nil
	case "environment":
		if d.Getenv == nil {
			return "", errors.New("the model has no environment for an environment password provider")
		}
		return d.Getenv(p.Variable), nil
	}
	return "", fmt.Errorf("password provider type %q is not modelled", p.Type)
}
