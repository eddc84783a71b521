package splits

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/token"
)

// The packing step of Plan: turn the scan's data files into splits, the
// units of work Druid hands its subtasks, one per URI
// (HttpInputSource.createSplits in apache/druid makes one InputSplit per
// URI, and index_parallel runs one subtask per split).
//
// The raw-file path hands Druid each data file as it is: one split per
// file. The row path sizes its splits as Druid sizes those of its own
// cloud input sources: CloudObjectInputSource.createSplits in apache/druid
// packs objects with SplittableInputSource.DEFAULT_SPLIT_HINT_SPEC, a
// MaxSizeSplitHintSpec of at most 1 GiB (maxSplitSize) and 1000 files
// (maxNumFiles) a split, counted in stored bytes (ParquetInputFormat keeps
// InputFormat.getWeightedSize's 1:1). So a split here packs whole data
// files, in path order, up to the target split size and at most
// maxSplitFiles of them, exactly as MaxSizeSplitHintSpec.split does: a
// file joins the split when the split is empty, or when the split's bytes
// and the file's stay below the target and the split holds fewer than the
// maximum number of files. A file larger than the target is first cut
// into ranges of its row groups of at most the target each (rowgroupranges.go),
// which are packed like files. The same scan always packs the same way.
//
// A request's MinSplits lowers the target to the table's bytes divided by
// it, so that the plan has at least that many splits for Druid's
// maxNumConcurrentSubTasks to share (as long as the files have that many
// row groups between them).

// DefaultTargetSplitSize is the target split size when WithTargetSplitSize
// is not given: Druid's MaxSizeSplitHintSpec.DEFAULT_MAX_SPLIT_SIZE.
const DefaultTargetSplitSize = 1 << 30

// DefaultMaxSplitFiles is the most data files a split packs when
// WithMaxSplitFiles is not given: Druid's
// MaxSizeSplitHintSpec.DEFAULT_MAX_NUM_FILES.
const DefaultMaxSplitFiles = 1000

// DefaultMaxSplits is the most splits (URIs) one plan hands out when
// WithMaxSplits is not given. Druid holds every URI in the parent task's
// spec, which it stores in its metadata database (and, with the ZooKeeper
// task runner, in a znode): MaxSizeSplitHintSpec's comment in apache/druid
// names jute.maxbuffer (500 KB by default) and max_allowed_packet (4 MiB on
// older MySQL) as the limits a large spec hits. A thousand URIs of a few
// hundred bytes stay well within them, and at the default target size
// cover a terabyte.
const DefaultMaxSplits = 1000

// PlannerOption configures a Planner.
type PlannerOption func(*Planner)

// WithTargetSplitSize sets the size of the row path's splits: it packs
// data files smaller than n bytes into splits of up to n bytes, and cuts a
// Parquet data file larger than n into splits of about n bytes each, each a
// contiguous range of its row groups (a row group larger than n is a range
// of its own), so that Druid spreads one large file over several workers.
// n <= 0 neither packs nor cuts: one split per data file. The raw-file path
// never does either: Druid fetches each of its URIs whole.
// MaxResidualBytes bounds the JSON of the filter that applyResidual puts
// into a split's token: it rides in the split's URI, which the server must
// accept back (token.MaxTokenLength).
const MaxResidualBytes = 32 << 10

func WithTargetSplitSize(n int64) PlannerOption {
	return func(p *Planner) { p.targetSplitSize = max(n, 0) }
}

// WithMaxSplits bounds the splits (URIs) of one plan; n <= 0 means no
// bound. The row path packs larger splits when it would otherwise make
// more (and says so in the plan's warnings); a raw-file plan of more data
// files is refused in mode=files (ErrTooManySplits) and takes the row path
// in mode=auto.
func WithMaxSplits(n int) PlannerOption {
	return func(p *Planner) { p.maxSplits = max(n, 0) }
}

// WithMaxSplitFiles sets the most data files (or ranges of one) a split of
// the row path packs; n <= 0 keeps the default.
func WithMaxSplitFiles(n int) PlannerOption {
	return func(p *Planner) {
		if n > 0 {
			p.maxSplitFiles = n
		}
	}
}

// packing is how one plan packs: the target split size, the most files a
// split and the most splits a plan (0: no bound), and what sets that
// bound, for messages.
type packing struct {
	target    int64
	maxFiles  int
	maxSplits int
	bound     string
}

// packingFor is how the planner packs req's plan: with its own bound on
// splits (--max-splits), or the request's when that is lower.
func (p *Planner) packingFor(req Request) packing {
	pk := packing{target: p.targetSplitSize, maxFiles: p.maxSplitFiles, maxSplits: p.maxSplits, bound: "--max-splits"}
	if req.MaxSplits > 0 && (pk.maxSplits <= 0 || req.MaxSplits < pk.maxSplits) {
		pk.maxSplits, pk.bound = req.MaxSplits, "the most URIs a generated Druid task holds"
	}
	return pk
}

