package druid

import "errors"

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
