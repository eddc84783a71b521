package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/puffin"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/token"
)

// dvFuzzRows is the number of rows of the data file whose deletion vector
// FuzzDeletionVector damages.
const dvFuzzRows = 10

// FuzzDeletionVector reads a split whose deletion vector is a puffin blob
// the fuzzer shapes: the portable 64-bit roaring bitmap inside it, the
// record count the manifest gives (the blob's cardinality property says
// the same), a lie in the blob's own length field, a broken CRC, and a
// lie in the content size the manifest gives. Seeds are real bitmaps, one
// of 2^34 positions in run containers (an absurd cardinality, which is
// valid), and bitmaps that claim 2^25 keys, 65,536 containers or 4,096
// values in a handful of bytes. The read must end in a reader error, or,
// when iceberg-go's own decoder reads the blob as a deletion vector of
// that cardinality, in exactly the data file's rows it does not delete;
// never a panic or a hang, and within readAllocBound of allocation for
// the bytes of the split's files: no count or length in the blob may size
// anything beyond them.
//
//	go test ./reader -run '^$' -fuzz '^FuzzDeletionVector$' -fuzztime 60s
func FuzzDeletionVector(f *testing.F) {
	for _, s := range dvSeeds(f) {
		f.Add(s.bitmap, s.records, s.lenDelta, s.badCRC, s.sizeDelta)
	}
	dir := f.TempDir()
	data, lines := dvFuzzData(f, dir)
	f.Fuzz(func(t *testing.T, bitmap []byte, records int64, lenDelta int32, badCRC bool, sizeDelta int64) {
		checkDV(t, dir, data, lines, dvSeed{bitmap, records, lenDelta, badCRC, sizeDelta})
	})
}

// dvSeed is one input of FuzzDeletionVector.
type dvSeed struct {
	bitmap    []byte // the portable roaring bitmap inside the blob
	records   int64  // the manifest's record count and the blob's cardinality
	lenDelta  int32  // added to the blob's length field
	badCRC    bool   // flip the CRC
	sizeDelta int64  // added to the manifest's content size
}

// dvSeeds are FuzzDeletionVector's seeds, the hostile ones each named.
func dvSeeds(t testing.TB) []dvSeed {
	t.Helper()
	inner := func(bm *dv.RoaringPositionBitmap) []byte {
		blob, err := dv.SerializeDV(bm)
		if err != nil {
			t.Fatal(err)
		}
		return blob[8 : len(blob)-4]
	}
	some := dv.NewRoaringPositionBitmap()
	for _, p := range []uint64{0, 2, 7} {
		some.Set(p)
	}
	// Every position of the first four 32-bit keys: 2^34 deleted rows in
	// four run containers, 60-odd bytes.
	all := dv.NewRoaringPositionBitmap()
	all.SetRange(0, 4<<32)
	wide := dv.NewRoaringPositionBitmap()
	wide.Set(3)
	wide.Set(1 << 40)
	le64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	// One key, then a roaring header (the cookie of a bitmap without run
	// containers) claiming n containers, and nothing after it.
	containers := func(n uint32) []byte {
		b := binary.LittleEndian.AppendUint32(le64(1), 0)
		b = binary.LittleEndian.AppendUint32(b, 12346)
		return binary.LittleEndian.AppendUint32(b, n)
	}
	// One key, one array container claiming 4,096 values, none given.
	array := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(le64(1), 0), 12346)
	array = binary.LittleEndian.AppendUint32(array, 1)
	array = append(array, 0, 0, 0xff, 0x0f) // key 0, cardinality-1 4095
	array = binary.LittleEndian.AppendUint32(array, 16)
	return []dvSeed{
		{bitmap: inner(some), records: 3},
		{bitmap: inner(all), records: 4 << 32},
		{bitmap: inner(wide), records: 2},
		{bitmap: inner(dv.NewRoaringPositionBitmap()), records: 0},
		// The count of 32-bit keys at iceberg-go's cap (2^25) and past it.
		{bitmap: le64(1 << 25), records: 0},
		{bitmap: le64(1<<64 - 1), records: 0},
		{bitmap: containers(65536), records: 1},
		{bitmap: containers(1 << 31), records: 1},
		{bitmap: array, records: 4096},
		// A cardinality no file has; lengths that lie.
		{bitmap: inner(some), records: 1<<63 - 1},
		{bitmap: inner(some), records: 3, lenDelta: 1 << 30},
		{bitmap: inner(some), records: 3, lenDelta: -9},
		{bitmap: inner(some), records: 3, badCRC: true},
		{bitmap: inner(some), records: 3, sizeDelta: 256 << 20},
		{bitmap: inner(some), records: 3, sizeDelta: 1 << 62},
	}
}

// dvFuzzData writes the data file the deletion vectors apply to, and
// returns its split and its rows.
func dvFuzzData(t testing.TB, dir string) (token.Split, []string) {
	t.Helper()
	rows := make([]idRow, dvFuzzRows)
	lines := make([]string, dvFuzzRows)
	for i := range rows {
		rows[i] = idRow{ID: int64(i), Name: "n"}
		lines[i] = `{"id":` + strconv.Itoa(i) + `,"name":"n"}`
	}
	_, size := writeParquet(t, dir, "data.parquet", rows, parquet.MaxRowsPerRowGroup(3))
	return dataSplit("data.parquet", size, dvFuzzRows), lines
}

