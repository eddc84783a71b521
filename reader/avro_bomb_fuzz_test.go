package reader_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"

	"github.com/druidiceberg/sidecar/token"
)

// The Avro codecs, as a file's avro.codec names them, by FuzzAvroBlocks'
// codec argument (modulo their number).
var avroCodecs = []string{"null", "deflate", "snappy", "zstandard"}

// avroBombSizes are the sizes an expanding block decompresses to, by
// FuzzAvroBlocks' bomb argument (modulo their number; 0 is no bomb): the
// reader allows a block 64 MiB (maxAvroBlockBytes).
var avroBombSizes = []int64{0, 1 << 20, 64 << 20, 64<<20 + 1, 1 << 30}

// The roles of the fuzzed file in its split, by FuzzAvroBlocks' role
// argument (modulo their number): a data file read whole, a positional or
// equality delete file, and a data file read through avroProjection, so
// that most of its fields are skipped rather than decoded.
const (
	avroRoleData = iota
	avroRolePositional
	avroRoleEquality
	avroRoleProjected
	avroRoles
)

// avroProjection is the projected role's columns: id, the fixed big and
// the struct inner of allTypesSchema.
var avroProjection = []int{1, 9, 20}

// avroRoleSchemas are the real schemas of the roles.
var avroRoleSchemas = [avroRoles]string{allTypesAvro, posDeleteAvro, eqDeleteAvro, allTypesAvro}

// The Iceberg Avro schemas of the delete files.
const (
	posDeleteAvro = `{"type":"record","name":"p","fields":[{"name":"file_path","type":"string","field-id":2147483546},
		{"name":"pos","type":"long","field-id":2147483545}]}`
	eqDeleteAvro = `{"type":"record","name":"e","fields":[{"name":"id","type":"long","field-id":1}]}`
)

// FuzzAvroBlocks reads a split whose Avro data file (whole or through a
// projection), positional delete file or equality delete file the fuzzer
// builds from its parts: the
// writer schema in the header (seeded with the real ones and crafted ones:
// nested past the reader's bound, recursive, 20,000 fields, a fixed of 2
// GiB, arrays and maps of nulls), the codec (null, deflate, snappy,
// zstandard), one block whose record count and declared size may lie,
// holding the fuzzer's bytes compressed with the codec or a bomb that
// expands to up to 1 GiB (or, for snappy, claims it), and raw bytes after
// it. The read must end in a reader error or in well-formed rows of the
// table's schema, never a panic or a hang, and within avroAllocBound of
// the file's bytes plus four times the rows written: neither a block's
// claims nor the schema may make the reader allocate for them.
//
//	go test ./reader -run '^$' -fuzz '^FuzzAvroBlocks$' -fuzztime 60s
func FuzzAvroBlocks(f *testing.F) {
	for _, s := range avroBlockSeeds() {
		f.Add(s.role, s.schema, s.codec, s.count, s.declared, s.bomb, s.payload, s.tail)
	}
	dir := f.TempDir()
	env := avroBlocksEnv(f, dir)
	f.Fuzz(func(t *testing.T, role uint8, schema string, codec uint8, count, declared int64, bomb uint8, payload, tail []byte) {
		_ = checkAvroBlock(t, env, avroBlock{role, schema, codec, count, declared, bomb, payload, tail})
	})
}

// avroBlock is one input of FuzzAvroBlocks.
type avroBlock struct {
	role   uint8
	schema string
	codec  uint8
	// count is the block's record count; declared, when not 0, the size
	// its header gives in place of its real one.
	count, declared int64
	bomb            uint8
	payload, tail   []byte
}

