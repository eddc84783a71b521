package tablegen

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/apache/iceberg-go/table"
)

func TestBench(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Each file is less than one batch (benchBatchRows) at this size as at
	// any other up to it; TestRowPermutation holds the deleted rows'
	// spread at larger sizes.
	const rows, files = 4_000, 2
	cat := newCatalog(t)
	tbl, err := Bench(ctx, cat, table.Identifier{"bench", "t"}, rows, files, 0.05, 0.01)
	if err != nil {
		t.Fatalf("bench: %v", err)
	}
	pos, eq := BenchDeletes(rows, 0.05, 0.01)
	if pos != 200 || eq != 40 {
		t.Fatalf("BenchDeletes = %d, %d; want 200, 40", pos, eq)
	}
	want := int64(rows) - pos - eq

	got := oracle(t, ctx, tbl)
	if int64(len(got)) != want {
		t.Errorf("oracle returned %d rows, want %d", len(got), want)
	}
	n, err := OracleJSONBaseline(ctx, tbl)
	if err != nil {
		t.Fatalf("baseline: %v", err)
	}
	if n != want {
		t.Errorf("baseline read %d rows, want %d", n, want)
	}

	one := Attached{Positional: []string{"bench-pos-deletes-00001.parquet"}, Equality: [][]int{{1}}}
	if got, want := planned(t, ctx, tbl), wantPlan(map[int]Attached{1: one, 2: one}); !reflect.DeepEqual(got, want) {
		t.Errorf("PlanFiles attached\n got: %+v\nwant: %+v", got, want)
	}

	// Same arguments, same rows.
	again, err := Bench(ctx, cat, table.Identifier{"bench", "again"}, rows, files, 0.05, 0.01)
	if err != nil {
		t.Fatalf("second bench: %v", err)
	}
	if got2 := oracle(t, ctx, again); !reflect.DeepEqual(got2, got) {
		t.Errorf("two Bench tables with the same arguments differ")
	}
}

func TestBenchDeleteFilesPerFourDataFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, err := Bench(ctx, newCatalog(t), table.Identifier{"bench", "t"}, 1000, 5, 0.1, 0)
	if err != nil {
		t.Fatalf("bench: %v", err)
	}
	plan := planned(t, ctx, tbl)
	if len(plan) != 5 {
		t.Fatalf("planned %d data files, want 5", len(plan))
	}
	for n := 1; n <= 5; n++ {
		want := "bench-pos-deletes-00001.parquet"
		if n == 5 {
			want = "bench-pos-deletes-00002.parquet"
		}
		a := plan[DataFileName(n)]
		if len(a.Positional) != 1 || a.Positional[0] != want || a.Equality != nil {
			t.Errorf("data file %d: attached %+v, want only %s", n, a, want)
		}
	}
	if got := len(oracle(t, ctx, tbl)); got != 900 {
		t.Errorf("oracle returned %d rows, want 900", got)
	}
}

func TestBenchRejects(t *testing.T) {
	tests := []struct {
		name            string
		rows, files     int
		posFrac, eqFrac float64
	}{
		{"no rows", 0, 1, 0, 0},
		{"no files", 10, 0, 0, 0},
		{"more files than rows", 2, 3, 0, 0},
		{"negative fraction", 10, 1, -0.1, 0},
		{"fractions above one", 10, 1, 0.6, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Bench(context.Background(), newCatalog(t), table.Identifier{"bench", "t"}, tt.rows, tt.files, tt.posFrac, tt.eqFrac)
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Bench error = %v, want ErrInvalidArgument", err)
			}
		})
	}
}

func TestRowPermutation(t *testing.T) {
	for _, n := range []int{1, 2, 7, 1000, 20_000, 1_000_003} {
		p := newRowPermutation(n)
		seen := make([]bool, n)
		for r := range int64(n) {
			v := p.at(r)
			if v < 0 || v >= int64(n) || seen[v] {
				t.Fatalf("n=%d: at(%d) = %d repeats or is out of range", n, r, v)
			}
			seen[v] = true
		}
		// The first 5% of the image is spread evenly: each tenth of the rows
		// holds close to a tenth of it.
		if n >= 1000 {
			k := int64(n) / 20
			for tenth := range int64(10) {
				var c int64
				for r := tenth * int64(n) / 10; r < (tenth+1)*int64(n)/10; r++ {
					if p.at(r) < k {
						c++
					}
				}
				if c < k/10*8/10 || c > k/10*12/10 {
					t.Errorf("n=%d: tenth %d holds %d of the first %d, want about %d", n, tenth, c, k, k/10)
				}
			}
		}
	}
}
