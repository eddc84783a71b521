package druidsim

import (
	"bytes"
	"compress/bzip2"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// maxTries is how often Druid tries to open or resume one URI:
// RetryingInputEntity.getMaxRetries, RetryUtils.DEFAULT_MAX_TRIES
// (processing/src/main/java/org/apache/druid/java/util/common/RetryUtils.java).
const maxTries = 10

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
	switch s.format.Type {
	case "json", "parquet":
	default:
		return s, fmt.Errorf("inputFormat type %q is not modelled", s.format.Type)
	}
	return s, nil
}

// read checks an input source and reads every row it serves.
func (d *Druid) read(ctx context.Context, src, format json.RawMessage) (source, []map[string]any, error) {
	s, err := parseSource(src, format)
	if err != nil {
		return s, nil, err
	}
	rows, err := d.rows(ctx, s)
	return s, rows, err
}

// rows reads every row of the source, as Druid's readers present them.
// A line the JSON reader cannot parse is an error: MSQ's default
// maxParseExceptions is 0 (MSQMode strict), native batch counts it.
func (d *Druid) rows(ctx context.Context, s source) ([]map[string]any, error) {
	var bodies [][]byte
	if s.in.Type == "inline" {
		bodies = [][]byte{[]byte(s.in.Data)}
	} else {
		for _, uri := range s.in.URIs {
			b, err := d.fetch(ctx, uri, s.in)
			if err != nil {
				return nil, err
			}
			bodies = append(bodies, b)
		}
	}
	var out []map[string]any
	for _, b := range bodies {
		if s.format.Type == "parquet" {
			rows, err := d.parquetRows(b, s.format.BinaryAsString)
			if err != nil {
				return nil, err
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
				return nil, fmt.Errorf("CannotParseExternalData: line %q: %w", line, err)
			}
			out = append(out, obj)
		}
	}
	return out, nil
}

// fetch reads one URI as Druid's HttpEntity does, through
// RetryingInputEntity and RetryingInputStream
// (processing/src/main/java/org/apache/druid/data/input/impl/HttpEntity.java,
// .../data/input/RetryingInputEntity.java, .../impl/RetryingInputStream.java):
//
//   - every request carries Range: bytes=N-, N the bytes read so far,
//     bytes=0- on the first;
//   - an answer with a Content-Range starting "bytes " is taken as the
//     rest from N (when N > 0; Druid does not check the start it names);
//     any other answer is read from its first byte and N bytes skipped, and
//     one shorter than N fails the read without a retry (ISE);
//   - a status of 400 or more is an IOException (HttpURLConnection), and so
//     is a connection that breaks: both are retried, resuming at the bytes
//     read, up to maxTries times;
//   - the bytes are decompressed by the URI path's extension
//     (CompressionUtils.decompress: .gz, .bz2, .zst are modelled; .xz,
//     .sz and .zip are refused as not modelled); Range counts the
//     compressed bytes.
func (d *Druid) fetch(ctx context.Context, uri string, s inputSource) ([]byte, error) {
	var got []byte
	var errs []error
	for try := 1; ; try++ {
		err := d.fetchFrom(ctx, uri, s, int64(len(got)), &got)
		if err == nil {
			break
		}
		var fatal fatalError
		if errors.As(err, &fatal) || ctx.Err() != nil {
			return nil, err
		}
		errs = append(errs, err)
		d.mu.Lock()
		d.retries++
		d.mu.Unlock()
		if try >= maxTries {
			return nil, fmt.Errorf("GET %s: %d tries failed: %w", uri, try, errors.Join(errs...))
		}
	}
	return decompress(uri, got)
}

// fatalError is a failure Druid does not retry.
type fatalError struct{ error }

// fetchFrom makes one request from offset and appends what it reads to
// got; a read that breaks keeps what arrived.
func (d *Druid) fetchFrom(ctx context.Context, uri string, s inputSource, offset int64, got *[]byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return fatalError{err}
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
	if s.Username != "" {
		pw, err := d.password(s.Password)
		if err != nil {
			return fatalError{err}
		}
		req.SetBasicAuth(s.Username, pw)
	}
	c := d.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", uri, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("GET %s: %s: %s", uri, resp.Status, b)
	}
	body := io.Reader(resp.Body)
	if !(strings.HasPrefix(resp.Header.Get("Content-Range"), "bytes ") && offset > 0) {
		skipped, err := io.CopyN(io.Discard, body, offset)
		if err != nil && skipped < offset {
			if errors.Is(err, io.EOF) {
				return fatalError{fmt.Errorf("GET %s: Requested to skip [%d] bytes, but actual number of bytes skipped is [%d]", uri, offset, skipped)}
			}
			return fmt.Errorf("GET %s: skip: %w", uri, err)
		}
	}
	var b bytes.Buffer
	_, err = io.Copy(&b, body)
	*got = append(*got, b.Bytes()...)
	if err != nil {
		return fmt.Errorf("GET %s: read: %w", uri, err)
	}
	return nil
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

// decompress applies CompressionUtils.decompress by the URI path's
// extension (the query string is not part of the path).
func decompress(uri string, b []byte) ([]byte, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, err
	}
	var r io.Reader
	switch p := u.Path; {
	case strings.HasSuffix(p, ".gz"):
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", uri, err)
		}
		defer zr.Close()
		r = zr
	case strings.HasSuffix(p, ".bz2"):
		r = bzip2.NewReader(bytes.NewReader(b))
	case strings.HasSuffix(p, ".zst"):
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: zstd: %w", uri, err)
		}
		defer zr.Close()
		r = zr
	case strings.HasSuffix(p, ".xz"), strings.HasSuffix(p, ".sz"), strings.HasSuffix(p, ".zip"):
		return nil, fmt.Errorf("%s: Druid decompresses this extension; the model does not", uri)
	default:
		return b, nil
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: decompress: %w", uri, err)
	}
	return out, nil
}
