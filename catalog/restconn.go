package catalog

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/rest"
)

// connectREST opens a REST catalog as iceberg-go's catalog.Load does with
// props (rest.newCatalogFromProps: fromProps, then the catalog's init),
// but through rest.NewCatalog, the one way to give it a transport: the
// properties become the options fromProps would set, and the transport is
// answerTransport over the one iceberg-go builds. What fromProps does not
// know goes on as additional properties, as there: header.* (session
// headers), the storage properties of the tables' FileIO and the rest.
func connectREST(ctx context.Context, name, uri string, props map[string]string, limit int64) (*rest.Catalog, error) {
	opts, err := restOptions(props)
	if err != nil {
		return nil, err
	}
	return rest.NewCatalog(ctx, name, uri, append(opts, rest.WithTransportFactory(answerTransports(limit)))...)
}

// restOptions maps a REST catalog's properties to the options iceberg-go
// v0.7.0's fromProps (catalog/rest/rest.go) sets from them, key for key.
func restOptions(props map[string]string) ([]rest.Option, error) {
	var opts []rest.Option
	extra := iceberg.Properties{}
	var authURL, serverURI *url.URL
	for k, v := range props {
		switch k {
		case "token":
			opts = append(opts, rest.WithOAuthToken(v))
		case "warehouse":
			opts = append(opts, rest.WithWarehouseLocation(v))
		case "metadata_location":
			opts = append(opts, rest.WithMetadataLocation(v))
		case "rest.sigv4-enabled", "rest.signing-region", "rest.signing-name":
			// Below: one option sets all three.
		case "rest.authorization-url", "oauth2-server-uri":
			u, err := parseAuthURL(k, v)
			if err != nil {
				return nil, err
			}
			if k == "oauth2-server-uri" {
				serverURI = u
			} else {
				authURL = u
			}
		case "credential":
			opts = append(opts, rest.WithCredential(v))
		case "scope":
			opts = append(opts, rest.WithScope(v))
		case "audience":
			opts = append(opts, rest.WithAudience(v))
		case "resource":
			opts = append(opts, rest.WithResource(v))
		case "prefix":
			opts = append(opts, rest.WithPrefix(v))
		case "rest.tls.skip-verify":
			opts = append(opts, rest.WithTLSConfig(&tls.Config{InsecureSkipVerify: strings.EqualFold(v, "true")}))
		case "uri", "type":
		default:
			if v != "" {
				extra[k] = v
			}
		}
	}
	if strings.EqualFold(props["rest.sigv4-enabled"], "true") {
		// fromProps leaves the signing name empty when it is not set;
		// WithSigV4RegionSvc makes it execute-api, Iceberg Java's default
		// (RESTSigV4AuthSession's rest.signing-name).
		opts = append(opts, rest.WithSigV4RegionSvc(props["rest.signing-region"], props["rest.signing-name"]))
	}
	// oauth2-server-uri wins over its alias rest.authorization-url, as in
	// fromProps.
	if serverURI != nil {
		opts = append(opts, rest.WithAuthURI(serverURI))
	} else if authURL != nil {
		opts = append(opts, rest.WithAuthURI(authURL))
	}
	if len(extra) > 0 {
		opts = append(opts, rest.WithAdditionalProps(extra))
	}
	return opts, nil
}

// parseAuthURL parses an OAuth2 token endpoint as fromProps does: a URL
// with a scheme and a host.
func parseAuthURL(key, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid %s %q: %w", key, raw, err)
	}
	if u.Scheme == "" {
		return nil, fmt.Errorf("invalid %s %q: missing scheme", key, raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid %s %q: missing host", key, raw)
	}
	return u, nil
}
