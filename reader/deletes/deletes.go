// Package deletes loads the delete sets a split's data files need, as
// iceberg-go's PlanFiles matched the delete files to them: positional
// deletes whose file_path is the data file's path exactly and deletion
// vectors from puffin blobs, as one bitmap of positions a data file
// (Positions, walked in file order by PositionWalk); equality deletes as
// one key set for each list of equality field ids (EqualitySet), keyed by
// encode.AppendKey in the table schema's types so that a null equals a null
// and a key written under a narrower type still matches. A Loader loads the
// sets of one Open through the Reader's Cache when it has one, so that a
// delete file many splits share is decoded once, and reserves what decoded
// files hold from the memory budget. ReadColumns reads chosen columns of a
// delete file for the /changes diff.
//
// It owns the delete sets and their cache: which rows a stream emits (the
// walk over row groups, the residual filter, the encoding) is package
// reader's; the files are opened by reader/storage, resolved by
// reader/schema and read through column leaves. A delete file that cannot
// be decoded wraps readerr.ErrCorruptFile; one that would hold more memory
// than its bound wraps memory.ErrTooLarge.
package deletes

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"iter"
	"math"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/reader/column"
	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/readerr"
	"github.com/druidiceberg/sidecar/reader/schema"
	"github.com/druidiceberg/sidecar/reader/storage"
	"github.com/druidiceberg/sidecar/token"
)

// The reserved field ids and names of a positional delete file's columns.
const (
	fieldIDDeleteFilePath = 2147483546
	fieldIDDeletePos      = 2147483545
	nameDeleteFilePath    = "file_path"
	nameDeletePos         = "pos"
)

// Positions is the set of deleted row positions of one data file, from its
// positional delete files and deletion vectors, as one bitmap.
type Positions struct {
	// All holds every deleted position; nil when the split has neither kind.
	All *dv.RoaringPositionBitmap
	// byPosition holds the positions named by positional delete files when
	// the split also has a deletion vector, to count each row under the kind
	// that matched first; nil otherwise, and kind says which kind all is.
	byPosition *dv.RoaringPositionBitmap
	kind       token.DeleteKind
	Count      int64
}

// KindOf returns the delete kind a deleted position is counted under.
func (p *Positions) KindOf(pos uint64) token.DeleteKind {
	if p.byPosition == nil {
		return p.kind
	}
	if p.byPosition.Contains(pos) {
		return token.DeletePosition
	}
	return token.DeleteDeletionVector
}

// Walk returns a walk of the deleted positions in ascending order, for a
// stream that reads its rows in file order: it costs a comparison a row
// where a lookup in the bitmap costs a map access and a binary search.
func (p *Positions) Walk() *PositionWalk {
	w := &PositionWalk{Next: math.MaxUint64}
	if p.All != nil {
		w.pull, w.Stop = iter.Pull(p.All.Positions())
		w.advance()
	} else {
		w.Stop = func() {}
	}
	return w
}

// PositionWalk steps through deleted positions; next is the least not yet
// passed, math.MaxUint64 past the last.
type PositionWalk struct {
	Next uint64
	pull func() (uint64, bool)
	Stop func()
}

func (w *PositionWalk) advance() {
	if p, ok := w.pull(); ok {
		w.Next = p
	} else {
		w.Next = math.MaxUint64
	}
}

// Deleted reports whether pos is deleted; pos must not be less than the
// positions asked about before.
func (w *PositionWalk) Deleted(pos uint64) bool {
	for w.Next < pos {
		w.advance()
	}
	return w.Next == pos
}

// Config is what the delete loaders of one Reader share: its
// Cache (nil: none) and the Reader's namespace in it, and the budget
// decoded delete files reserve from, with the bound on one file (0: the
// budget's) and what sets it (for the error).
type Config struct {
	Cache     *Cache
	Space     uint64
	Budget    *memory.Budget
	Bound     int64
	BoundName string
}