// packTarget is the target split size of one plan: the packing's, lowered
// so that the plan's bytes make at least minSplits splits (at most
// maxSplits of them).
func (pk packing) packTarget(minSplits int, tasks []table.FileScanTask) int64 {
	if pk.maxSplits > 0 {
		minSplits = min(minSplits, pk.maxSplits)
	}
	if pk.target <= 0 || minSplits <= 1 {
		return pk.target
	}
	var total int64
	for _, t := range tasks {
		total += t.File.FileSizeBytes()
	}
	return max(1, min(pk.target, total/int64(minSplits)))
}

// pack fills in pl's splits, unsigned.
func (p *Planner) pack(ctx context.Context, pl *planning) error {
	if pl.plan.Path != PathRows {
		pl.plan.Splits = make([]PlannedSplit, 0, len(pl.tasks))
		for _, t := range pl.tasks {
			sp, err := pl.maker.split(t)
			if err != nil {
				return err
			}
			pl.plan.Splits = append(pl.plan.Splits, PlannedSplit{Parts: []token.Split{sp}, Kind: token.KindFile})
		}
		return nil
	}
	target := pl.pk.packTarget(pl.req.MinSplits, pl.tasks)
	fsys, err := pl.tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("read the table's files: %w", err)
	}
	var parts []token.Split
	var sizes []int64
	for _, t := range pl.tasks {
		sp, err := p.rowSplit(pl, t)
		if err != nil {
			return err
		}
		// A large file is cut into ranges of its row groups, in file
		// order, each packed like a file.
		ranges, err := p.fileRanges(ctx, fsys, t.File, target)
		if err != nil {
			return err
		}
		for _, r := range ranges {
			part := sp
			part.Data.Range = r
			size := part.Data.Size
			if r != nil {
				size = r.Length
			}
			parts = append(parts, part)
			sizes = append(sizes, size)
		}
	}
	maxFiles := max(pl.pk.maxFiles, 1)
	ends := packEnds(sizes, target, maxFiles)
	if pl.pk.maxSplits > 0 && len(ends) > pl.pk.maxSplits {
		// Larger splits, twice as large each time, until they fit.
		if target <= 0 {
			target = 1
			for _, s := range sizes {
				target = max(target, s)
			}
		}
		for len(ends) > pl.pk.maxSplits {
			target, maxFiles = min(2*target, math.MaxInt64/2), min(2*maxFiles, len(sizes))
			ends = packEnds(sizes, target, maxFiles)
		}
		pl.plan.Warnings = append(pl.plan.Warnings, fmt.Sprintf("the splits are packed up to %s and %d files each, "+
			"above the target split size, so that the plan holds at most %d splits (%s)",
			byteCount(target), maxFiles, pl.pk.maxSplits, pl.pk.bound))
	}
	pl.plan.Splits = make([]PlannedSplit, 0, len(ends))
	from := 0
	for _, end := range ends {
		pl.plan.Splits = append(pl.plan.Splits, PlannedSplit{Parts: parts[from:end:end], Kind: token.KindRows})
		from = end
	}
	return nil
}

// byteCount spells n bytes for a message, to a tenth of the largest
// binary unit under it.
func byteCount(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size {
			return strconv.FormatFloat(float64(n)/float64(u.size), 'f', 1, 64) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// packEnds packs files of the given sizes, in order, into splits as
// MaxSizeSplitHintSpec.split does (see above), and returns where each
// split ends: split i holds the files [ends[i-1], ends[i]). target <= 0
// packs one file a split.
func packEnds(sizes []int64, target int64, maxFiles int) []int {
	var ends []int
	var size int64
	n := 0
	for i, s := range sizes {
		if n > 0 && (target <= 0 || size+s >= target || n >= maxFiles) {
			ends = append(ends, i)
			size, n = 0, 0
		}
		size += s
		n++
	}
	if n > 0 {
		ends = append(ends, len(sizes))
	}
	return ends
}

// rowSplit describes task t as a split of the row path: with the plan's
// projection and encoding, and the residual it applies row by row.
func (p *Planner) rowSplit(pl *planning, t table.FileScanTask) (token.Split, error) {
	sp, err := pl.maker.split(t)
	if err != nil {
		return token.Split{}, err
	}
	sp.Columns, sp.Encoding = pl.columns, pl.req.Encoding
	if err := pl.withMeta(&sp, t); err != nil {
		return token.Split{}, err
	}
	// A bound residual: its literals carry their field's type (an unbound
	// timestamp literal has no JSON form). The whole filter is the residual
	// of every file its partition decided nothing of: encoded once.
	r, whole := pl.residualOf(t)
	switch {
	case r == nil:
		return sp, nil
	case whole && pl.wholeResidual != nil:
		sp.Filter = pl.wholeResidual
	default:
		if sp.Filter, err = json.Marshal(r); err != nil {
			return token.Split{}, fmt.Errorf("encode residual filter %s: %w", r, err)
		}
		if whole {
			pl.wholeResidual = sp.Filter
		}
	}
	// The residual rides in the file's tokens or the plan it references.
	if len(sp.Filter) > MaxResidualBytes {
		return token.Split{}, fmt.Errorf("%w: applyResidual: the filter left on %s is %d bytes, more than the %d a split "+
			"carries; narrow icebergFilter, or plan without applyResidual", fault.ErrBadRequest, t.File.FilePath(),
			len(sp.Filter), MaxResidualBytes)
	}
	return sp, nil
}
