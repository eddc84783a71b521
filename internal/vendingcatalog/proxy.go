package vendingcatalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"regexp"
	"strconv"
	"strings"
)

// accessDelegation is the header with which a client asks a REST catalog
// to vend credentials; the front drops it, so SeaweedFS never vends.
const accessDelegation = "X-Iceberg-Access-Delegation"

// tablePath matches a table's path, with or without the catalog prefix,
// and the credentials endpoint under it.
var tablePath = regexp.MustCompile(`^/v1/(?:[^/]+/)?namespaces/[^/]+/tables/[^/]+(/credentials)?$`)

// seaweedEndpoints are the REST endpoints SeaweedFS's catalog serves, as
// /v1/config advertises them: iceberg-go takes an advertised list as the
// whole truth, so advertising the credentials endpoint means listing the
// others too.
var seaweedEndpoints = []string{
	"GET /v1/{prefix}/namespaces",
	"POST /v1/{prefix}/namespaces",
	"GET /v1/{prefix}/namespaces/{namespace}",
	"HEAD /v1/{prefix}/namespaces/{namespace}",
	"DELETE /v1/{prefix}/namespaces/{namespace}",
	"POST /v1/{prefix}/namespaces/{namespace}/properties",
	"GET /v1/{prefix}/namespaces/{namespace}/tables",
	"POST /v1/{prefix}/namespaces/{namespace}/tables",
	"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"POST /v1/{prefix}/namespaces/{namespace}/register",
	"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
	"POST /v1/{prefix}/tables/rename",
	"POST /v1/{prefix}/transactions/commit",
	credentialsEndpoint,
}

const credentialsEndpoint = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"

// storageCredential is one entry of a load answer's storage-credentials.
type storageCredential struct {
	Prefix string            `json:"prefix"`
	Config map[string]string `json:"config"`
}

// handler is the front: the credentials endpoint, and SeaweedFS's catalog
// behind a reverse proxy that rewrites /v1/config and table loads.
func (f *Front) handler() http.Handler {
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(f.catalog)
			pr.Out.Header.Del(accessDelegation)
			// The answers are rewritten: they must come uncompressed.
			pr.Out.Header.Del("Accept-Encoding")
		},
		ModifyResponse: f.rewrite,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath()
		if m := tablePath.FindStringSubmatch(p); r.Method == http.MethodGet && m != nil && m[1] != "" && f.opts.CredentialsEndpoint {
			f.serveCredentials(w, r, strings.TrimSuffix(p, m[1]))
			return
		}
		proxy.ServeHTTP(w, r)
	})
}

// rewrite adds the endpoints to /v1/config and the key to table loads.
func (f *Front) rewrite(resp *http.Response) error {
	req := resp.Request
	if req.Method != http.MethodGet || resp.StatusCode != http.StatusOK {
		return nil
	}
	var edit func(map[string]json.RawMessage) error
	switch m := tablePath.FindStringSubmatch(req.URL.EscapedPath()); {
	case req.URL.Path == "/v1/config" && f.opts.CredentialsEndpoint:
		edit = func(doc map[string]json.RawMessage) error {
			return setJSON(doc, "endpoints", seaweedEndpoints)
		}
	case m != nil && m[1] == "":
		edit = f.vendInLoad
	default:
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read %s: %w", req.URL.Path, err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return fmt.Errorf("decode %s: %w", req.URL.Path, err)
	}
	if err := edit(doc); err != nil {
		return fmt.Errorf("rewrite %s: %w", req.URL.Path, err)
	}
	if body, err = json.Marshal(doc); err != nil {
		return fmt.Errorf("encode %s: %w", req.URL.Path, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Header.Del("Content-Encoding")
	return nil
}

func setJSON(doc map[string]json.RawMessage, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	doc[name] = b
	return nil
}

// vendInLoad puts the key into a load answer where the mode says.
func (f *Front) vendInLoad(doc map[string]json.RawMessage) error {
	f.mu.Lock()
	k := f.currentLocked()
	f.mu.Unlock()
	if f.opts.Mode == Nothing {
		f.count(func(c *Counts) { c.Loads++ })
		return nil
	}
	location, err := tableLocation(doc)
	if err != nil {
		return err
	}
	config := map[string]string{}
	if raw, ok := doc["config"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &config); err != nil {
			return fmt.Errorf("decode config: %w", err)
		}
	}
	config["s3.endpoint"], config["s3.region"] = f.opts.S3, f.opts.Region
	vended := f.keyProps(k)
	switch f.opts.Mode {
	case Config:
		for name, v := range vended {
			config[name] = v
		}
	case StorageCredentials:
		if err := setJSON(doc, "storage-credentials", []storageCredential{{Prefix: location, Config: vended}}); err != nil {
			return err
		}
	case UnknownKey:
		for name, v := range vended {
			config[name] = v
		}
		if err := setJSON(doc, "storage-credentials", []storageCredential{{Prefix: location, Config: vended}}); err != nil {
			return err
		}
	}
	if err := setJSON(doc, "config", config); err != nil {
		return err
	}
	f.count(func(c *Counts) { c.Loads++; c.VendedLoads++ })
	return nil
}

// count updates the counts.
func (f *Front) count(update func(*Counts)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	update(&f.counts)
}

// keyProps are the FileIO properties that vend k.
func (f *Front) keyProps(k Key) map[string]string {
	return map[string]string{
		"s3.endpoint":                    f.opts.S3,
		"s3.region":                      f.opts.Region,
		"s3.access-key-id":               k.AccessKeyID,
		"s3.secret-access-key":           k.SecretAccessKey,
		"s3.session-token-expires-at-ms": strconv.FormatInt(k.Expires.UnixMilli(), 10),
	}
}

// tableLocation is the table location in a load answer's metadata.
func tableLocation(doc map[string]json.RawMessage) (string, error) {
	var md struct {
		Location string `json:"location"`
	}
	if err := json.Unmarshal(doc["metadata"], &md); err != nil || md.Location == "" {
		return "", fmt.Errorf("the load answer has no metadata location (%v)", err)
	}
	return md.Location, nil
}

// serveCredentials answers the credentials endpoint for the table at
// tablePath: it loads the table from SeaweedFS with the caller's own
// authentication (so a caller SeaweedFS refuses is refused here too, with
// SeaweedFS's answer) and answers the current key, scoped to the table
// location.
func (f *Front) serveCredentials(w http.ResponseWriter, r *http.Request, tablePath string) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, f.opts.Catalog+tablePath, nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header.Set("Authorization", r.Header.Get("Authorization"))
	resp, err := f.hc.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if resp.StatusCode != http.StatusOK {
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
		return
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		http.Error(w, "decode the table load: "+err.Error(), http.StatusBadGateway)
		return
	}
	location, err := tableLocation(doc)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	f.mu.Lock()
	k := f.currentLocked()
	f.mu.Unlock()
	f.count(func(c *Counts) { c.Refreshes++ })
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"storage-credentials": []storageCredential{{Prefix: location, Config: f.keyProps(k)}},
	})
}
