package reader_test

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// runBombLimit is the largest run of values FuzzCorruptParquet lets
// parquet-go decode: far more than any page of its files holds, far less
// than an allocation that hurts (32 MiB of int64s).
const runBombLimit = 1 << 22

// runBomb reports whether reading the Parquet file data would make
// parquet-go allocate for a run longer than runBombLimit values, and how
// long. parquet-go v0.32.0's RLE and delta decoders size their output from
// the run headers and value counts inside the page, not from the page's
// value count, so one damaged byte there can ask for billions of values and
// kill the process with an out-of-memory error that no recover catches. The
// reader cannot guard this without decoding every page twice (parquet-go
// offers no hook between reading a page and decoding it); the README says
// so. FuzzCorruptParquet skips such inputs, so that it keeps finding
// everything else.
//
// It errs towards finding a bomb: where a section could be read more than
// one way, it reads it every way.
func runBomb(data []byte) (bool, uint64) {
	var pf *parquet.File
	func() {
		defer func() { _ = recover() }()
		pf, _ = parquet.OpenFile(bytes.NewReader(data), int64(len(data)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	}()
	if pf == nil {
		return false, 0
	}
	type leafInfo struct {
		maxRep, maxDef int
		codec          format.CompressionCodec
	}
	var leaves []leafInfo
	var walk func(c *parquet.Column)
	walk = func(c *parquet.Column) {
		if c.Leaf() {
			codec := format.Uncompressed
			if cc := c.Compression(); cc != nil {
				codec = cc.CompressionCodec()
			}
			leaves = append(leaves, leafInfo{c.MaxRepetitionLevel(), c.MaxDefinitionLevel(), codec})
			return
		}
		for _, child := range c.Columns() {
			walk(child)
		}
	}
	walk(pf.Root())
	worst := uint64(0)
	note := func(n uint64) { worst = max(worst, n) }
	proto := &thrift.CompactProtocol{}
	for _, rg := range pf.Metadata().RowGroups {
		for j, cc := range rg.Columns {
			if j >= len(leaves) {
				break
			}
			leaf := leaves[j]
			md := cc.MetaData
			pos := md.DataPageOffset
			if md.DictionaryPageOffset != 0 {
				pos = md.DictionaryPageOffset
			}
			end := min(pos+md.TotalCompressedSize, int64(len(data)))
			for pos >= 0 && pos < end {
				br := bytes.NewReader(data[pos:end])
				var h format.PageHeader
				if thrift.NewDecoder(proto.NewReader(br)).Decode(&h) != nil || h.CompressedPageSize < 0 {
					break
				}
				payload := end - int64(br.Len())
				next := payload + int64(h.CompressedPageSize)
				if next > end {
					break
				}
				page := data[payload:next]
				pos = next
				switch h.Type {
				case format.DataPage:
					v := h.DataPageHeader.V
					body, ok := decompress(leaf.codec, page, int(h.UncompressedPageSize))
					if !ok {
						continue
					}
					for _, lv := range []struct {
						max int
						enc format.Encoding
					}{{leaf.maxRep, v.RepetitionLevelEncoding}, {leaf.maxDef, v.DefinitionLevelEncoding}} {
						if lv.max == 0 || len(body) < 4 {
							continue
						}
						if lv.enc == format.RLE {
							n := int(binary.LittleEndian.Uint32(body))
							if n > len(body)-4 {
								body = nil
								break
							}
							note(longestRun(body[4:4+n], bits.Len(uint(lv.max))))
							body = body[4+n:]
						}
					}
					note(valueRuns(body, v.Encoding))
				case format.DataPageV2:
					v := h.DataPageHeaderV2.V
					rep, def := int(v.RepetitionLevelsByteLength), int(v.DefinitionLevelsByteLength)
					if rep < 0 || def < 0 || rep+def > len(page) {
						continue
					}
					note(longestRun(page[:rep], bits.Len(uint(leaf.maxRep))))
					note(longestRun(page[rep:rep+def], bits.Len(uint(leaf.maxDef))))
					body := page[rep+def:]
					if !v.IsCompressed.Valid || v.IsCompressed.V {
						var ok bool
						if body, ok = decompress(leaf.codec, body, int(h.UncompressedPageSize)); !ok {
							continue
						}
					}
					note(valueRuns(body, v.Encoding))
				}
			}
		}
	}
	return worst > runBombLimit, worst
}

// decompress decodes a page as the reader would: with the codec
// parquet-go looks up (the reader's bounded codecs, see codecs.go) into
// a buffer of the size the page header gives. false when it does not
// decode (the reader then fails on it, safely) or when the header asks
// for more than FuzzCorruptParquet's memory limit lets it allocate.
func decompress(codec format.CompressionCodec, src []byte, size int) (out []byte, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = nil, false
		}
	}()
	if codec == format.Uncompressed {
		return src, true
	}
	if size < 0 || size > 256<<20 {
		return nil, false
	}
	out, err := parquet.LookupCompressionCodec(codec).Decode(make([]byte, size), src)
	return out, err == nil
}

// valueRuns returns the longest run the values section of a page could ask
// for under its encoding, read every way parquet-go might read it.
func valueRuns(body []byte, enc format.Encoding) uint64 {
	switch enc {
	case format.PlainDictionary, format.RLEDictionary:
		if len(body) == 0 {
			return 0
		}
		return longestRun(body[1:], int(body[0]))
	case format.RLE, format.BitPacked:
		// Booleans carry a 4-byte length first; other types do not.
		worst := uint64(0)
		for _, w := range []int{0, 1, 8, 32, 64} {
			worst = max(worst, longestRun(body, w))
			if len(body) >= 4 {
				worst = max(worst, longestRun(body[4:], w))
			}
		}
		return worst
	case format.DeltaBinaryPacked, format.DeltaLengthByteArray, format.DeltaByteArray:
		// block size, miniblocks per block, total value count.
		worst := uint64(0)
		for i := 0; i < 3 && len(body) > 0; i++ {
			u, n := binary.Uvarint(body)
			if n <= 0 {
				break
			}
			worst = max(worst, u)
			body = body[n:]
		}
		return worst
	}
	return 0
}

// longestRun reads RLE/bit-packed hybrid runs of the given bit width and
// returns the largest value count one of them claims.
func longestRun(src []byte, bitWidth int) uint64 {
	worst := uint64(0)
	for i := 0; i < len(src); {
		u, n := binary.Uvarint(src[i:])
		if n <= 0 {
			return worst // parquet-go fails on it
		}
		i += n
		count := u >> 1
		if u&1 != 0 {
			worst = max(worst, count*8)
			i += int(min(count*uint64(bitWidth), uint64(len(src))))
		} else {
			worst = max(worst, count)
			i += (bitWidth + 7) / 8
		}
	}
	return worst
}
