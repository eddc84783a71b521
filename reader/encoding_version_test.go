package reader_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/token"
)

// encodingGoldens are the golden row files of the all-types table: every
// value type in every encoding option.
var encodingGoldens = []string{"all_types.ndjson", "all_types_binary_as_string.ndjson", "all_types_iso.ndjson"}

// TestGoldenEncodingVersion: the bytes the reader writes for the all-types
// table are those recorded for token.RowEncoding in
// testdata/encoding_version.txt. A change to the row encoding changes
// those golden files (go test -update rewrites them), and then this test
// fails until token.RowEncoding is raised and the new version and digest
// are recorded: a token pins the version, so that no replica resumes a
// stream at a byte offset of another encoding.
func TestGoldenEncodingVersion(t *testing.T) {
	h := sha256.New()
	for _, name := range encodingGoldens {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		h.Write([]byte(name + "\x00"))
		h.Write(b)
	}
	digest := hex.EncodeToString(h.Sum(nil))
	want := "version " + strconv.Itoa(token.RowEncoding) + "\nsha256 " + digest + "\n"
	got, err := os.ReadFile(filepath.Join("testdata", "encoding_version.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("testdata/encoding_version.txt holds\n%s\nbut the golden rows are version %d's with digest %s: "+
			"if the row encoding changed, raise token.RowEncoding and record:\n%s",
			strings.TrimSpace(string(got)), token.RowEncoding, digest, want)
	}
}
