package vendingcatalog_test

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/rest"

	"github.com/druidiceberg/sidecar/internal/vendingcatalog"
)

// A front over a SeaweedFS started with IAM writes allowed (`weed mini
// -s3.config … -s3.iam.readOnly=false`), vending a key that lives 6 s and
// rotates every 3 s through the credentials endpoint. It has no Output:
// it needs the SeaweedFS the integration tier starts, so `go test` only
// compiles it.
func ExampleStart() {
	ctx := context.Background()
	restURL, s3URL := "http://127.0.0.1:8181", "http://127.0.0.1:8333"
	f, err := vendingcatalog.Start(ctx, vendingcatalog.Options{
		Catalog: restURL, S3: s3URL, Bucket: "warehouse",
		AdminAccessKey: "admin", AdminSecretKey: "admin-secret",
		User: "vend-reader", Mode: vendingcatalog.StorageCredentials,
		CredentialsEndpoint: true, Lifetime: 6 * time.Second, Rotation: 3 * time.Second,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	cat, err := catalog.Load(ctx, "front", iceberg.Properties{"type": "rest", "uri": f.URL()})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cat.CatalogType())
}