// Loader loads the delete files of one Open: through the Reader's
// Cache when it has one, straight from storage otherwise. It counts
// the files it read itself, and holds what they reserved of the memory
// budget (or their cache entries) until the stream is closed (release).
type Loader struct {
	cfg    Config
	fs     icebergio.IO // the table's FileIO
	Loaded map[token.DeleteKind]int64
	// eqKeys holds the equality delete files this loader decoded when the
	// Reader has no Cache, by path: the files of a packed split
	// mostly share them.
	eqKeys map[string]*eqKeys
	// parts are the data files of the split (several when it is packed);
	// packed holds, by delete file, the positions a positional delete file
	// that several of them share gives each of them, decoded in one scan
	// (see splitPositions).
	parts  []token.Split
	packed map[string]*positionEntry
	// held end this stream's uses of decoded delete files.
	held []func()
}

// newDeleteLoader returns the loader of one Open of the data files parts,
// reading through fs, the table's FileIO.
func NewLoader(cfg Config, fs icebergio.IO, parts []token.Split) *Loader {
	return &Loader{cfg: cfg, fs: fs, Loaded: map[token.DeleteKind]int64{}, parts: parts}
}

// fs returns a FileIO for one delete file, so that a storage error while
// loading it is classified on its own, whichever stream the load serves.
func (l *Loader) watched() *storage.Watched { return &storage.Watched{IO: l.fs} }

// cached returns the value under key, loading it (and counting the load)
// when this caller has to; without a cache it always loads. load decodes
// the file, reserving what it holds from res as it goes (see charge), and
// returns the value and its estimated size.
// what names the file for the errors.
func (l *Loader) cached(key func() string, kind token.DeleteKind, what string, load func(res *memory.Reservation) (any, int64, error)) (any, error) {
	res, err := l.cfg.Budget.Reserve(memory.Deletes, 0, l.cfg.Bound, l.cfg.BoundName)
	if err != nil {
		return nil, err
	}
	sized := func() (any, int64, error) {
		v, size, err := load(res)
		if err == nil {
			// The estimate replaces what the decoding charged.
			if err = res.Set(size); err != nil {
				err = fmt.Errorf("hold decoded %s: %w", what, err)
			}
		}
		if err != nil {
			res.Release()
			return nil, 0, err
		}
		return v, size, nil
	}
	if l.cfg.Cache == nil {
		v, _, err := sized()
		if err == nil {
			l.Loaded[kind]++
			l.held = append(l.held, res.Release)
		}
		return v, err
	}
	v, loaded, unpin, err := l.cfg.Cache.get(key(), kind, res, sized)
	if loaded && err == nil {
		l.Loaded[kind]++
	}
	if !loaded {
		res.Release() // reserved nothing
	}
	l.held = append(l.held, unpin)
	return v, err
}

// Release ends the uses of what the loader loaded.
func (l *Loader) Release() {
	for _, f := range l.held {
		f()
	}
	l.held = nil
}

// charge counts memory that a delete file being decoded takes, reserving
// it from the budget a chunk at a time: a reservation takes a lock, and a
// decoded file adds a few bytes a row.
type charge struct {
	res     *memory.Reservation
	pending int64
}

const chargeChunk = 64 << 10

func (c *charge) add(n int64) error {
	c.pending += n
	if c.pending < chargeChunk {
		return nil
	}
	n, c.pending = c.pending, 0
	return c.res.Grow(n)
}

// positionBytes is what a deleted position adds to its bitmap at most: two
// bytes in an array container; a dense container holds 65,536 positions
// in 8 KiB.
const positionBytes = 2

