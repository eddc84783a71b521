package parquetpage

import (
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// ColumnOf describes leaf column c of a file, whose chunk in a row group
// has metadata md.
func ColumnOf(c *parquet.Column, md *format.ColumnMetaData) Column {
	return Column{
		Type:   md.Type,
		Length: c.Type().Length(),
		MaxDef: c.MaxDefinitionLevel(),
		MaxRep: c.MaxRepetitionLevel(),
		Codec:  md.Codec,
	}
}

// ChunkOf locates a column chunk from its metadata: from its dictionary
// page when it has one (a dictionary page offset of 0 is none), else its
// first data page, for its compressed size.
func ChunkOf(md *format.ColumnMetaData) Chunk {
	from := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		from = md.DictionaryPageOffset
	}
	return Chunk{Offset: from, Size: md.TotalCompressedSize, NumValues: md.NumValues}
}
