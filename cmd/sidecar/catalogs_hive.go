//go:build hive

package main

import _ "github.com/apache/iceberg-go/catalog/hive"
