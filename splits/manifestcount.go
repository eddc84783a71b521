package splits

import (
	"errors"
	"fmt"
	"math"
	"sync"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/druidiceberg/sidecar/internal/memory"
)

// entryCounter charges a plan's reservation for the manifest entries its
// planning really reads: the object counts of the Avro blocks of every
// manifest (and of the manifest list) as their bytes stream to iceberg-go,
// before iceberg-go decodes them. The plan is admitted for the entries
// its snapshot declares (admitPlan); once the entries read pass that,
// each block's entries are reserved before it is decoded, and a block
// that does not fit refuses every read of the plan from then on, which
// ends the plan with the refusal. A summary or manifest list that lies
// thus costs its plan a 422 at the bound, not the process its memory.
type entryCounter struct {
	r *memory.Reservation
	// list is the manifest list's path: admitPlan counts it as it reads
	// it, and iceberg-go reading it again is not counted twice.
	list string

	mu      sync.Mutex
	read    int64 // entries read, of every file counted
	paid    int64 // entries reserved for
	refusal error
}

// maxEntries is the most entries whose memory (PlanBytesPerFile each) an
// int64 holds; counts past it, which only a lie declares, saturate there
// and are refused as too large rather than wrapping around.
const maxEntries = math.MaxInt64 / PlanBytesPerFile

// entryBytes is the memory that n entries need to plan.
func entryBytes(n int64) int64 { return min(max(n, 0), maxEntries) * PlanBytesPerFile }

// block charges n more entries read.
func (c *entryCounter) block(n int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refusal != nil {
		return c.refusal
	}
	c.read = min(c.read+min(n, maxEntries), maxEntries)
	if c.read <= c.paid {
		return nil
	}
	if err := c.r.Set(entryBytes(c.read)); err != nil {
		c.refusal = &overReadError{read: c.read, paid: c.paid, err: err}
		return c.refusal
	}
	c.paid = c.read
	return nil
}

// pay reserves n entries ahead of reading them (what the manifest list
// declares).
func (c *entryCounter) pay(n int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n <= c.paid {
		return nil
	}
	if err := c.r.Set(entryBytes(n)); err != nil {
		return err
	}
	c.paid = n
	return nil
}

// refused is the refusal that ended the plan's reads, if one did.
func (c *entryCounter) refused() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refusal
}

// overReadError is a plan refused while it read: its manifests hold more
// entries than were declared, and the memory they need is not there.
type overReadError struct {
	read, paid int64
	err        error
}

func (e *overReadError) Error() string {
	return fmt.Sprintf("its manifests hold more entries than its snapshot declares (%d read so far, %d declared), "+
		"which need %s or more to plan (%s each): %s", e.read, e.paid, memory.Bytes(entryBytes(e.read)),
		memory.Bytes(PlanBytesPerFile), e.err.Error())
}

func (e *overReadError) Unwrap() error { return e.err }

// countingIO is a table's FileIO whose manifest reads are counted.
type countingIO struct {
	icebergio.IO
	c *entryCounter
}

func (io countingIO) Open(name string) (icebergio.File, error) {
	f, err := io.IO.Open(name)
	if err != nil || name == io.c.list {
		return f, err
	}
	return &countingFile{File: f, name: name, ocf: ocfBlocks{onBlock: io.c.block}}, nil
}

// countingFile counts the entries of an Avro file as it is read front to
// back, which is how iceberg-go reads manifests and manifest lists.
type countingFile struct {
	icebergio.File
	name string
	ocf  ocfBlocks
}

func (f *countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	if cerr := f.ocf.feed(p[:n]); cerr != nil {
		return 0, fmt.Errorf("read manifest %s: %w", f.name, cerr)
	}
	return n, err
}

// errNotAvro: a manifest whose framing is not an Avro object container
// file's, which iceberg-go would refuse too.
var errNotAvro = errors.New("not an Avro object container file")