// dvBlob wraps a portable roaring bitmap as a deletion vector blob: its
// length (off by lenDelta), the magic, the bitmap, and its CRC (broken
// with badCRC).
func dvBlob(bitmap []byte, lenDelta int32, badCRC bool) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(int32(4+len(bitmap))+lenDelta))
	b = binary.LittleEndian.AppendUint32(b, dv.DVMagicNumber)
	b = append(b, bitmap...)
	crc := crc32.ChecksumIEEE(b[4:])
	if badCRC {
		crc ^= 1
	}
	return binary.BigEndian.AppendUint32(b, crc)
}

// puffinDV is a puffin file whose one blob is blob, a deletion vector of
// the data file ref whose cardinality property is records (0 when it is
// negative), with the blob's footer entry.
func puffinDV(t testing.TB, blob []byte, ref string, records int64) ([]byte, puffin.BlobMetadata) {
	t.Helper()
	var buf bytes.Buffer
	w, err := puffin.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// The writer refuses a negative cardinality: the manifest's count
	// alone says so then.
	props := map[string]string{"referenced-data-file": ref, "cardinality": strconv.FormatInt(max(records, 0), 10)}
	meta, err := w.AddBlob(puffin.BlobMetadataInput{Type: puffin.BlobTypeDeletionVector, SnapshotID: -1,
		SequenceNumber: -1, Fields: []int32{}, Properties: props}, blob)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), meta
}

// checkDV is the body of FuzzDeletionVector.
func checkDV(t *testing.T, dir string, data token.Split, lines []string, s dvSeed) {
	if len(s.bitmap) > 1<<16 {
		s.bitmap = s.bitmap[:1<<16]
	}
	blob := dvBlob(s.bitmap, s.lenDelta, s.badCRC)
	file, meta := puffinDV(t, blob, data.Data.Path, s.records)
	del := token.DeleteFile{Kind: token.DeleteDeletionVector, Path: bucket + "/dv.puffin", Format: "PUFFIN",
		Size: int64(len(file)), Records: s.records, ContentOffset: ptr(meta.Offset),
		ContentSize: ptr(meta.Length + s.sizeDelta), ReferencedDataFile: data.Data.Path}
	sp := data
	sp.Deletes = []token.DeleteFile{del}
	fsys := &overlayIO{IO: testFS(dir), path: del.Path, data: file}
	bound := readAllocBound(data.Data.Size+del.Size, int64(len(strings.Join(lines, "\n"))+1))
	out, err := readWithin(t, fsys, sp, tableOf(idSchema), bound, "a hostile deletion vector")
	if err != nil {
		if !clearError(err) {
			t.Fatalf("an error without a reader sentinel (the handlers would answer 500): %v", err)
		}
		return
	}
	// The reader took it: so must iceberg-go, for the same positions.
	if s.sizeDelta != 0 {
		t.Fatalf("the manifest's content size is off by %d, and the deletion vector was read", s.sizeDelta)
	}
	bm, oerr := dv.DeserializeDV(blob, s.records)
	if oerr != nil {
		t.Fatalf("the reader applied a deletion vector iceberg-go refuses: %v", oerr)
	}
	var want []string
	for i, l := range lines {
		if !bm.Contains(uint64(i)) {
			want = append(want, l)
		}
	}
	if got := strings.TrimSuffix(string(out), "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("rows %q, want %q", got, want)
	}
}

// TestDeletionVectorKeyCountBomb replays a deletion vector blob of 28
// bytes whose bitmap claims 2^25 32-bit keys, iceberg-go's cap, and holds
// none: iceberg-go sized a map by the claim before reading a key, 1.1 GiB
// of allocation for one delete file. The reader holds the count to what
// the blob's bytes can hold first, so the read fails having allocated
// little more than reading the data file does.
func TestDeletionVectorKeyCountBomb(t *testing.T) {
	dir := t.TempDir()
	data, _ := dvFuzzData(t, dir)
	for _, keys := range []uint64{1 << 25, 1<<25 + 1, 1 << 20, 2} {
		t.Run(strconv.FormatUint(keys, 10), func(t *testing.T) {
			blob := dvBlob(binary.LittleEndian.AppendUint64(nil, keys), 0, false)
			file, meta := puffinDV(t, blob, data.Data.Path, 0)
			sp := data
			sp.Deletes = []token.DeleteFile{{Kind: token.DeleteDeletionVector, Path: bucket + "/dv.puffin", Format: "PUFFIN",
				Size: int64(len(file)), ContentOffset: ptr(meta.Offset), ContentSize: ptr(meta.Length),
				ReferencedDataFile: data.Data.Path}}
			fsys := &overlayIO{IO: testFS(dir), path: bucket + "/dv.puffin", data: file}
			_, err := readWithin(t, fsys, sp, tableOf(idSchema), 16<<20, "a deletion vector of no keys claiming "+strconv.FormatUint(keys, 10))
			if !errors.Is(err, reader.ErrCorruptFile) {
				t.Fatalf("got %v, want ErrCorruptFile", err)
			}
		})
	}
}
