package reader_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/druidiceberg/sidecar/reader"
)

// TestMain installs the bounded codecs as the sidecar does before it
// serves: the tests decode damaged files with parquet-go too, to compare.
func TestMain(m *testing.M) {
	if err := reader.InstallBoundedCodecs(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
