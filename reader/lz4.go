package reader

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// maxLZ4Ratio bounds how much an LZ4 block can expand: a literal-free
// sequence adds at most 255 bytes of match per byte of input.
const maxLZ4Ratio = 256

// checkLZ4Pages decodes every LZ4_RAW page of pf once before parquet-go
// does. parquet-go's LZ4 codec answers any decoding error by doubling its
// output buffer and trying again, without end, so one damaged page (or a
// damaged footer whose codec now says LZ4_RAW) would allocate until the
// process dies. A page that does not decode here into the size its header
// gives is ErrCorruptFile; one that does decodes in parquet-go too.
//
// It reads the LZ4_RAW column chunks twice, page by page through a buffer;
// files with other codecs pay nothing.
func checkLZ4Pages(r io.ReaderAt, pf *parquet.File) error {
	var lz4Leaves []int
	var find func(c *parquet.Column)
	find = func(c *parquet.Column) {
		if c.Leaf() {
			// parquet-go decodes every chunk of a column with the codec of
			// the column, as the first row group gives it.
			if cc := c.Compression(); cc != nil && cc.CompressionCodec() == format.Lz4Raw {
				lz4Leaves = append(lz4Leaves, c.Index())
			}
			return
		}
		for _, child := range c.Columns() {
			find(child)
		}
	}
	find(pf.Root())
	if len(lz4Leaves) == 0 {
		return nil
	}
	var br *bufio.Reader
	var src, dst []byte
	for _, rg := range pf.Metadata().RowGroups {
		for _, i := range lz4Leaves {
			if i >= len(rg.Columns) {
				return fmt.Errorf("row group has no column chunk %d", i)
			}
			md := &rg.Columns[i].MetaData
			base := md.DataPageOffset
			if md.DictionaryPageOffset != 0 {
				base = md.DictionaryPageOffset
			}
			section := io.NewSectionReader(r, base, md.TotalCompressedSize)
			if br == nil {
				br = bufio.NewReaderSize(section, readBufferSize)
			} else {
				br.Reset(section)
			}
			dec := thrift.NewDecoder((&thrift.CompactProtocol{}).NewReader(br))
			left := md.TotalCompressedSize
			for page := 0; ; page++ {
				var h format.PageHeader
				if err := dec.Decode(&h); err != nil {
					if errors.Is(err, io.EOF) {
						break
					}
					return fmt.Errorf("column %s, page %d: header: %w", strings.Join(md.PathInSchema, "."), page, err)
				}
				if h.CompressedPageSize < 0 || int64(h.CompressedPageSize) > left {
					return fmt.Errorf("column %s, page %d: %d compressed bytes in a chunk of %d",
						strings.Join(md.PathInSchema, "."), page, h.CompressedPageSize, md.TotalCompressedSize)
				}
				left -= int64(h.CompressedPageSize)
				if cap(src) < int(h.CompressedPageSize) {
					src = make([]byte, h.CompressedPageSize)
				}
				src = src[:h.CompressedPageSize]
				if _, err := io.ReadFull(br, src); err != nil {
					return fmt.Errorf("column %s, page %d: %w", strings.Join(md.PathInSchema, "."), page, err)
				}
				in, want := src, int(h.UncompressedPageSize)
				switch h.Type {
				case format.DataPage, format.DictionaryPage:
				case format.DataPageV2:
					// The levels come first, never compressed.
					v2 := &h.DataPageHeaderV2.V
					levels := int(v2.RepetitionLevelsByteLength) + int(v2.DefinitionLevelsByteLength)
					if levels < 0 || levels > len(in) {
						return fmt.Errorf("column %s, page %d: %d level bytes in a page of %d",
							strings.Join(md.PathInSchema, "."), page, levels, len(in))
					}
					if v2.IsCompressed.Valid && !v2.IsCompressed.V {
						continue
					}
					in = in[levels:]
				default:
					continue
				}
				// parquet-go decodes into a buffer of the header's size or
				// larger, so a page that decodes here decodes there.
				if want < 0 || want > maxLZ4Ratio*len(in)+64 {
					return fmt.Errorf("column %s, page %d: %d bytes cannot decode from %d bytes of LZ4",
						strings.Join(md.PathInSchema, "."), page, want, len(in))
				}
				if cap(dst) < want {
					dst = make([]byte, want)
				}
				if _, err := lz4.UncompressBlock(in, dst[:want]); err != nil {
					return fmt.Errorf("column %s, page %d: LZ4: %w", strings.Join(md.PathInSchema, "."), page, err)
				}
			}
		}
	}
	return nil
}
