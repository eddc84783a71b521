package token

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/druidiceberg/sidecar/internal/fault"
)

// TokenKind says which route a token opens. It is signed with the split, so a
// token for a split's rows can never be replayed as a raw-file download
// (which would serve the rows its delete files remove).
type TokenKind string

// The token kinds.
const (
	// KindRows opens /splits/{token}/rows: the split's delete-applied rows.
	KindRows TokenKind = "rows"
	// KindFile opens /files/{token}: the raw bytes of a data file that no
	// delete file applies to.
	KindFile TokenKind = "file"
)

// tokenVersion is the first byte of every token payload: it says how the
// rest reads, so that the encoding can change without a token being
// misread. A token of any other version (from a newer release, or after a
// rollback) is refused as malformed, with a message to plan again.
//
// The payload after it is JSON (claims): the token's kind and expiry, and
// either the split's files (the first as a Split, any further ones of a
// packed split as Parts: what they do not share with the first), spelled
// compactly (see compactParts), or a reference into the plan (PlanRef)
// when the files would make the token longer than MaxShortToken. Both name
// the split's catalog and table (never credentials: a replica obtains
// those itself), the metadata file and snapshot, and the row encoding's
// version (Encoding.Version), so that a replica of another release refuses
// to resume a stream whose bytes it would encode otherwise.
const tokenVersion = 1

// MaxTokenLength bounds what Verify will decode; real tokens are far shorter.
const MaxTokenLength = 64 << 10

// b64 is strict so that a token has exactly one spelling: lax decoding ignores
// the trailing bits of the last character, which would let a changed byte verify.
// Even strict decoding skips CR and LF, so Decode first refuses any byte a
// token never holds (tokenByte).
var b64 = base64.RawURLEncoding.Strict()

// tokenByte says whether c may appear in a token: the base64url alphabet and
// the dot between payload and signature.
func tokenByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

// claims are a token's payload after its version byte: exactly one of
// Split and Ref is set.
type claims struct {
	Kind TokenKind `json:"t"`
	// Split is the split's first file; More are the other files of a
	// packed split.
	Split *Split `json:"s,omitempty"`
	More  []Part `json:"p,omitempty"`
	// Ref names the split in its plan instead.
	Ref *PlanRef `json:"r,omitempty"`
	// Expires is the Unix second after which the token is refused; 0 never.
	Expires int64 `json:"x,omitempty"`
	// AsIs says that the split's paths are written whole: one of them is
	// not absolute, so it would read as relative.
	AsIs bool `json:"a,omitempty"`
}

// Signer signs and verifies split tokens with HMAC-SHA256. The first key
// signs; every key verifies, so keys can be rotated by prepending a new one.
type Signer struct {
	keys [][]byte
	// macs pools a keyed HMAC per key: keying one hashes two blocks and
	// allocates, which adds up over the thousands of tokens of a wide plan.
	macs []*sync.Pool
	// bufs pools the buffers payloads are encoded in (*[]byte).
	bufs *sync.Pool
	ttl  time.Duration
	now  func() time.Time
}

// WithTTL makes the tokens a Signer signs expire ttl after signing, so a
// leaked token stops working; 0 (the default) signs tokens that never
// expire. A token's split is immutable either way.
func (s *Signer) WithTTL(ttl time.Duration, now func() time.Time) *Signer {
	out := *s
	out.ttl, out.now = ttl, now
	if out.now == nil {
		out.now = time.Now
	}
	return &out
}

// NewSigner returns a Signer over keys (at least one, each at least 32 bytes).
func NewSigner(keys ...[]byte) (*Signer, error) {
	if len(keys) == 0 {
		return nil, errors.New("token signer needs at least one key")
	}
	for i, k := range keys {
		if len(k) < 32 {
			return nil, fmt.Errorf("token key %d is %d bytes; want at least 32", i, len(k))
		}
	}
	s := &Signer{keys: keys, bufs: &sync.Pool{New: func() any { return new([]byte) }}}
	for _, k := range keys {
		s.macs = append(s.macs, &sync.Pool{New: func() any { return hmac.New(sha256.New, k) }})
	}
	return s, nil
}

