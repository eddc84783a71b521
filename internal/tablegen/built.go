package tablegen

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// Built is a table written by one of the evolution builders (Evolution,
// Migrated, IdentityPartitioned, AllTypes) together with what every one of
// its snapshots must read as.
type Built struct {
	// Table is the table as last committed.
	Table *table.Table
	// Snapshots are the table's snapshots in commit order, each with its
	// expected live rows.
	Snapshots []Expected
	// Unreadable is set when a correct reader must refuse the table rather
	// than return rows: its data files carry no Parquet field ids and the
	// table has no schema.name-mapping.default. Snapshots then still hold the
	// rows the table would read as had the mapping been there.
	Unreadable bool
}

// Expected is what one snapshot of a Built table reads as.
type Expected struct {
	// SnapshotID is the snapshot, as committed.
	SnapshotID int64
	// Doc says what the snapshot's commit did.
	Doc string
	// Columns are the top-level column names of the snapshot's schema, in
	// schema order.
	Columns []string
	// Rows are the live rows as OracleRows encodes them (keys in schema
	// order, DESIGN.md "Values" with the default options) and in its order
	// (data file path, then position in the file). They are written out from
	// the values the builder wrote, not read back, so they hold iceberg-go's
	// reader to account too.
	Rows []string
	// OracleDiffers says why iceberg-go's ReadTasks (OracleRows) does not
	// read the snapshot as Rows say, "" when it does.
	OracleDiffers string
}

// Current is the expectation for the last snapshot.
func (b *Built) Current() Expected { return b.Snapshots[len(b.Snapshots)-1] }

// record appends the expectation for tbl's current snapshot.
func (b *Built) record(tbl *table.Table, doc string, cols []string, rows []string) {
	b.Table = tbl
	b.Snapshots = append(b.Snapshots, Expected{
		SnapshotID: tbl.CurrentSnapshot().SnapshotID,
		Doc:        doc,
		Columns:    cols,
		Rows:       rows,
	})
}

// The j* helpers spell expected JSON values independently of the oracle's
// Arrow encoder.

const jNull = "null"

func jInt[T ~int32 | ~int64](v *T) string {
	if v == nil {
		return jNull
	}
	return strconv.FormatInt(int64(*v), 10)
}

func jStr(v *string) string {
	if v == nil {
		return jNull
	}
	return string(appendJSONString(nil, *v))
}

// jFloat spells a float of the given bit size; NaN and ±Inf are null.
func jFloat(v float64, bits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return jNull
	}
	return strconv.FormatFloat(v, 'g', -1, bits)
}

// jDec spells an unscaled decimal at the given scale as an exact string.
func jDec(v *int64, scale int) string {
	if v == nil {
		return jNull
	}
	u := *v
	sign := ""
	if u < 0 {
		sign, u = "-", -u
	}
	s := strconv.FormatInt(u, 10)
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	return `"` + sign + s[:len(s)-scale] + "." + s[len(s)-scale:] + `"`
}

// jDays spells a date (days since the epoch) as epoch milliseconds.
func jDays(v *int32) string {
	if v == nil {
		return jNull
	}
	return strconv.FormatInt(int64(*v)*86_400_000, 10)
}

// jObject joins key/value pairs, keys in the order given, into a JSON object.
func jObject(cols []string, vals []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(appendJSONString(nil, c))
		b.WriteByte(':')
		b.WriteString(vals[i])
	}
	b.WriteByte('}')
	return b.String()
}