// avroBlockSeeds are FuzzAvroBlocks' seeds: intact files of every role
// and codec, and the hostile ones.
func avroBlockSeeds() []avroBlock {
	// One record of each delete schema, and a record of allTypesAvro.
	posRec := append(appendAvroString(nil, bucket+"/data.avro"), binary.AppendVarint(nil, 3)...)
	eqRec := binary.AppendVarint(nil, 5)
	var seeds []avroBlock
	for c := range avroCodecs {
		seeds = append(seeds,
			avroBlock{role: avroRolePositional, schema: posDeleteAvro, codec: uint8(c), count: 1, payload: posRec},
			avroBlock{role: avroRoleEquality, schema: eqDeleteAvro, codec: uint8(c), count: 1, payload: eqRec},
		)
		// The bombs up to the cap (1 MiB, 64 MiB): those past it (64 MiB
		// + 1, 1 GiB) are TestAvroBlockBombs' cases, every role and codec,
		// and each costs a decompression to the cap (half a second of CPU
		// under -race for deflate and zstandard) that a seed would repeat.
		for b := 1; b < len(avroBombSizes)-2; b++ {
			seeds = append(seeds, avroBlock{role: uint8(b % avroRoles), schema: avroRoleSchemas[b%avroRoles],
				codec: uint8(c), count: 1, bomb: uint8(b)})
		}
	}
	nested := func(depth int) string {
		return strings.Repeat(`{"type":"array","items":`, depth) + `"long"` + strings.Repeat(`}`, depth)
	}
	record := func(typ string) string {
		return `{"type":"record","name":"r","fields":[{"name":"id","type":` + typ + `,"field-id":1}]}`
	}
	var wide strings.Builder
	wide.WriteString(`{"type":"record","name":"w","fields":[`)
	for i := range 20_000 {
		if i > 0 {
			wide.WriteByte(',')
		}
		wide.WriteString(`{"name":"f` + strconv.Itoa(i) + `","type":"long","field-id":` + strconv.Itoa(i+1) + `}`)
	}
	wide.WriteString(`]}`)
	zeros := make([]byte, 64)
	// Records of allTypesAvro whose arrays and maps come in blocks with
	// their byte sizes, read whole and projected (skipped by the sizes).
	rows, _ := allTypesRows(8)
	var framed []byte
	for _, r := range rows {
		framed = appendAllTypes(framed, r, 1, true)
	}
	return append(seeds,
		avroBlock{role: avroRoleData, schema: allTypesAvro, codec: 1, count: int64(len(rows)), payload: framed},
		avroBlock{role: avroRoleProjected, schema: allTypesAvro, count: int64(len(rows)), payload: framed},
		// Block counts that lie: far past the records, negative, and past
		// the bytes for a schema whose records take none.
		avroBlock{role: avroRoleEquality, schema: eqDeleteAvro, count: 1 << 40, payload: eqRec},
		avroBlock{role: avroRolePositional, schema: posDeleteAvro, count: -1, payload: posRec},
		avroBlock{role: avroRoleData, schema: record(`"null"`), count: 1 << 20, payload: nil},
		avroBlock{role: avroRoleEquality, schema: eqDeleteAvro, count: 0, payload: eqRec},
		// Declared sizes that lie: past the cap, and past the file.
		avroBlock{role: avroRoleData, schema: allTypesAvro, count: 1, declared: 1 << 40, payload: zeros},
		avroBlock{role: avroRolePositional, schema: posDeleteAvro, count: 1, declared: 64 << 20, payload: posRec},
		avroBlock{role: avroRoleEquality, schema: eqDeleteAvro, codec: 1, count: 1, declared: -5, payload: eqRec},
		// Crafted schemas: nested past maxAvroDepth and far past it, a
		// recursive record with a value nested a million deep, 20,000
		// fields, a fixed of 2 GiB, arrays and maps of nulls whose counts
		// claim billions.
		avroBlock{role: avroRoleData, schema: record(nested(70)), count: 1, payload: zeros},
		avroBlock{role: avroRoleData, schema: record(nested(30_000)), count: 1, payload: zeros},
		avroBlock{role: avroRoleData, schema: `{"type":"record","name":"r","fields":[{"name":"id","type":"long","field-id":1},
			{"name":"next","type":["null","r"],"field-id":2}]}`, count: 1, payload: bytes.Repeat([]byte{2, 2}, 1<<20)},
		avroBlock{role: avroRoleData, schema: wide.String(), count: 1, payload: zeros},
		avroBlock{role: avroRoleData, schema: record(`{"type":"fixed","name":"f","size":2147483647}`), count: 1, payload: zeros},
		avroBlock{role: avroRoleData, schema: record(`{"type":"array","items":"null","element-id":2}`), count: 1,
			payload: binary.AppendVarint(nil, 1<<40)},
		avroBlock{role: avroRoleData, schema: record(`{"type":"map","values":"null","key-id":2,"value-id":3}`), count: 1,
			payload: append(binary.AppendVarint(nil, -(1<<40)), binary.AppendVarint(nil, 1<<20)...)},
		avroBlock{role: avroRoleData, schema: record(`{"type":"array","items":"long","element-id":2}`), count: 1,
			payload: binary.AppendVarint(nil, 1<<40)},
		avroBlock{role: avroRoleData, schema: record(`"string"`), count: 1, payload: binary.AppendVarint(nil, 1<<40)},
		avroBlock{role: avroRolePositional, schema: `{"type":"record","name":"p","fields":[{"name":"file_path","type":{"type":"enum","name":"e","symbols":["a"]},"field-id":2147483546},{"name":"pos","type":"long","field-id":2147483545}]}`,
			count: 1, payload: binary.AppendVarint(nil, 1<<30)},
	)
}