// appendMAC appends the HMAC-SHA256 of payload under key i to dst.
func (s *Signer) appendMAC(dst []byte, i int, payload []byte) []byte {
	h := s.macs[i].Get().(hash.Hash)
	h.Reset()
	h.Write(payload)
	dst = h.Sum(dst)
	s.macs[i].Put(h)
	return dst
}

// Sign returns the token for a split of the given kind: one data file (or
// a range of its row groups), or several packed into one split, read in
// order, which must share the first's table, snapshot, schema, projection
// and encoding. The same parts always give the same token.
func (s *Signer) Sign(kind TokenKind, parts ...Split) (string, error) {
	if len(parts) == 0 {
		return "", errors.New("encode token: a split with no data file")
	}
	if len(parts[0].Table) == 0 {
		return "", fmt.Errorf("encode token: the split of %s names no table", parts[0].Data.Path)
	}
	first, more, asIs, err := compactParts(parts)
	if err != nil {
		return "", fmt.Errorf("encode token: %w", err)
	}
	return s.sign(claims{Kind: kind, Split: &first, More: more, AsIs: asIs})
}

// signPayload returns the token of a payload (its version byte, then
// its JSON).
func (s *Signer) signPayload(payload []byte) string {
	var sum [sha256.Size]byte
	mac := s.appendMAC(sum[:0], 0, payload)
	return b64.EncodeToString(payload) + "." + b64.EncodeToString(mac)
}

// sign encodes and signs the claims c as a token.
func (s *Signer) sign(c claims) (string, error) {
	if s.ttl > 0 {
		c.Expires = s.now().Add(s.ttl).Unix()
	}
	bp := s.bufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 64<<10 {
			s.bufs.Put(bp)
		}
	}()
	// One buffer holds the payload, then the token after it: the token is
	// the only allocation.
	buf, err := appendClaims(append((*bp)[:0], tokenVersion), c)
	if err != nil {
		return "", fmt.Errorf("encode token: %w", err)
	}
	n := len(buf)
	var sum [sha256.Size]byte
	mac := s.appendMAC(sum[:0], 0, buf[:n])
	buf = b64.AppendEncode(buf, buf[:n])
	buf = append(buf, '.')
	buf = b64.AppendEncode(buf, mac)
	*bp = buf
	return string(buf[n:]), nil
}

// Token is what a verified token holds: the files of its split, in the
// order they are read, or a reference to the split in its plan (see
// PlanRef), which the planner resolves.
type Token struct {
	Parts []Split
	Ref   *PlanRef
}

// Verify decodes a token of one data file and checks that one of the keys
// signed it for the wanted kind; see Decode. A token of a packed split is
// refused: use Decode.
func (s *Signer) Verify(kind TokenKind, token string) (Split, error) {
	t, err := s.Decode(kind, token)
	if err != nil {
		return Split{}, err
	}
	if t.Ref != nil {
		return Split{}, fmt.Errorf("%w: the token names split %d of a plan; resolve it with the planner", fault.ErrUnsupported, t.Ref.Index)
	}
	if len(t.Parts) != 1 {
		return Split{}, fmt.Errorf("%w: the token packs %d data files", fault.ErrUnsupported, len(t.Parts))
	}
	return t.Parts[0], nil
}