// ocfBlocks follows the framing of an Avro object container file (the
// Avro specification, "Object Container Files") as its bytes pass,
// without decoding or decompressing anything: the header (magic, the
// metadata map, the sync marker), then blocks of an object count, a byte
// size, that many bytes and the sync marker. It calls onBlock with each
// block's object count as soon as the count has passed, before the
// block's bytes.
type ocfBlocks struct {
	onBlock func(n int64) error

	state   ocfState
	skip    int64 // bytes left to pass in a skipping state
	v       uint64
	shift   uint
	items   int64 // metadata entries left in the current map block
	started bool
	err     error
}

type ocfState int

const (
	ocfMagic      ocfState = iota // skip the 4 magic bytes
	ocfMapCount                   // varint: metadata map block count
	ocfMapSize                    // varint: its byte size (negative count)
	ocfKeyLen                     // varint
	ocfKey                        // skip
	ocfValueLen                   // varint
	ocfValue                      // skip
	ocfHeaderSync                 // skip 16
	ocfBlockCount                 // varint
	ocfBlockSize                  // varint
	ocfBlockData                  // skip
	ocfBlockSync                  // skip 16
)

var ocfMagicBytes = []byte{'O', 'b', 'j', 1}

func (o *ocfBlocks) feed(p []byte) error {
	if o.err != nil {
		return o.err
	}
	if !o.started {
		o.started, o.state, o.skip = true, ocfMagic, int64(len(ocfMagicBytes))
	}
	for len(p) > 0 {
		switch o.state {
		case ocfMagic, ocfKey, ocfValue, ocfHeaderSync, ocfBlockData, ocfBlockSync:
			n := min(o.skip, int64(len(p)))
			if o.state == ocfMagic {
				at := int64(len(ocfMagicBytes)) - o.skip
				for i := range n {
					if p[i] != ocfMagicBytes[at+i] {
						o.err = errNotAvro
						return o.err
					}
				}
			}
			p, o.skip = p[n:], o.skip-n
			if o.skip == 0 {
				o.next()
			}
		default:
			b := p[0]
			p = p[1:]
			if o.shift >= 64 {
				o.err = fmt.Errorf("%w: a varint longer than 10 bytes", errNotAvro)
				return o.err
			}
			o.v |= uint64(b&0x7f) << o.shift
			o.shift += 7
			if b&0x80 != 0 {
				continue
			}
			v := int64(o.v>>1) ^ -int64(o.v&1) // zigzag
			o.v, o.shift = 0, 0
			if err := o.value(v); err != nil {
				o.err = err
				return err
			}
		}
	}
	return nil
}

// next moves on from a skipping state whose bytes have passed.
func (o *ocfBlocks) next() {
	switch o.state {
	case ocfMagic:
		o.state = ocfMapCount
	case ocfKey:
		o.state = ocfValueLen
	case ocfValue:
		o.items--
		if o.items > 0 {
			o.state = ocfKeyLen
		} else {
			o.state = ocfMapCount
		}
	case ocfHeaderSync, ocfBlockSync:
		o.state = ocfBlockCount
	case ocfBlockData:
		o.state, o.skip = ocfBlockSync, 16
	}
}

// value takes the varint v read in a varint state.
func (o *ocfBlocks) value(v int64) error {
	switch o.state {
	case ocfMapCount:
		switch {
		case v == 0:
			o.state, o.skip = ocfHeaderSync, 16
		case v < 0:
			o.items, o.state = -v, ocfMapSize
		default:
			o.items, o.state = v, ocfKeyLen
		}
	case ocfMapSize:
		o.state = ocfKeyLen
	case ocfKeyLen, ocfValueLen:
		if v < 0 {
			return fmt.Errorf("%w: a metadata length of %d", errNotAvro, v)
		}
		if o.state == ocfKeyLen {
			o.state = ocfKey
		} else {
			o.state = ocfValue
		}
		o.skip = v
		if v == 0 {
			o.next()
		}
	case ocfBlockCount:
		if v < 0 {
			return fmt.Errorf("%w: a block of %d objects", errNotAvro, v)
		}
		if err := o.onBlock(v); err != nil {
			return err
		}
		o.state = ocfBlockSize
	case ocfBlockSize:
		if v < 0 {
			return fmt.Errorf("%w: a block of %d bytes", errNotAvro, v)
		}
		o.state, o.skip = ocfBlockData, v
		if v == 0 {
			o.next()
		}
	}
	return nil
}
