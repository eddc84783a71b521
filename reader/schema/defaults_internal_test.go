package schema

import (
	"testing"

	"github.com/apache/iceberg-go"
)

// TestDefaultAsNumber: iceberg-go v0.7.0 writes the initial-default of a
// timestamp, date or time as a JSON number in the type's unit, which the
// metadata reads back as a float64; an integral one is that value, a
// fractional one an error.
func TestDefaultAsNumber(t *testing.T) {
	for _, tc := range []struct {
		typ  iceberg.Type
		v    float64
		want iceberg.Literal
	}{
		{iceberg.PrimitiveTypes.TimestampNs, 1.7e18, iceberg.TimestampNsLiteral(1_700_000_000_000_000_000)},
		{iceberg.PrimitiveTypes.TimestampTzNs, -1500, iceberg.TimestampNsLiteral(-1500)},
		{iceberg.PrimitiveTypes.Timestamp, 1.7e15, iceberg.TimestampLiteral(1_700_000_000_000_000)},
		{iceberg.PrimitiveTypes.TimestampTz, 0, iceberg.TimestampLiteral(0)},
		{iceberg.PrimitiveTypes.Date, 19000, iceberg.DateLiteral(19000)},
		{iceberg.PrimitiveTypes.Time, 3_600_000_000, iceberg.TimeLiteral(3_600_000_000)},
	} {
		got, err := defaultLiteral(tc.typ, tc.v)
		if err != nil || !got.Equals(tc.want) {
			t.Errorf("%s default %v: %v (%v), want %v", tc.typ, tc.v, got, err, tc.want)
		}
	}
	if got, err := defaultLiteral(iceberg.PrimitiveTypes.TimestampNs, 1.5); err == nil {
		t.Errorf("timestamp_ns default 1.5: %v, want an error", got)
	}
}
