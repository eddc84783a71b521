package druid

import (
	"errors"
	"strconv"
	"strings"
)

// ErrNothingToRead: the plan has nothing to read, and the spec asked for
// cannot be written without a row (Druid's http inputSource refuses an
// empty uris list, and an INSERT of nothing does nothing).
var ErrNothingToRead = errors.New("nothing to read")

// The Druid versions that the generated features need, from the Druid
// change that brought each; the docs' table lists them.
const (
	// VersionMSQ: SQL-based ingestion (INSERT and REPLACE with EXTERN).
	VersionMSQ = "24.0"
	// VersionSchemaDiscovery: type-aware schema discovery
	// (dimensionsSpec.useSchemaDiscovery), which the raw files' nested
	// columns rely on.
	VersionSchemaDiscovery = "26.0"
	// VersionListNulls: Druid's JSON reader keeps the nulls inside lists
	// (apache/druid#13712); before, [1,null,3] is read as [1,3].
	VersionListNulls = "26.0"
	// VersionArrays: a list of scalars is an ARRAY column under both
	// engines (nested column format v5: AutoTypeColumnIndexer for json
	// dimensions, arrayIngestMode for MSQ); before, COMPLEX<json>.
	VersionArrays = "28.0"
	// VersionPinnedTypes: castToType pins an auto column's type in every
	// segment (apache/druid#15417), so that booleans and lists keep one
	// type in segments whose rows are all null.
	VersionPinnedTypes = "29.0"
	// VersionEmptyReplace: failOnEmptyInsert (apache/druid#15495), which
	// lets a REPLACE that reads no row delete its interval.
	VersionEmptyReplace = "29.0"
	// VersionScaledDecimals: Druid's Parquet reader scales decimals stored
	// as INT32 or INT64 (apache/druid#15715); before, it reads their
	// unscaled integers.
	VersionScaledDecimals = "29.0"
)

// AtLeast says whether release (a Druid version such as "27.0.0", as GET
// /status answers it) is need ("29.0") or later, by major and minor
// number. A release it cannot read is not.
func AtLeast(release, need string) bool {
	r, ok1 := majorMinor(release)
	n, ok2 := majorMinor(need)
	return ok1 && ok2 && (r[0] > n[0] || r[0] == n[0] && r[1] >= n[1])
}

func majorMinor(v string) ([2]int, bool) {
	parts := strings.SplitN(v, ".", 3)
	var out [2]int
	if len(parts) < 2 {
		return out, false
	}
	for i := range out {
		n, err := strconv.Atoi(parts[i])
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}
