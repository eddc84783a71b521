//go:build azure

package main

import _ "github.com/apache/iceberg-go/io/gocloud/azure"
