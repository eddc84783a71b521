package tablegen

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// benchSeed seeds the value generator of Bench; file f draws from
// PCG(benchSeed, f), so files can be generated in parallel and still be the
// same on every run.
const benchSeed = 0x5eed_1ceb_e4d5

// benchBatchRows is the number of rows per Arrow batch Bench writes.
const benchBatchRows = 64 * 1024

// benchRegions are the values of the low-cardinality column.
var benchRegions = []string{"us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "ap-northeast-1", "sa-east-1", "af-south-1"}

// BenchSchema is the schema of the Bench table: id long (required, 1…rows),
// quantity int, views long, score double, token string (16 characters),
// region string (8 values), flag boolean, day date, event_ts timestamptz,
// price decimal(18,4). About 1% of quantity, score, region and price are
// null; there is no NaN.
func BenchSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "quantity", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 3, Name: "views", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 4, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 5, Name: "token", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 6, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 7, Name: "flag", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 8, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 9, Name: "event_ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 10, Name: "price", Type: iceberg.DecimalTypeOf(18, 4)},
	)
}

// BenchDeletes returns how many rows Bench deletes by position and by
// equality for the given arguments: floor(rows×posFrac) and
// floor(rows×eqFrac). The two sets are disjoint, so the live row count is
// rows − pos − eq.
func BenchDeletes(rows int, posFrac, eqFrac float64) (pos, eq int64) {
	return int64(math.Floor(float64(rows) * posFrac)), int64(math.Floor(float64(rows) * eqFrac))
}

// Bench creates the performance table ident (format-version 2) in cat and
// returns it; it fails if the table exists. Rows with ids 1…rows are spread
// evenly over files data files, in order (data file f holds a contiguous id
// range), written in parallel and committed in one append snapshot. A second
// snapshot then adds positional delete files, one per four data files, each
// naming the rows of its data files that it deletes, and one equality delete
// file on id. Which rows go is a fixed pseudo-random permutation of the row
// numbers, so the positional and equality sets are disjoint and of exactly
// the sizes BenchDeletes gives. Values are seeded: the same arguments give
// the same rows.
func Bench(ctx context.Context, cat catalog.Catalog, ident table.Identifier, rows, files int, posFrac, eqFrac float64) (*table.Table, error) {
	if rows < 1 || files < 1 || files > rows {
		return nil, fmt.Errorf("%w: bench table with %d rows in %d files", ErrInvalidArgument, rows, files)
	}
	if !(posFrac >= 0 && eqFrac >= 0 && posFrac+eqFrac <= 1) {
		return nil, fmt.Errorf("%w: bench delete fractions %g positional, %g equality", ErrInvalidArgument, posFrac, eqFrac)
	}
	tbl, err := icewrite.CreateTable(ctx, cat, ident, BenchSchema(), 2)
	if err != nil {
		return nil, err
	}
	sc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		return nil, err
	}

	dataFiles, err := writeBenchFiles(ctx, tbl, sc, rows, files)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, dataFiles, nil); err != nil {
		return nil, err
	}

	posCount, eqCount := BenchDeletes(rows, posFrac, eqFrac)
	perm := newRowPermutation(rows)
	var deletes []iceberg.DataFile
	if posCount > 0 {
		for first := 0; first < files; first += 4 {
			var pos []icewrite.PositionalDelete
			for f := first; f < min(first+4, files); f++ {
				from, to := benchFileRows(rows, files, f)
				path := dataFiles[f].FilePath()
				for r := from; r < to; r++ {
					if perm.at(r) < posCount {
						pos = append(pos, icewrite.PositionalDelete{FilePath: path, Pos: r - from})
					}
				}
			}
			if len(pos) == 0 {
				continue
			}
			df, err := icewrite.WritePositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, fmt.Sprintf("bench-pos-deletes-%05d.parquet", first/4+1)), pos)
			if err != nil {
				return nil, err
			}
			deletes = append(deletes, df)
		}
	}
	if eqCount > 0 {
		keySc, err := icewrite.DeleteKeySchema(tbl, 1)
		if err != nil {
			return nil, err
		}
		kb := array.NewInt64Builder(memory.DefaultAllocator)
		defer kb.Release()
		kb.Reserve(int(eqCount))
		for r := range int64(rows) {
			if p := perm.at(r); p >= posCount && p < posCount+eqCount {
				kb.Append(r + 1)
			}
		}
		ids := kb.NewArray()
		defer ids.Release()
		eq, err := icewrite.WriteEqualityDeletes(ctx, tbl, []int{1}, array.NewRecordBatch(keySc, []arrow.Array{ids}, int64(ids.Len())))
		if err != nil {
			return nil, err
		}
		deletes = append(deletes, eq...)
	}
	if len(deletes) == 0 {
		return tbl, nil
	}
	return icewrite.CommitDelta(ctx, tbl, nil, deletes)
}

