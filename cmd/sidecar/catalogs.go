package main

// iceberg-go registers its catalogs and FileIO schemes when their packages
// are imported, and database/sql drivers register themselves the same way;
// the sidecar's own packages register nothing.
//
// Every build serves the local, rest and static catalogs and reads local
// files and S3. The glue, hive and sql catalogs and Google Cloud Storage
// and Azure Blob Storage link large SDKs, which dominate a cold build, so
// each comes with a build tag of its name (glue, hive, sql, gcs, azure);
// the container image is built with all of them. A configuration that
// names one the binary lacks is refused at start-up (checkBuiltIn).
import (
	"database/sql"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"

	_ "github.com/apache/iceberg-go/catalog/hadoop"
	_ "github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/io/gocloud/s3"
)

// optional are the catalogs and storage schemes behind build tags, by
// their tag.
var optional = []struct {
	tag, catalog string
	schemes      []string
}{
	{tag: "glue", catalog: "glue"},
	{tag: "hive", catalog: "hive"},
	{tag: "sql", catalog: "sql"},
	{tag: "gcs", schemes: []string{"gs"}},
	{tag: "azure", schemes: []string{"abfs", "abfss", "wasb", "wasbs"}},
}

// checkBuiltIn refuses a catalog this binary was built without: its type,
// its SQL driver, or the storage scheme of its warehouse, a storage prefix
// or a location map target.
func checkBuiltIn(c sidecatalog.Config) error {
	missing := func(tag, what string) error {
		return fmt.Errorf("catalog %s: this sidecar was built without %s; build it with -tags %s "+
			"(the container image has every catalog and store)", c.Name, what, tag)
	}
	for _, o := range optional {
		if o.catalog == c.Type && !slices.Contains(catalog.GetRegisteredCatalogs(), c.Type) {
			return missing(o.tag, "the "+c.Type+" catalog")
		}
	}
	if c.Type == "sql" {
		driver, _, err := sidecatalog.SQLDriver(c.URI, c.Props)
		if err != nil {
			return err
		}
		if !slices.Contains(sql.Drivers(), driver) {
			return missing("sql", "the "+driver+" driver")
		}
	}
	locations := append([]string{c.Warehouse}, c.StoragePrefixes...)
	for _, m := range c.LocationMap {
		locations = append(locations, m.To)
	}
	schemes := icebergio.GetRegisteredSchemes()
	for _, loc := range locations {
		u, err := url.Parse(loc)
		if err != nil || u.Scheme == "" || len(u.Scheme) == 1 || u.Scheme == "file" {
			continue // a local path
		}
		scheme := strings.ToLower(u.Scheme)
		if slices.Contains(schemes, scheme) {
			continue
		}
		for _, o := range optional {
			if slices.Contains(o.schemes, scheme) {
				return missing(o.tag, scheme+":// storage")
			}
		}
		return fmt.Errorf("catalog %s: no storage reads %s:// locations", c.Name, scheme)
	}
	return nil
}
