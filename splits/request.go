package splits

import (
	"fmt"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/token"
)

// Mode is what a client asks for.
type Mode string

// The request modes.
const (
	// ModeAuto serves raw files when no delete file applies, rows otherwise.
	ModeAuto Mode = "auto"
	// ModeRows serves rows for every table, so a spec stays the same when a
	// table gains its first delete file.
	ModeRows Mode = "rows"
	// ModeFiles serves raw files and is refused when any delete file applies.
	ModeFiles Mode = "files"
)

// ParseMode parses a mode, "" being auto.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeAuto, nil
	case ModeAuto, ModeRows, ModeFiles:
		return m, nil
	}
	return "", fmt.Errorf("%w: mode %s: want auto, rows or files", fault.ErrBadRequest, fault.Quote(s))
}

// Path is the path a plan takes: PathFiles (v1) or PathRows (v2).
type Path string

// The two paths.
const (
	PathFiles Path = "v1"
	PathRows  Path = "v2"
)

// Request selects a table, a snapshot and a mode. At most one of SnapshotID,
// SnapshotTime and Ref may be set; none means the current snapshot.
type Request struct {
	Table        string
	SnapshotID   *int64
	SnapshotTime *time.Time
	Ref          string
	Mode         Mode
	// Columns narrows the rows to these top-level columns (emitted in schema
	// order); empty means all. It applies to the row path only: raw files
	// hold what they hold.
	Columns  []string
	Encoding token.Encoding
	// MetaColumns are the metadata columns the rows carry after the
	// table's (see token.MetaColumns); any takes the row path.
	MetaColumns token.MetaColumns
	// Filter is Druid's icebergFilter; nil plans every file.
	Filter *druid.Filter
	// ResidualMode is Druid's residualFilterMode: ignore (default), warn
	// or fail.
	ResidualMode ResidualMode
	// Now is the base time of a timeWindow filter without one; zero means
	// the time of planning.
	Now time.Time
	// FromSnapshot, when set, plans only the data appended after that
	// snapshot up to the selected one (the current one by default), for
	// incremental ingestion; every snapshot in between must be an append.
	FromSnapshot *int64
	// MinSplits asks the row path for at least this many splits (as long
	// as the data files have as many row groups): the target split size
	// is lowered to the plan's bytes divided by it. 0 or 1 leaves it.
	MinSplits int
	// MaxSplits, when positive and below the planner's bound
	// (WithMaxSplits), bounds the plan's splits: the generators of Druid
	// specs pack more per split so that a spec stays within the payload
	// Druid's task runners take.
	MaxSplits int
	// Compression chooses the row URIs of the answer; planning ignores
	// it.
	Compression Compression
	// Interval, when set, plans only the rows whose time column the
	// sidecar serves as a Druid time in [Start, End): the files that may
	// hold such rows, each filtered row by row unless all its times lie
	// in the interval (what /changes re-ingests).
	Interval *TimeInterval
	// TimeColumn, when set, is the top-level column Druid's __time comes
	// from (the Interval's column, when it has one): the plan warns when
	// its files' metadata shows times outside the years 1 to 9999
	// (timeRangeWarning). It changes no split.
	TimeColumn string
	// ApplyResidual makes the row path drop the rows that do not match
	// the filter, so the filter holds row by row and not only file by
	// file; it takes the row path whenever a residual remains.
	ApplyResidual bool
}

// TimeInterval is a time interval of a table's time column: [Start, End)
// in Druid milliseconds.
type TimeInterval struct {
	// Column names a top-level timestamp, date or long (epoch
	// milliseconds) column.
	Column     string
	Start, End time.Time
}

// Compression is how the row path's streams are compressed on the wire:
// it chooses the URIs handed out (Druid decompresses by their extension),
// not the splits.
type Compression string

// The compressions.
const (
	CompressionNone Compression = "none"
	CompressionGzip Compression = "gzip"
	CompressionZstd Compression = "zstd"
)

// DefaultCompression is the compression of a request that names none.
const DefaultCompression = CompressionNone

// ParseCompression parses a compression, "" being DefaultCompression.
func ParseCompression(s string) (Compression, error) {
	switch c := Compression(s); c {
	case "":
		return DefaultCompression, nil
	case CompressionNone, CompressionGzip, CompressionZstd:
		return c, nil
	}
	return "", fmt.Errorf("%w: compression %q: want none, gzip or zstd", fault.ErrBadRequest, s)
}

// ResidualMode says what to do when the filter cannot be decided from
// partition values and file statistics alone, so that some planned files
// hold rows that do not match.
type ResidualMode string

// The residual modes, as Druid names them.
const (
	ResidualIgnore ResidualMode = "ignore"
	ResidualWarn   ResidualMode = "warn"
	ResidualFail   ResidualMode = "fail"
)

// ParseResidualMode parses a residualFilterMode, "" being ignore.
func ParseResidualMode(s string) (ResidualMode, error) {
	switch m := ResidualMode(s); m {
	case "":
		return ResidualIgnore, nil
	case ResidualIgnore, ResidualWarn, ResidualFail:
		return m, nil
	}
	return "", fmt.Errorf("%w: residualFilterMode %s: want ignore, warn or fail", fault.ErrBadRequest, fault.Quote(s))
}

// PlannedSplit is one split of a plan (one URI of the answer) with its
// signed token.
type PlannedSplit struct {
	// Parts are the files the split reads, in order: one data file on the
	// raw-file path; on the row path one or more, each a data file or a
	// range of the row groups of one, with the delete files that apply to
	// it. They share the table, snapshot, schema, projection and encoding.
	Parts []token.Split
	Kind  token.TokenKind
	Token string
	// ID is ID(Token), worked out with the token.
	ID string
}

// Plan is the answer to a Request.
type Plan struct {
	Table      string
	SnapshotID int64
	Path       Path
	Splits     []PlannedSplit
	// Empty says that the plan has no data file to read: the table has
	// no snapshot, nothing was appended after FromSnapshot, or the filter
	// or the time interval pruned every file. Druid's http inputSource
	// refuses an empty uris list, so there is nothing to ingest.
	Empty bool
	// Warnings are things the client should know, such as a residual
	// filter under residualFilterMode=warn.
	Warnings []string
	// Fields are the top-level fields the plan serves, in order: the
	// schema's, narrowed by the projection on the row path.
	Fields []iceberg.NestedField
}

// RecordCount returns the rows the split reads before deletes, and whether
// that number is exact (see token.Split.RecordCount).
func (ps PlannedSplit) RecordCount() (n int64, exact bool) {
	exact = true
	for _, p := range ps.Parts {
		c, ok := p.RecordCount()
		n += c
		exact = exact && ok
	}
	return n, exact
}