// LoadPositions reads every positional delete file and deletion vector of
// the split. The bitmaps it gets may be shared with other streams through
// the cache: it never modifies one, and builds a new one for a union.
func LoadPositions(l *Loader, s token.Split) (*Positions, error) {
	var pos, dvs []*dv.RoaringPositionBitmap
	for _, d := range s.Deletes {
		switch d.Kind {
		case token.DeletePosition:
			bm, err := l.positionDeletes(d, s.Data.Path)
			if err != nil {
				return nil, err
			}
			pos = append(pos, bm)
		case token.DeleteDeletionVector:
			bm, err := l.deletionVector(d, s.Data.Path)
			if err != nil {
				return nil, err
			}
			dvs = append(dvs, bm)
		}
	}
	byPos, byDV := union(pos), union(dvs)
	p := &Positions{}
	switch {
	case byPos != nil && byDV != nil:
		p.All = union([]*dv.RoaringPositionBitmap{byPos, byDV})
		p.byPosition = byPos
	case byPos != nil:
		p.All, p.kind = byPos, token.DeletePosition
	case byDV != nil:
		p.All, p.kind = byDV, token.DeleteDeletionVector
	default:
		return p, nil
	}
	p.Count = p.All.Cardinality()
	if p.Count == 0 {
		p.All, p.byPosition = nil, nil
	}
	return p, nil
}

// positionDeletes returns the positions that the positional delete file d
// names for the data file dataPath; nil when it names none. With a cache,
// the file is decoded once for every data file it names, as long as that
// holds at most wholeFileBytes. Otherwise (no cache, or a larger file:
// many data files, or paths that are no data file of the table) it is
// decoded keeping only the positions of the split's data files that list
// it, once for the whole split (splitPositions), or, when even those are
// too many, once for each data file, keeping only that file's positions;
// the cache remembers which way a file is decoded.
func (l *Loader) positionDeletes(d token.DeleteFile, dataPath string) (*dv.RoaringPositionBitmap, error) {
	if err := storage.CheckFormat("positional delete file", d.Path, d.Format); err != nil {
		return nil, err
	}
	if l.cfg.Cache != nil {
		v, err := l.cached(func() string { return positionKey(l.cfg.Space, d, "") }, token.DeletePosition, "positional delete file "+d.Path, func(res *memory.Reservation) (any, int64, error) {
			return decodePositions(l.watched(), d, nil, res, l.wholeBytes())
		})
		if err != nil {
			return nil, err
		}
		if v != wideFile {
			return v.(*positionEntry).positionsOf(d, dataPath)
		}
	}
	if e, err := l.splitPositions(d); err != nil || e != wideFile {
		if err != nil {
			return nil, err
		}
		return e.positionsOf(d, dataPath)
	}
	only := map[string]bool{dataPath: true}
	v, err := l.cached(func() string { return positionKey(l.cfg.Space, d, dataPath) }, token.DeletePosition, "positional delete file "+d.Path, func(res *memory.Reservation) (any, int64, error) {
		return decodePositions(l.watched(), d, only, res, 0)
	})
	if err != nil {
		return nil, err
	}
	return v.(*positionEntry).positionsOf(d, dataPath)
}

// splitPositions returns the positions that the positional delete file d
// gives every data file of the split that lists it, decoded in one scan of
// d however many of them there are, and kept for the split's other files;
// wideFile when d is listed by one data file of the split only, or when
// the positions of those it is listed by would hold more than
// wholeFileBytes (they are then decoded for each data file). iceberg-go's
// scan does the same for the tasks it reads (readAllDeleteFiles in
// table/arrow_scanner.go reads each delete file once, grouped by
// file_path, for every task).
func (l *Loader) splitPositions(d token.DeleteFile) (*positionEntry, error) {
	id := string(newKey('p', 0).str(d.Path).int(d.Size))
	if e, ok := l.packed[id]; ok {
		return e, nil
	}
	only := map[string]bool{}
	for _, p := range l.parts {
		if slices.ContainsFunc(p.Deletes, func(o token.DeleteFile) bool {
			return o.Kind == token.DeletePosition && o.Path == d.Path && o.Size == d.Size
		}) {
			only[p.Data.Path] = true
		}
	}
	e := wideFile
	if len(only) > 1 {
		key := func() string { return splitPositionKey(l.cfg.Space, d, only) }
		v, err := l.cached(key, token.DeletePosition, "positional delete file "+d.Path, func(res *memory.Reservation) (any, int64, error) {
			return decodePositions(l.watched(), d, only, res, l.wholeBytes())
		})
		if err != nil {
			return nil, err
		}
		e = v.(*positionEntry)
	}
	if l.packed == nil {
		l.packed = map[string]*positionEntry{}
	}
	l.packed[id] = e
	return e, nil
}

