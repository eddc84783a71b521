//go:build gcs

package main

import _ "github.com/apache/iceberg-go/io/gocloud/gcs"