// appendAvroString appends s as an Avro string: its length, then its bytes.
func appendAvroString(b []byte, s string) []byte {
	return append(binary.AppendVarint(b, int64(len(s))), s...)
}

// avroBlocksTarget is what FuzzAvroBlocks reads: an intact Avro data file
// of allTypesRows(40) beside the fuzzed file, and the table schema; a
// projected read's rows hold the fields of projected.
type avroBlocksTarget struct {
	dir       string
	dataSize  int64
	table     token.TableSchema
	projected token.TableSchema
}

func avroBlocksEnv(t testing.TB, dir string) *avroBlocksTarget {
	t.Helper()
	_, av := allTypesRows(40)
	_, size := writeAvro(t, dir, "data.avro", allTypesAvro, av)
	var fields []iceberg.NestedField
	for _, f := range allTypesSchema().Fields() {
		if slices.Contains(avroProjection, f.ID) {
			fields = append(fields, f)
		}
	}
	return &avroBlocksTarget{dir: dir, dataSize: size, table: tableOf(allTypesSchema()),
		projected: tableOf(iceberg.NewSchema(0, fields...))}
}

// file builds the Object Container File of b: the header with its
// schema and codec, one block, and the tail.
func (b avroBlock) file() []byte {
	codec := avroCodecs[int(b.codec)%len(avroCodecs)]
	sync := []byte("0123456789abcdef")
	f := []byte("Obj\x01")
	f = binary.AppendVarint(f, 2)
	f = appendAvroString(f, "avro.schema")
	f = appendAvroString(f, b.schema)
	f = appendAvroString(f, "avro.codec")
	f = appendAvroString(f, codec)
	f = append(binary.AppendVarint(f, 0), sync...)
	data := avroCompress(codec, b.payload)
	size := int64(len(data))
	if bomb := avroBombSizes[int(b.bomb)%len(avroBombSizes)]; bomb > 0 {
		data = avroBomb(codec, bomb)
		size = int64(len(data))
		if codec == "null" {
			size = bomb
		}
	}
	if b.declared != 0 {
		size = b.declared
	}
	f = binary.AppendVarint(f, b.count)
	f = binary.AppendVarint(f, size)
	f = append(f, data...)
	f = append(f, sync...)
	return append(f, b.tail...)
}

// avroCompress compresses a block's data as codec does.
func avroCompress(codec string, data []byte) []byte {
	switch codec {
	case "deflate":
		var buf bytes.Buffer
		w, _ := flate.NewWriter(&buf, flate.BestSpeed)
		_, _ = w.Write(data)
		_ = w.Close()
		return buf.Bytes()
	case "snappy":
		return binary.BigEndian.AppendUint32(snappy.Encode(nil, data), crc32.ChecksumIEEE(data))
	case "zstandard":
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		defer enc.Close()
		return enc.EncodeAll(data, nil)
	}
	return data
}

// avroBombs caches the bombs built, by codec and size.
var avroBombs sync.Map

// avroBomb is a block of codec that decompresses to size zero bytes,
// built without ever holding them: deflate repeats the compressed form of
// 1 MiB, zstandard is a frame without a content size (zstdBomb), snappy
// claims the size in its preamble (a snappy block that expands must say so
// there) and holds one byte, and null declares the size in the block
// header over one byte.
func avroBomb(codec string, size int64) []byte {
	key := fmt.Sprint(codec, size)
	if b, ok := avroBombs.Load(key); ok {
		return b.([]byte)
	}
	var b []byte
	switch codec {
	case "deflate":
		var buf bytes.Buffer
		w, _ := flate.NewWriter(&buf, flate.BestCompression)
		_, _ = w.Write(make([]byte, 1<<20))
		_ = w.Flush() // ends byte-aligned, so the chunk repeats
		chunk := buf.Bytes()
		for range (size + 1<<20 - 1) >> 20 {
			b = append(b, chunk...)
		}
		b = append(b, 0x01, 0x00, 0x00, 0xff, 0xff) // a final empty stored block
	case "zstandard":
		b = zstdBomb(size)
	case "snappy":
		b = append(binary.AppendUvarint(nil, uint64(min(size, 1<<32-1))), 0x00, 0x00, 0, 0, 0, 0)
	default:
		b = []byte{0}
	}
	avroBombs.Store(key, b)
	return b
}

