package reader_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/reader"
)

// TestNotParquetQuotesNothing: a file that is not Parquet (a password
// file, a key) is ErrCorruptFile, and the error quotes none of its bytes:
// parquet-go quotes a wrong leading magic, and the footer length is four
// of the file's bytes read as a number.
func TestNotParquetQuotesNothing(t *testing.T) {
	const secret = "root:x:0:0:root:/root:/bin/bash\n"
	for name, tc := range map[string]struct{ data, want string }{
		"text":                        {secret, "does not end with Parquet's magic bytes"},
		"text ending in PAR1":         {secret + "\x04\x00\x00\x00PAR1", "does not begin with Parquet's magic bytes"},
		"shorter than the magic pair": {"root", "Parquet's magic bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := writeFile(filepath.Join(dir, "data.parquet"), []byte(tc.data)); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var out bytes.Buffer
			err := readSplit(ctx, newReader(testFS(dir)), dataSplit("data.parquet", int64(len(tc.data)), 1), tableOf(corruptSchema()), &out)
			if !errors.Is(err, reader.ErrCorruptFile) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrCorruptFile saying %q", err, tc.want)
			}
			leaks := []string{"root", "bash", `"r`}
			if len(tc.data) >= 8 {
				tail := []byte(tc.data[len(tc.data)-8:])
				leaks = append(leaks, strconv.FormatUint(uint64(tail[0])|uint64(tail[1])<<8|uint64(tail[2])<<16|uint64(tail[3])<<24, 10))
			}
			for _, leak := range leaks {
				if strings.Contains(err.Error(), leak) {
					t.Fatalf("the error quotes the file's bytes (%s): %v", leak, err)
				}
			}
		})
	}
}