// wholeBytes is the most a positional delete file decoded for more than
// one data file may hold: wholeFileBytes, and never more than half the
// bound of one file, so that decoding it that way never refuses what one
// data file's positions would fit in.
func (l *Loader) wholeBytes() int64 {
	whole := int64(wholeFileBytes)
	if l.cfg.Bound > 0 {
		whole = min(whole, l.cfg.Bound/2)
	}
	return whole
}

// decodePositions decodes d as readPositionDeletes does, for the loads of
// positionDeletes: a decoding that would hold more than whole bytes gives
// wideFile.
func decodePositions(fs *storage.Watched, d token.DeleteFile, only map[string]bool, res *memory.Reservation, whole int64) (any, int64, error) {
	e, err := readPositionDeletes(fs, d, only, res, whole)
	if errors.Is(err, errWholeTooLarge) {
		return wideFile, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	return e, e.size(), nil
}

// wholeFileBytes bounds the memory of a positional delete file decoded for
// every data file it names: a file that names a partition's data files
// holds far less; past it, the file is decoded for each data file.
const wholeFileBytes = 16 << 20

// errWholeTooLarge stops decoding a positional delete file whole.
var errWholeTooLarge = errors.New("the positional delete file is too large to decode for every data file it names")

// wideFile is the cache's entry for a positional delete file that is
// decoded for each data file (see positionDeletes).
var wideFile = &positionEntry{}

// positionsOf returns the positions of the data file dataPath, or the
// error of an impossible position the file gives it.
func (e *positionEntry) positionsOf(d token.DeleteFile, dataPath string) (*dv.RoaringPositionBitmap, error) {
	if bad, ok := e.corrupt[dataPath]; ok {
		return nil, fmt.Errorf("read positional delete file %s: %w: position %s", d.Path, readerr.ErrCorruptFile, bad)
	}
	return e.byPath[dataPath], nil
}

// readPositionDeletes decodes the positional delete file d into one bitmap
// per data file it names (only those of the data files in only, when only
// is not nil). Data files are told apart by the path exactly as the
// manifests spell it, never by the location-mapped one. An impossible
// position fails the decoding when only names one data file, and is kept
// for positionsOf to report otherwise. What it decodes is reserved from
// res as it goes; with whole > 0, decoding stops with errWholeTooLarge
// once it would hold more than whole bytes.
func readPositionDeletes(fs *storage.Watched, d token.DeleteFile, only map[string]bool, res *memory.Reservation, whole int64) (_ *positionEntry, err error) {
	cf, err := storage.OpenColumns(fs, "positional delete file", d)
	if err != nil {
		return nil, err
	}
	defer closeErr(cf, &err, "close positional delete file "+d.Path)
	root := cf.Root
	pathCol := deleteColumn(root, fieldIDDeleteFilePath, nameDeleteFilePath)
	posCol := deleteColumn(root, fieldIDDeletePos, nameDeletePos)
	if pathCol == nil || posCol == nil || pathCol.Type().Kind() != parquet.ByteArray || posCol.Type().Kind() != parquet.Int64 {
		return nil, fmt.Errorf("read positional delete file %s: %w: no file_path and pos columns", d.Path, readerr.ErrCorruptFile)
	}
	r := &schema.Resolver{Path: d.Path, Leaves: map[int]*column.Leaf{}}
	lp := r.AddLeaf(pathCol, encode.ValueType{Conv: encode.ConvString})
	lq := r.AddLeaf(posCol, encode.ValueType{Conv: encode.ConvInt64})
	e := &positionEntry{byPath: map[string]*dv.RoaringPositionBitmap{}}
	// Delete files are sorted by path, so the path of a row is mostly the
	// one of the row before.
	var curPath []byte
	var cur *dv.RoaringPositionBitmap
	skipping := false // the rows of curPath are not kept
	mem, held := charge{res: res}, int64(0)
	account := func(n int64) error {
		if held += n; whole > 0 && held > whole {
			return errWholeTooLarge
		}
		return mem.add(n)
	}
	err = cf.Scan(fs, r.Order, func() error {
		if lp.Null() {
			return nil
		}
		path := lp.Cur.ByteArray(lp.VPos)
		if (cur == nil && !skipping) || !bytes.Equal(path, curPath) {
			curPath = append(curPath[:0], path...)
			cur, skipping = nil, only != nil && !only[string(path)]
			if skipping {
				return nil
			}
			if cur = e.byPath[string(path)]; cur == nil {
				if err := account(int64(len(path)) + mapEntryOverhead + bitmapOverhead); err != nil {
					return err
				}
				cur = dv.NewRoaringPositionBitmap()
				e.byPath[string(path)] = cur
			}
		} else if skipping {
			return nil
		}
		if lq.Null() || lq.Cur.Int64[lq.VPos] < 0 {
			q := "null"
			if !lq.Null() {
				q = strconv.FormatInt(lq.Cur.Int64[lq.VPos], 10)
			}
			if len(only) == 1 {
				return fmt.Errorf("%w: position %s", readerr.ErrCorruptFile, q)
			}
			if _, seen := e.corrupt[string(path)]; !seen {
				if err := account(int64(len(path)+len(q)) + mapEntryOverhead); err != nil {
					return err
				}
				if e.corrupt == nil {
					e.corrupt = map[string]string{}
				}
				e.corrupt[string(path)] = q
			}
			return nil
		}
		cur.Set(uint64(lq.Cur.Int64[lq.VPos]))
		return account(positionBytes)
	})
	if errors.Is(err, errWholeTooLarge) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("read positional delete file %s: %w", d.Path, err)
	}
	return e, nil
}

