package storage

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/druidiceberg/sidecar/reader/schema"
)

// checkFooter holds a Parquet file's footer to what the rest of the file
// and the manifest confirm, where parquet-go would otherwise read a damaged
// footer without complaint and serve other rows: the schema against the
// types parquet-go decodes with, the column chunks against each other, and
// the row count against the manifest's (records; 0 when unknown). Parquet
// has no checksum over its footer, so this is what can be checked; a
// changed field id or name cannot be told from a genuine one.
func checkFooter(pf *parquet.File, records int64) error {
	var leaves []*format.SchemaElement
	for i := range pf.Metadata().Schema {
		if se := &pf.Metadata().Schema[i]; se.Type.Valid {
			// The leaves, in the order parquet-go numbers them.
			leaves = append(leaves, se)
		}
	}
	if err := checkSchema(pf, leaves); err != nil {
		return err
	}
	if err := checkChunks(pf, leaves); err != nil {
		return err
	}
	return checkRowCount(pf, records)
}

// checkChunks holds every column chunk to its leaf column's physical type
// (the footer gives it twice, in the schema and in the chunk), to one codec
// per column and, uncompressed, to equal sizes, and the byte
// ranges of the chunks to the file: each between the leading magic bytes
// and the footer's length at the end, none overlapping another. A damaged
// type would decode the values at another width, and a damaged offset
// would make a column read another column's pages as its own.
func checkChunks(pf *parquet.File, leaves []*format.SchemaElement) error {
	type span struct{ from, to int64 }
	var spans []span
	end := pf.Size() - 8
	for _, rg := range pf.Metadata().RowGroups {
		if len(rg.Columns) != len(leaves) {
			return fmt.Errorf("a row group has %d column chunks for %d columns", len(rg.Columns), len(leaves))
		}
		for i, cc := range rg.Columns {
			md := &cc.MetaData
			if md.Type != leaves[i].Type.V {
				return fmt.Errorf("column %s is %s in the schema but its chunk is %s",
					strings.Join(md.PathInSchema, "."), leaves[i].Type.V, md.Type)
			}
			if md.Codec != rg0(pf).Columns[i].MetaData.Codec {
				// parquet-go decodes every row group with the first's codec.
				return fmt.Errorf("column %s is %s in one row group and %s in another",
					strings.Join(md.PathInSchema, "."), rg0(pf).Columns[i].MetaData.Codec, md.Codec)
			}
			if md.Codec == format.Uncompressed && md.TotalUncompressedSize != md.TotalCompressedSize {
				// A compressed chunk whose codec now says UNCOMPRESSED would
				// be read as raw values.
				return fmt.Errorf("column %s is uncompressed, but its chunk is %d bytes compressed and %d uncompressed",
					strings.Join(md.PathInSchema, "."), md.TotalCompressedSize, md.TotalUncompressedSize)
			}
			from := md.DataPageOffset
			if md.DictionaryPageOffset != 0 {
				from = md.DictionaryPageOffset
			}
			to := from + md.TotalCompressedSize
			if from < 4 || md.TotalCompressedSize < 0 || to > end || to < from {
				return fmt.Errorf("column %s: its chunk [%d, %d) is not inside the file [4, %d)",
					strings.Join(md.PathInSchema, "."), from, to, end)
			}
			spans = append(spans, span{from, to})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	for i := 1; i < len(spans); i++ {
		if spans[i].from < spans[i-1].to {
			return fmt.Errorf("column chunks [%d, %d) and [%d, %d) overlap",
				spans[i-1].from, spans[i-1].to, spans[i].from, spans[i].to)
		}
	}
	return nil
}

// checkSchema holds the file's schema to what parquet-go will decode its
// pages with. Every repetition type must be one of the three (parquet-go
// reads any other value as required, and so would read an optional
// column's definition levels as values), and every leaf column's type, as
// parquet-go derives it, must be the physical type its schema element
// declares: parquet-go takes the type from the logical type annotation when
// there is one (INT(bitWidth), DATE, TIMESTAMP, UUID…) and decodes the
// pages with it, so an annotation that contradicts the physical type (a
// damaged footer) would decode values at the wrong width, silently.
func checkSchema(pf *parquet.File, elems []*format.SchemaElement) error {
	for i := range pf.Metadata().Schema {
		se := &pf.Metadata().Schema[i]
		if rt := se.RepetitionType; rt.Valid && rt.V != format.Required && rt.V != format.Optional && rt.V != format.Repeated {
			return fmt.Errorf("column %s has repetition type %d", se.Name, rt.V)
		}
	}
	var check func(c *parquet.Column) error
	check = func(c *parquet.Column) error {
		if !c.Leaf() {
			for _, child := range c.Columns() {
				if err := check(child); err != nil {
					return err
				}
			}
			return nil
		}
		i := c.Index()
		if i < 0 || i >= len(elems) {
			return fmt.Errorf("leaf column %s has no schema element", strings.Join(c.Path(), "."))
		}
		se, typ := elems[i], c.Type()
		physical := parquet.Kind(se.Type.V)
		if _, null := schema.LogicalValue(typ.LogicalType()).(*format.NullType); null {
			// An unknown-typed column (Iceberg's writers store it as INT32
			// annotated NULL, others in any physical type): parquet-go gives
			// it no kind, and the reader holds it to nulls (leaf.load).
			return nil
		}
		if typ.Kind() != physical || (physical == parquet.FixedLenByteArray && typ.Length() != int(se.TypeLength.V)) {
			return fmt.Errorf("column %s is %s with length %d, but its logical type %s reads it as %s with length %d",
				strings.Join(c.Path(), "."), physical, se.TypeLength.V, typ, typ.Kind(), typ.Length())
		}
		if d, ok := schema.LogicalValue(typ.LogicalType()).(*format.DecimalType); ok {
			if most := decimalDigits(physical, int(se.TypeLength.V)); int(d.Precision) > most {
				return fmt.Errorf("column %s is DECIMAL(%d,%d), more digits than its %s of length %d holds (%d)",
					strings.Join(c.Path(), "."), d.Precision, d.Scale, physical, se.TypeLength.V, most)
			}
		}
		return nil
	}
	return check(pf.Root())
}

// decimalDigits is the largest decimal precision a physical type holds, as
// the Parquet format sets it: 9 digits in an INT32, 18 in an INT64, and in a
// fixed array of n bytes the digits of the largest n-byte two's complement
// number.
func decimalDigits(k parquet.Kind, n int) int {
	switch k {
	case parquet.Int32:
		return 9
	case parquet.Int64:
		return 18
	case parquet.FixedLenByteArray:
		if n <= 0 {
			return 0
		}
		if n > 64 {
			return math.MaxInt
		}
		// floor(log10(2^(8n-1) - 1)) = digits of 2^(8n-1) - 1, minus one.
		most := new(big.Int).Lsh(big.NewInt(1), uint(8*n-1))
		return len(most.Sub(most, big.NewInt(1)).String()) - 1
	}
	return math.MaxInt
}

// checkRowCount holds the footer's row counts (the file's and the sum of
// its row groups') to the count the manifest gives the file, when it gives
// one (records > 0): a damaged count would end the file early, or read past its rows,
// without any other sign.
func checkRowCount(pf *parquet.File, want int64) error {
	if want <= 0 {
		return nil
	}
	sum := int64(0)
	for _, rg := range pf.Metadata().RowGroups {
		sum += rg.NumRows
	}
	if got := pf.Metadata().NumRows; got != want || sum != want {
		return fmt.Errorf("its footer counts %d rows (%d in its row groups), the manifest %d", got, sum, want)
	}
	return nil
}

// rg0 is the first row group of pf; checkChunks only calls it when there is
// one.
func rg0(pf *parquet.File) *format.RowGroup { return &pf.Metadata().RowGroups[0] }
