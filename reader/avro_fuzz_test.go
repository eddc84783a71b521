package reader_test

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/twmb/avro/ocf"

	"github.com/druidiceberg/sidecar/token"
)

// FuzzCorruptAvro reads a split whose Avro data file (or, with del set,
// whose Avro positional delete file) is the fuzzer's bytes, seeded with
// intact files of every codec. The read must end in an error the handlers
// map to a status, or in well-formed rows of the schema (exactly the intact
// rows when the bytes are an intact file): never a panic or a hang. Avro
// has no checksum over a block of the null or deflate codecs, so a changed
// value byte is invisible to any reader. The read's allocation, counted
// over the whole read (decoded records are garbage a chunk at a time), is
// held to avroAllocBound: the decoder's caps on a block's declared and
// decompressed size are what keep a damaged header from sizing anything.
//
//	go test ./reader -run '^$' -fuzz '^FuzzCorruptAvro$' -fuzztime 60s
func FuzzCorruptAvro(f *testing.F) {
	dir := f.TempDir()
	_, av := allTypesRows(40)
	intact := map[string]bool{}
	for _, c := range []struct {
		name  string
		codec ocf.Codec
	}{{"d", nil}, {"deflate", ocf.DeflateCodec(1)}, {"snappy", ocf.SnappyCodec()}} {
		opts := []ocf.WriterOpt{ocf.WithBlockCount(16)}
		if c.codec != nil {
			opts = append(opts, ocf.WithCodec(c.codec))
		}
		path, _ := writeAvro(f, dir, c.name+".avro", allTypesAvro, av, opts...)
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(false, b)
		intact[string(b)] = true
	}
	const posAvro = `{"type":"record","name":"p","fields":[{"name":"file_path","type":"string","field-id":2147483546},
		{"name":"pos","type":"long","field-id":2147483545}]}`
	_, dataSize := writeAvro(f, dir, "data.avro", allTypesAvro, av)
	delPath, delSize := writeAvro(f, dir, "pos.avro", posAvro, []map[string]any{
		{"file_path": bucket + "/data.avro", "pos": int64(3)}, {"file_path": bucket + "/data.avro", "pos": int64(7)}})
	intactDel, err := os.ReadFile(delPath)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(true, intactDel)

	schema := tableOf(allTypesSchema())
	want := map[bool][]byte{}
	for _, d := range []bool{false, true} {
		var out bytes.Buffer
		if err := readSplit(context.Background(), newReader(testFS(dir)), avroFuzzSplit(d, dataSize, delSize), schema, &out); err != nil {
			f.Fatal(err)
		}
		want[d] = out.Bytes()
	}

	f.Fuzz(func(t *testing.T, del bool, data []byte) {
		sp := avroFuzzSplit(del, int64(len(data)), delSize)
		target := bucket + "/d.avro"
		if del {
			sp.Data.Size, sp.Deletes[0].Size = dataSize, int64(len(data))
			target = bucket + "/pos.avro"
		}
		fsys := &overlayIO{IO: testFS(dir), path: target, data: data}
		out, err := readWithin(t, fsys, sp, schema, avroAllocBound(int64(len(data))), "a damaged Avro file")
		switch {
		case err != nil:
			if !clearError(err) {
				t.Fatalf("an error without a reader sentinel (the handlers would answer 500): %v", err)
			}
		case !del && intact[string(data)] && !bytes.Equal(out, want[false]):
			t.Fatalf("an intact file read other rows")
		case del && bytes.Equal(data, intactDel) && !bytes.Equal(out, want[true]):
			t.Fatalf("an intact delete file read other rows")
		default:
			checkNDJSON(t, out, schema)
		}
	})
}

// avroFuzzSplit is the fuzzed split: the data file d.avro alone, or
// data.avro with the positional delete file pos.avro.
func avroFuzzSplit(del bool, size, delSize int64) token.Split {
	if !del {
		return avroSplit("d.avro", size, 0)
	}
	return avroSplit("data.avro", size, 40, token.DeleteFile{Kind: token.DeletePosition,
		Path: bucket + "/pos.avro", Format: "AVRO", Size: delSize})
}

// avroAllocBound is the allocation one read of a damaged Avro file of
// files bytes may make: a block may declare and decompress to at most 64
// MiB, and what it decompresses to is decoded and encoded in chunks.
func avroAllocBound(files int64) uint64 { return 256<<20 + 64*uint64(files) }