// deleteColumn finds a top-level column of a delete file by its reserved
// field id, or by its reserved name for writers that left the ids out.
func deleteColumn(root *parquet.Column, id int, name string) *parquet.Column {
	for _, c := range root.Columns() {
		if c.ID() == id && flatLeaf(c) {
			return c
		}
	}
	if c := root.Column(name); flatLeaf(c) {
		return c
	}
	return nil
}

// flatLeaf reports whether c is a leaf column with one entry a row (none
// under a repeated field, nor repeated itself): the only kind a delete
// file's columns and an equality key may be.
func flatLeaf(c *parquet.Column) bool {
	return c != nil && c.Leaf() && c.MaxRepetitionLevel() == 0
}

// deletionVector returns the positions of the deletion vector blob that d
// locates inside its puffin file, read through iceberg-go's own decoder.
func (l *Loader) deletionVector(d token.DeleteFile, dataPath string) (*dv.RoaringPositionBitmap, error) {
	if d.ContentOffset == nil || d.ContentSize == nil {
		return nil, fmt.Errorf("read deletion vector %s: %w: no content offset and size", d.Path, readerr.ErrCorruptFile)
	}
	ref := d.ReferencedDataFile
	if ref == "" {
		ref = dataPath
	}
	if ref != dataPath {
		return nil, fmt.Errorf("read deletion vector %s: %w: it references %s, not %s",
			d.Path, readerr.ErrCorruptFile, ref, dataPath)
	}
	v, err := l.cached(func() string { return deletionVectorKey(l.cfg.Space, d, ref) }, token.DeleteDeletionVector, "deletion vector "+d.Path, func(*memory.Reservation) (any, int64, error) {
		bm, err := readDeletionVector(l.watched(), d, ref)
		if err != nil {
			return nil, 0, err
		}
		return bm, bitmapSize(bm), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*dv.RoaringPositionBitmap), nil
}

// readDeletionVector reads the deletion vector blob of d, which references
// the data file ref.
func readDeletionVector(fs *storage.Watched, d token.DeleteFile, ref string) (*dv.RoaringPositionBitmap, error) {
	b, err := iceberg.NewDataFileBuilder(iceberg.PartitionSpec{}, iceberg.EntryContentPosDeletes,
		d.Path, iceberg.PuffinFile, nil, nil, nil, d.Records, d.Size)
	if err != nil {
		return nil, fmt.Errorf("describe deletion vector %s: %w: %w", d.Path, readerr.ErrCorruptFile, err)
	}
	df := b.ReferencedDataFile(ref).ContentOffset(*d.ContentOffset).ContentSizeInBytes(*d.ContentSize).Build()
	bm, err := readDV(fs, df)
	if err != nil {
		if isNotExist(err) {
			return nil, fmt.Errorf("read deletion vector %s: %w", d.Path, err)
		}
		return nil, fmt.Errorf("read deletion vector %s: %w", d.Path, fs.Classify(err))
	}
	return bm, nil
}

// readDV reads a deletion vector with iceberg-go (its puffin blob and
// roaring bitmap), third-party code fed the file's bytes: a panic of its
// is the file's damage.
func readDV(fs *storage.Watched, df iceberg.DataFile) (bm *dv.RoaringPositionBitmap, err error) {
	if err := checkDVKeys(fs, df); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			bm, err = nil, fmt.Errorf("%w: the deletion vector decoder failed: %v", readerr.ErrCorruptFile, r)
		}
	}()
	return dv.ReadDV(fs, df)
}

