package token

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/druidiceberg/sidecar/internal/jsonstr"
)

// A token names its split in one of two ways. It holds the split's files
// themselves when that is short, which needs nothing but the token (and
// the table's FileIO) to serve. A split that packs many files, or a file
// with many delete files, would make a token of kilobytes; its token is a
// reference into the plan instead: the metadata file and snapshot it was planned
// from, the options that decide the plan (opaque here: package splits
// spells them), the split's index and the plan's count of splits, and a
// fingerprint of the whole split list. Every one of those is immutable, so
// any replica with the key serves the token by planning the snapshot again
// (deterministically, and once for all the splits of a plan: see package
// splits) and taking the split at the index, after checking that the plan
// it gets has the same fingerprint: one that does not (another release
// that plans otherwise, a metadata file rewritten in place) is refused,
// never served as other rows.

// MaxShortToken is the length up to which a token holds its split's files;
// a longer one is signed as a reference to the plan instead. DESIGN.md's
// token contract: at most 1 KiB.
const MaxShortToken = 1024

// FingerprintSize is the length of a plan's fingerprint.
const FingerprintSize = 16

// PlanRef names one split of a plan.
type PlanRef struct {
	// Catalog is the configured catalog the plan was made in.
	Catalog string `json:"cat,omitempty"`
	// Table is the table's identifier in its catalog (see Split.Table).
	Table []string `json:"tb"`
	// MetadataLocation and SnapshotID are the table metadata file and
	// snapshot planned.
	MetadataLocation string `json:"m"`
	SnapshotID       int64  `json:"s"`
	// Options are what else the plan depends on, as the planner spells
	// them (JSON).
	Options json.RawMessage `json:"o"`
	// Index is the split's position in the plan, of Count splits.
	Index int `json:"i"`
	Count int `json:"n"`
	// Fingerprint is the plan's (see Fingerprint).
	Fingerprint []byte `json:"f"`
}

// SignRef returns the token of a split of the given kind that ref names.
func (s *Signer) SignRef(kind TokenKind, ref PlanRef) (string, error) {
	if err := ref.check(); err != nil {
		return "", fmt.Errorf("encode token: %w", err)
	}
	return s.sign(claims{Kind: kind, Ref: &ref})
}

// check reports what makes a reference one no plan can have signed.
func (r PlanRef) check() error {
	switch {
	case r.Count < 1 || r.Index < 0 || r.Index >= r.Count:
		return fmt.Errorf("split %d of a plan of %d", r.Index, r.Count)
	case len(r.Fingerprint) != FingerprintSize:
		return fmt.Errorf("a plan fingerprint of %d bytes", len(r.Fingerprint))
	case r.MetadataLocation == "":
		return errors.New("a plan reference without a metadata file")
	case len(r.Table) == 0:
		return errors.New("a plan reference without a table")
	}
	return nil
}

// Fingerprint returns the fingerprint of a plan's splits of the given
// kind, each the files it reads in order: the first FingerprintSize bytes
// of the SHA-256 of their encoding as tokens of version 1 spell them, so
// any change to any split changes it.
func Fingerprint(kind TokenKind, splits [][]Split) ([]byte, error) {
	h := sha256.New()
	var buf []byte
	var n [8]byte
	buf = append(buf, "sidecar plan 1\x00"...)
	buf = jsonstr.AppendString(buf, string(kind))
	h.Write(buf)
	for _, parts := range splits {
		binary.BigEndian.PutUint64(n[:], uint64(len(parts)))
		h.Write(n[:])
		for _, p := range parts {
			var err error
			if buf, err = appendSplit(buf[:0], p); err != nil {
				return nil, err
			}
			binary.BigEndian.PutUint64(n[:], uint64(len(buf)))
			h.Write(n[:])
			h.Write(buf)
		}
	}
	return h.Sum(nil)[:FingerprintSize], nil
}