// zstdBomb is a zstandard frame of size zeros without a content size, so
// that only decoding tells how far it expands: what the streaming encoder
// writes, an RLE block, then compressed blocks of one match each, which
// klauspost's decoder copies in assembly (0.5 s of CPU under -race to the
// 64 MiB cap, where RLE blocks throughout take 2.1 s: each is a loop over
// its bytes that -race instruments). Past 65 MiB, in whole blocks of 128
// KiB, it is the encoder's frame of 4 MiB with its last compressed block
// repeated (zstdRepeated), rather than a GiB of zeros encoded.
func zstdBomb(size int64) []byte {
	if size <= 65<<20 || size%zstdBlock != 0 {
		return zstdEncoded(size)
	}
	return zstdRepeated(size)
}

// zstdBlock is the most a zstandard block holds, and what each block of
// the encoder's frames of zeros holds.
const zstdBlock = 128 << 10

// zstdRepeated is the encoder's frame of 4 MiB of zeros with its last
// compressed block repeated up to size zeros, a whole number of blocks
// past 4 MiB (TestZstdRepeatedFrames holds such frames to their zeros).
func zstdRepeated(size int64) []byte {
	small := zstdEncoded(4 << 20)
	var h zstd.Header
	if err := h.Decode(small); err != nil {
		panic(err)
	}
	// The blocks: RLE, compressed ones, and the last, raw and empty.
	var blocks [][]byte
	for p := h.HeaderSize; p < len(small); {
		bh := uint32(small[p]) | uint32(small[p+1])<<8 | uint32(small[p+2])<<16
		n := int(bh >> 3)
		if bh>>1&3 == 1 { // RLE: one byte repeated
			n = 1
		}
		blocks = append(blocks, small[p:p+3+n])
		p += 3 + n
	}
	last := blocks[len(blocks)-1]
	if len(blocks) != (4<<20)/zstdBlock+1 || !bytes.Equal(last, []byte{1, 0, 0}) {
		panic(fmt.Sprintf("the encoder's frame of 4 MiB of zeros: %d blocks ending % x", len(blocks), last))
	}
	b := bytes.Clone(small[:len(small)-len(last)])
	repeat := blocks[len(blocks)-2]
	for range size/zstdBlock - int64(len(blocks)-1) {
		b = append(b, repeat...)
	}
	return append(b, last...)
}

// zstdEncoded is the streaming encoder's frame of size zeros, without a
// content size or checksum, in a window of 1 MiB.
func zstdEncoded(size int64) []byte {
	var buf bytes.Buffer
	enc, _ := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false), zstd.WithWindowSize(1<<20))
	zeros := make([]byte, 1<<20)
	for left := size; left > 0; left -= int64(len(zeros)) {
		_, _ = enc.Write(zeros[:min(left, int64(len(zeros)))])
	}
	_ = enc.Close()
	return buf.Bytes()
}

// TestZstdRepeatedFrames: the frames zstdRepeated builds decode as their
// size of zeros, so that TestAvroBlockBombs' 1 GiB bomb fails on its size
// and not on damage of its own.
func TestZstdRepeatedFrames(t *testing.T) {
	t.Parallel()
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, size := range []int64{4<<20 + zstdBlock, 8 << 20} {
		out, err := d.DecodeAll(zstdRepeated(size), nil)
		if err != nil || int64(len(out)) != size || slices.ContainsFunc(out, func(b byte) bool { return b != 0 }) {
			t.Fatalf("the bomb of %d zeros decodes to %d bytes: %v", size, len(out), err)
		}
	}
}

// checkAvroBlock is the body of FuzzAvroBlocks; it gives the read's error.
func checkAvroBlock(t *testing.T, env *avroBlocksTarget, b avroBlock) error {
	if len(b.schema) > 1<<20 {
		b.schema = b.schema[:1<<20]
	}
	file := b.file()
	var sp token.Split
	var target string
	rows := env.table
	switch b.role % avroRoles {
	case avroRoleData, avroRoleProjected:
		target = bucket + "/fuzzed.avro"
		sp = avroSplit("fuzzed.avro", int64(len(file)), 0)
		if b.role%avroRoles == avroRoleProjected {
			sp.Columns, rows = avroProjection, env.projected
		}
	case avroRolePositional:
		target = bucket + "/pos.avro"
		sp = avroSplit("data.avro", env.dataSize, 40, token.DeleteFile{Kind: token.DeletePosition,
			Path: target, Format: "AVRO", Size: int64(len(file))})
	case avroRoleEquality:
		target = bucket + "/eq.avro"
		sp = avroSplit("data.avro", env.dataSize, 40, token.DeleteFile{Kind: token.DeleteEquality,
			Path: target, Format: "AVRO", Size: int64(len(file)), EqualityIDs: []int{1}})
	}
	fsys := &overlayIO{IO: testFS(env.dir), path: target, data: file}
	what := fmt.Sprintf("an Avro %s file (%s, count %d, declared %d, bomb %d)",
		[]string{"data", "positional delete", "equality delete", "projected data"}[b.role%avroRoles],
		avroCodecs[int(b.codec)%len(avroCodecs)], b.count, b.declared, avroBombSizes[int(b.bomb)%len(avroBombSizes)])
	out, allocated, err := readMeasured(t, fsys, sp, env.table, what)
	if bound := raceAllocFactor*avroAllocBound(int64(len(file))+env.dataSize) + 4*uint64(len(out)); allocated > bound {
		t.Fatalf("%s: the read allocated %d MiB, more than the %d MiB bound for its files and rows", what, allocated>>20, bound>>20)
	}
	if err != nil {
		if !clearError(err) {
			t.Fatalf("%s: an error without a reader sentinel (the handlers would answer 500): %v", what, err)
		}
		return err
	}
	checkNDJSON(t, out, rows)
	return nil
}