// benchFileRows is the half-open range of 0-based row numbers in data file f.
func benchFileRows(rows, files, f int) (from, to int64) {
	return int64(rows) * int64(f) / int64(files), int64(rows) * int64(f+1) / int64(files)
}

// writeBenchFiles writes the data files of Bench, GOMAXPROCS files at a
// time (each writer buffers a row group, so more would only cost memory),
// and returns them in file order.
func writeBenchFiles(ctx context.Context, tbl *table.Table, sc *arrow.Schema, rows, files int) ([]iceberg.DataFile, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]iceberg.DataFile, files)
	errs := make([]error, files)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for f := range files {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			from, to := benchFileRows(rows, files, f)
			out[f], errs[f] = icewrite.WriteDataFile(ctx, tbl, f+1, sc, benchBatches(ctx, sc, f, from, to))
			if errs[f] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// benchBatches yields the rows from..to (0-based row numbers, half-open) of
// data file f in batches of benchBatchRows.
func benchBatches(ctx context.Context, sc *arrow.Schema, f int, from, to int64) func(yield func(arrow.RecordBatch, error) bool) {
	return func(yield func(arrow.RecordBatch, error) bool) {
		rng := rand.New(rand.NewPCG(benchSeed, uint64(f)))
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		var (
			id       = b.Field(0).(*array.Int64Builder)
			quantity = b.Field(1).(*array.Int32Builder)
			views    = b.Field(2).(*array.Int64Builder)
			score    = b.Field(3).(*array.Float64Builder)
			token    = b.Field(4).(*array.StringBuilder)
			region   = b.Field(5).(*array.StringBuilder)
			flag     = b.Field(6).(*array.BooleanBuilder)
			day      = b.Field(7).(*array.Date32Builder)
			eventTS  = b.Field(8).(*array.TimestampBuilder)
			price    = b.Field(9).(*array.Decimal128Builder)
		)
		const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
		base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
		var tok [16]byte
		for start := from; start < to; start += benchBatchRows {
			end := min(start+benchBatchRows, to)
			n := int(end - start)
			b.Reserve(n)
			token.ReserveData(n * len(tok))
			for r := start; r < end; r++ {
				id.UnsafeAppend(r + 1)
				if rng.IntN(100) == 0 {
					quantity.AppendNull()
				} else {
					quantity.UnsafeAppend(int32(rng.IntN(1000)))
				}
				views.UnsafeAppend(rng.Int64N(10_000_000))
				if rng.IntN(100) == 0 {
					score.AppendNull()
				} else {
					score.UnsafeAppend(rng.NormFloat64() * 100)
				}
				bits := rng.Uint64()
				for i := range tok {
					if i == 10 {
						bits = rng.Uint64()
					}
					tok[i] = alphabet[bits&63]
					bits >>= 6
				}
				token.BinaryBuilder.Append(tok[:])
				if rng.IntN(100) == 0 {
					region.AppendNull()
				} else {
					region.Append(benchRegions[rng.IntN(len(benchRegions))])
				}
				flag.UnsafeAppend(rng.IntN(2) == 0)
				day.UnsafeAppend(arrow.Date32(19_700 + rng.IntN(730)))
				eventTS.UnsafeAppend(arrow.Timestamp(base + rng.Int64N(366*86_400_000_000)))
				if rng.IntN(100) == 0 {
					price.AppendNull()
				} else {
					price.UnsafeAppend(decimal128.FromI64(rng.Int64N(100_000_000) - 10_000_000))
				}
			}
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			if !yield(b.NewRecordBatch(), nil) {
				return
			}
		}
	}
}

// rowPermutation maps row numbers 0…n−1 one-to-one onto 0…n−1 as r·m mod n,
// with m coprime to n and close to n/φ: the rows that any prefix of the image
// comes from are spread evenly over 0…n−1 (a Weyl sequence), so every data
// file loses about the same share of its rows.
type rowPermutation struct{ n, m uint64 }

func newRowPermutation(rows int) rowPermutation {
	n := uint64(rows)
	m := max(uint64(float64(n)*0.6180339887498949), 1)
	for gcd(m, n) != 1 {
		m++
	}
	return rowPermutation{n: n, m: m}
}

func (p rowPermutation) at(r int64) int64 {
	hi, lo := bits.Mul64(uint64(r), p.m)
	return int64(bits.Rem64(hi, lo, p.n))
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