// Decode decodes a token and checks that one of the keys signed it for the
// wanted kind. A token that does not decode gives ErrMalformedToken; a
// decodable token with a wrong signature, or of another kind, gives
// ErrBadSignature.
func (s *Signer) Decode(kind TokenKind, token string) (Token, error) {
	if len(token) > MaxTokenLength {
		return Token{}, fmt.Errorf("%w: %d bytes is longer than any token", ErrMalformedToken, len(token))
	}
	for i := range len(token) {
		if !tokenByte(token[i]) {
			return Token{}, fmt.Errorf("%w: byte %d (%q) is not base64url", ErrMalformedToken, i, token[i])
		}
	}
	p, sig, ok := strings.Cut(token, ".")
	if !ok {
		return Token{}, fmt.Errorf("%w: no signature part", ErrMalformedToken)
	}
	payload, err := b64.DecodeString(p)
	if err != nil {
		return Token{}, fmt.Errorf("%w: payload is not base64url", ErrMalformedToken)
	}
	got, err := b64.DecodeString(sig)
	if err != nil || len(got) != sha256.Size {
		return Token{}, fmt.Errorf("%w: signature is not a base64url HMAC-SHA256", ErrMalformedToken)
	}
	if len(payload) == 0 {
		return Token{}, fmt.Errorf("%w: empty payload", ErrMalformedToken)
	}
	if v := payload[0]; v != tokenVersion {
		return Token{}, fmt.Errorf("%w: token version %d is not the one this sidecar reads (%d); plan again with GET /splits",
			ErrMalformedToken, v, tokenVersion)
	}
	signed := false
	var sum [sha256.Size]byte
	for i := range s.keys {
		if hmac.Equal(got, s.appendMAC(sum[:0], i, payload)) {
			signed = true
			break
		}
	}
	if !signed {
		return Token{}, ErrBadSignature
	}
	var c claims
	if err := decodeStrict(payload[1:], &c); err != nil {
		return Token{}, err
	}
	var t Token
	switch {
	case (c.Split == nil) == (c.Ref == nil), c.Ref != nil && (len(c.More) > 0 || c.AsIs):
		return Token{}, fmt.Errorf("%w: decode payload: want either a split or a plan reference", ErrMalformedToken)
	case c.Ref != nil:
		if err := c.Ref.check(); err != nil {
			return Token{}, fmt.Errorf("%w: decode payload: %w", ErrMalformedToken, err)
		}
		t.Ref = c.Ref
	default:
		if len(c.Split.Table) == 0 {
			return Token{}, fmt.Errorf("%w: decode payload: the split names no table", ErrMalformedToken)
		}
		if t.Parts, err = expandParts(*c.Split, c.More, c.AsIs); err != nil {
			return Token{}, fmt.Errorf("%w: decode payload: %w", ErrMalformedToken, err)
		}
	}
	return c.token(kind, t, s.now)
}

// decodeStrict decodes a token's JSON payload into v, refusing unknown
// fields.
func decodeStrict(payload []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		// Signed by us but unreadable: only a newer release could have
		// written it, so it is reported as malformed, not forged.
		return fmt.Errorf("%w: decode payload: %w", ErrMalformedToken, err)
	}
	return nil
}

// token checks the kind and expiry of a decoded token t and returns it.
func (c claims) token(kind TokenKind, t Token, now func() time.Time) (Token, error) {
	if c.Kind != kind {
		return Token{}, fmt.Errorf("%w: a %s token cannot open this route", ErrBadSignature, c.Kind)
	}
	if c.Expires != 0 {
		if now == nil {
			now = time.Now
		}
		if now().Unix() > c.Expires {
			return Token{}, fmt.Errorf("%w: it expired at %s; plan again with GET /splits",
				ErrTokenExpired, time.Unix(c.Expires, 0).UTC().Format(time.RFC3339))
		}
	}
	return t, nil
}

// ID returns a short stable identifier of a token, for logs and the splits
// list; it reveals nothing that the token itself does not. For a token it is
// the first 8 bytes of the token's signature (which a plan has at hand),
// for anything else the first 8 of its SHA-256, in hex.
func ID(token string) string {
	if _, sig, ok := strings.Cut(token, "."); ok && len(sig) == b64.EncodedLen(sha256.Size) {
		var sum [sha256.Size]byte
		if n, err := b64.Decode(sum[:], []byte(sig)); err == nil && n == sha256.Size {
			return hex.EncodeToString(sum[:8])
		}
	}
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:8])
}

// LoadOrCreateKey reads the signing key from path, creating the file with a
// fresh random 32-byte key and mode 0600 when it does not exist, so tokens
// survive a restart. The file holds the key hex-encoded; several lines hold
// several keys, the first of which signs.
func LoadOrCreateKey(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("generate token key: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("create token key directory: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("create token key file %s: %w", path, err)
		}
		_, werr := f.WriteString(hex.EncodeToString(key) + "\n")
		if err := errors.Join(werr, f.Close()); err != nil {
			return nil, fmt.Errorf("write token key file %s: %w", path, err)
		}
		return [][]byte{key}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read token key file %s: %w", path, err)
	}
	var keys [][]byte
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := hex.DecodeString(line)
		if err != nil {
			return nil, fmt.Errorf("token key file %s line %d: not hex", path, i+1)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("token key file %s holds no key", path)
	}
	return keys, nil
}