// dvKeyBytes is the least one 32-bit key of a deletion vector's bitmap
// takes in its blob: the key, and an empty roaring bitmap's cookie and
// container count.
const dvKeyBytes = 4 + 8

// checkDVKeys holds the count of 32-bit keys that opens the bitmap of the
// deletion vector blob df locates to what the blob's size can hold.
// iceberg-go sizes a map by that count before it reads a key: a blob of 28
// bytes claiming its cap of 2^25 keys made it allocate over a gigabyte.
// The blob's other counts (a roaring bitmap's containers and their
// values) are read against the bytes that hold them.
func checkDVKeys(fs *storage.Watched, df iceberg.DataFile) (err error) {
	off, size := df.ContentOffset(), df.ContentSizeInBytes()
	// A blob too short for a count, or one the footer places elsewhere,
	// is iceberg-go's to refuse.
	const head = 4 + 4 + 8 // length, magic, key count
	if off == nil || size == nil || *off < 0 || *size < head+4 {
		return nil
	}
	f, err := fs.Open(df.FilePath())
	if err != nil {
		return err
	}
	defer closeErr(f, &err, "close deletion vector")
	var b [head]byte
	if _, err := f.ReadAt(b[:], *off); err != nil {
		return fmt.Errorf("read the deletion vector's bitmap header at %d: %w", *off, err)
	}
	keys := binary.LittleEndian.Uint64(b[8:])
	if most := uint64(*size-head-4) / dvKeyBytes; keys > most {
		return fmt.Errorf("the deletion vector's bitmap claims %d keys; its %d bytes hold at most %d", keys, *size, most)
	}
	return nil
}

// closeErr closes c and joins a failure into *err.
func closeErr(c io.Closer, err *error, what string) {
	if cerr := c.Close(); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("%s: %w", what, cerr))
	}
}

// isNotExist reports whether err says a file does not exist.
func isNotExist(err error) bool { return errors.Is(err, iofs.ErrNotExist) }
