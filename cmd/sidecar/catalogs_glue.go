//go:build glue

package main

import _ "github.com/apache/iceberg-go/catalog/glue"