// TestAvroBlockBombs reads blocks of every codec that decompress to (or,
// for snappy and a null block's size, claim) one byte past the 64 MiB a
// block may hold, and 1 GiB: each fails within avroAllocBound
// (FuzzAvroBlocks' seeds hold the smaller ones). Every kind of file reads
// its blocks through one block reader, so the kinds other than a data file
// read whole take the 1 GiB bomb alone. ocf's own zstandard decoder allocated 348
// MiB for a block past the cap (the reader decodes zstandard itself
// now), and a null block declaring 64 MiB over one byte allocated them
// (a block is held to its file's size now).
func TestAvroBlockBombs(t *testing.T) {
	env := avroBlocksEnv(t, t.TempDir())
	for c, codec := range avroCodecs {
		for bomb := len(avroBombSizes) - 2; bomb < len(avroBombSizes); bomb++ {
			for role := range uint8(avroRoles) {
				if role != avroRoleData && bomb != len(avroBombSizes)-1 {
					continue
				}
				b := avroBlock{role: role, schema: avroRoleSchemas[role],
					codec: uint8(c), count: 1, bomb: uint8(bomb)}
				t.Run(fmt.Sprint(codec, "/", avroBombSizes[bomb], "/", role), func(t *testing.T) {
					// Zeros are no record of any of the schemas whole, but
					// the read must fail on the block's size first.
					err := checkAvroBlock(t, env, b)
					if err == nil {
						t.Fatal("no error")
					}
					if !strings.Contains(err.Error(), "more than") {
						t.Fatalf("the read failed, but not on the block's size: %v", err)
					}
				})
			}
		}
	}
}

// TestAvroHeaderBound reads Avro files whose schema is a record of n
// fields: one of 220,000 fields in 10 MiB, which decoding and turning into
// columns cost 1.3 GiB of allocation, fails having read its first MiB; one
// of 20,000 fields, just under the bound, reads within avroAllocBound.
func TestAvroHeaderBound(t *testing.T) {
	env := avroBlocksEnv(t, t.TempDir())
	wide := func(n int) string {
		var b strings.Builder
		// The table's id, then fields it does not have.
		b.WriteString(`{"type":"record","name":"w","fields":[{"name":"id","type":"long","field-id":1}`)
		for i := range n - 1 {
			// strconv, not fmt: fmt took a third of the test's CPU under -race.
			b.WriteString(`,{"name":"f` + strconv.Itoa(i) + `","type":"int","field-id":` + strconv.Itoa(1000+i) + `}`)
		}
		b.WriteString(`]}`)
		return b.String()
	}
	for _, tc := range []struct {
		fields int
		fails  bool
	}{{20_000, false}, {220_000, true}} {
		t.Run(fmt.Sprint(tc.fields), func(t *testing.T) {
			b := avroBlock{role: avroRoleData, schema: wide(tc.fields), count: 1, payload: make([]byte, tc.fields)}
			file := b.file()
			fsys := &overlayIO{IO: testFS(env.dir), path: bucket + "/fuzzed.avro", data: file}
			bound := avroAllocBound(int64(len(file)))
			if tc.fails {
				bound = 16 << 20
			}
			_, err := readWithin(t, fsys, avroSplit("fuzzed.avro", int64(len(file)), 1), env.table, bound,
				fmt.Sprintf("a schema of %d fields in %d KiB", tc.fields, len(b.schema)>>10))
			if tc.fails != (err != nil) {
				t.Fatalf("a schema of %d fields in %d KiB: error %v", tc.fields, len(b.schema)>>10, err)
			}
		})
	}
}
