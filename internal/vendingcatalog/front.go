// Package vendingcatalog is an Iceberg REST catalog that vends short-lived,
// rotating S3 keys, for tests: a reverse proxy in front of SeaweedFS's REST
// catalog that adds to each table-load answer a key it minted itself
// through SeaweedFS's IAM API, so the keys are real: SeaweedFS's S3 store
// accepts a key while it lives and refuses it (403 InvalidAccessKeyId) once
// the front deleted it.
//
// SeaweedFS's own catalog vends STS sessions (`weed mini
// -s3.iceberg.credentialRole`), but no shorter than SeaweedFS's STS minimum
// of 900 s, and a session cannot be ended before its expiry; this front
// vends keys that live seconds and can be ended at will, so a test can
// cross a rotation and an expiry quickly. Iceberg's own REST catalog server
// (internal/icebergrest) cannot stand in for it: it mints nothing, and at
// most copies fixed keys from its own configuration into every load answer
// (RESTServerCatalogAdapter's include-credentials).
//
// Each key is minted for one dedicated IAM user that may list and read one
// bucket (created by Start, deleted by Close), is advertised with its
// expiry (s3.session-token-expires-at-ms, the key iceberg-go and the Java
// client read), and is the one the front vends until the next rotation: a
// new key every Options.Rotation, the previous one deleted at its
// advertised expiry. Rotate and ExpireOld do the same at once, so a test
// drives rotation by events instead of waiting; each returns only when
// SeaweedFS's S3 store accepts the new key, or refuses the old ones.
//
// Where the key goes is the Mode: the load answer's config, its
// storage-credentials (prefix: the table location) with or without the
// credentials endpoint (GET …/tables/{table}/credentials, advertised in
// /v1/config's endpoints), no key at all, or a key SeaweedFS does not know.
// Every other request, and every request's authentication, passes through
// to SeaweedFS unchanged, except the X-Iceberg-Access-Delegation header,
// which the front drops: the front is the only vendor. Counts says what it
// vended, so a test can assert that a client refreshed.
//
// A test starts SeaweedFS with IAM writes allowed (`weed mini -s3.config …
// -s3.iam.readOnly=false`), then a front over it (ExampleStart) and an
// iceberg-go REST catalog over the front.
//
// The sidecar's binary never links this package.
package vendingcatalog

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Mode is what the front vends, and where.
type Mode int

const (
	// Config vends the key in the table-load answer's config only, as
	// catalogs did before storage-credentials; a client that does not
	// reload the table keeps the key past its expiry.
	Config Mode = iota + 1
	// StorageCredentials vends the key in the load answer's
	// storage-credentials, scoped to the table location; the config holds
	// the endpoint and region, no key. With Options.CredentialsEndpoint the
	// front also serves the credentials endpoint, from which a client
	// refreshes without reloading the table.
	StorageCredentials
	// Nothing vends no key: the load answer is SeaweedFS's own, so the
	// client uses its own keys (or none).
	Nothing
	// UnknownKey vends, in config and storage-credentials, a key
	// SeaweedFS does not know: its S3 store refuses every request (403
	// InvalidAccessKeyId).
	UnknownKey
)

func (m Mode) String() string {
	switch m {
	case Config:
		return "config"
	case StorageCredentials:
		return "storage-credentials"
	case Nothing:
		return "nothing"
	case UnknownKey:
		return "unknown-key"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Options configures a front.
type Options struct {
	// Catalog is SeaweedFS's Iceberg REST catalog (http://host:port).
	Catalog string
	// S3 is SeaweedFS's S3 endpoint: the front mints and deletes keys
	// through the IAM API on it, and vends it as s3.endpoint.
	S3 string
	// Region is vended as s3.region and signs the front's own requests;
	// "us-east-1" when empty.
	Region string
	// AdminAccessKey and AdminSecretKey are an identity with the Admin
	// action, which may write IAM.
	AdminAccessKey, AdminSecretKey string
	// Bucket is the bucket the vended keys may list and read.
	Bucket string
	// User is the IAM user Start creates to own the vended keys; it must
	// not exist. Close deletes it.
	User string
	// Mode says what the front vends, and where.
	Mode Mode
	// CredentialsEndpoint serves GET …/tables/{table}/credentials and
	// advertises it in /v1/config's endpoints (StorageCredentials only).
	CredentialsEndpoint bool
	// Lifetime is each key's advertised lifetime: the front deletes a key
	// at its expiry (or at ExpireOld, if that comes first).
	Lifetime time.Duration
	// Rotation mints a new key every Rotation; zero mints one only on
	// Rotate, or when the current key reaches its expiry.
	Rotation time.Duration
}

// Counts is what a front vended since it started.
type Counts struct {
	// Loads counts table-load answers, vending or not; VendedLoads those
	// that carried a key.
	Loads, VendedLoads int
	// Refreshes counts credentials-endpoint answers, each with a key.
	Refreshes int
	// Minted and Deleted count the IAM access keys it made and deleted.
	Minted, Deleted int
}

// key is a minted key and when it was made.
type key struct {
	Key
	minted time.Time
}

// Front is a running vending front. Its methods are safe for concurrent
// use.
type Front struct {
	opts    Options
	iam     *iamClient
	hc      *http.Client
	srv     *http.Server
	url     string
	catalog *url.URL

	// ops serializes the key operations (Rotate, ExpireOld, the timer):
	// each waits on SeaweedFS, so it is not held with mu.
	ops sync.Mutex

	mu      sync.Mutex
	keys    []key // oldest first; the last is the one vended
	unknown Key   // UnknownKey's key
	counts  Counts
	bgErr   error // the first error of the timer's work

	wake      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// storeWait bounds how long a key operation waits for SeaweedFS's S3
// store to accept a new key or refuse a deleted one.
const storeWait = 15 * time.Second

// Start creates the vending user, mints its first key (returning once
// SeaweedFS accepts it) and serves the front on a loopback port.
func Start(ctx context.Context, o Options) (*Front, error) {
	if o.Catalog == "" || o.S3 == "" || o.Bucket == "" || o.User == "" || o.AdminAccessKey == "" || o.AdminSecretKey == "" {
		return nil, errors.New("vendingcatalog: Catalog, S3, Bucket, User and the admin key are required")
	}
	if o.Mode < Config || o.Mode > UnknownKey {
		return nil, fmt.Errorf("vendingcatalog: unknown mode %d", int(o.Mode))
	}
	if o.Lifetime <= 0 {
		return nil, errors.New("vendingcatalog: Lifetime must be positive")
	}
	if o.CredentialsEndpoint && o.Mode != StorageCredentials {
		return nil, fmt.Errorf("vendingcatalog: the credentials endpoint needs mode %s, not %s", StorageCredentials, o.Mode)
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	o.Catalog, o.S3 = strings.TrimSuffix(o.Catalog, "/"), strings.TrimSuffix(o.S3, "/")
	catalog, err := url.Parse(o.Catalog)
	if err != nil || catalog.Scheme == "" || catalog.Host == "" {
		return nil, fmt.Errorf("vendingcatalog: the catalog %q is not an http(s) URL", o.Catalog)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	f := &Front{
		opts:    o,
		hc:      hc,
		catalog: catalog,
		iam: &iamClient{endpoint: o.S3, region: o.Region, hc: hc,
			admin: aws.Credentials{AccessKeyID: o.AdminAccessKey, SecretAccessKey: o.AdminSecretKey}},
		unknown: Key{AccessKeyID: "AKVENDUNKNOWN" + strings.ToUpper(rand.Text()[:7]), SecretAccessKey: rand.Text() + rand.Text()},
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	if err := f.iam.createUser(ctx, o.User, o.Bucket); err != nil {
		return nil, fmt.Errorf("vendingcatalog: create user %s: %w", o.User, err)
	}
	if _, err := f.Rotate(ctx); err != nil {
		return nil, errors.Join(err, f.iam.deleteUser(context.WithoutCancel(ctx), o.User))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errors.Join(fmt.Errorf("vendingcatalog: listen: %w", err), f.deleteAll(context.WithoutCancel(ctx)))
	}
	f.url = "http://" + ln.Addr().String()
	f.srv = &http.Server{Handler: f.handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.srv.Serve(ln) }()
	go f.run()
	return f, nil
}

// URL is the front's base URL, the catalog's uri for a client.
func (f *Front) URL() string { return f.url }

// Current is the key the front vends now (for UnknownKey, the unknown
// one).
func (f *Front) Current() Key {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.currentLocked()
}

func (f *Front) currentLocked() Key {
	if f.opts.Mode == UnknownKey {
		k := f.unknown
		k.Expires = f.keys[len(f.keys)-1].Expires
		return k
	}
	return f.keys[len(f.keys)-1].Key
}

// Counts is what the front vended so far.
func (f *Front) Counts() Counts {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts
}

// Rotate mints a new key, which the front vends from now on, and returns
// it once SeaweedFS's S3 store accepts it. The keys it vended before stay
// valid until their advertised expiry.
func (f *Front) Rotate(ctx context.Context) (Key, error) {
	f.ops.Lock()
	defer f.ops.Unlock()
	return f.rotate(ctx)
}

func (f *Front) rotate(ctx context.Context) (Key, error) {
	k, err := f.iam.createAccessKey(ctx, f.opts.User)
	if err != nil {
		return Key{}, fmt.Errorf("vendingcatalog: mint a key: %w", err)
	}
	now := time.Now()
	k.Expires = now.Add(f.opts.Lifetime)
	f.mu.Lock()
	f.counts.Minted++
	f.mu.Unlock()
	if err := f.waitStore(ctx, k, false); err != nil {
		return Key{}, errors.Join(err, f.iam.deleteAccessKey(context.WithoutCancel(ctx), f.opts.User, k.AccessKeyID))
	}
	f.mu.Lock()
	f.keys = append(f.keys, key{Key: k, minted: now})
	f.mu.Unlock()
	f.nudge()
	return k, nil
}

// ExpireOld deletes every key but the current one now, before its
// advertised expiry if that is still to come, and returns once SeaweedFS's
// S3 store refuses them.
func (f *Front) ExpireOld(ctx context.Context) error {
	f.ops.Lock()
	defer f.ops.Unlock()
	f.mu.Lock()
	old := make([]Key, 0, len(f.keys)-1)
	for _, k := range f.keys[:len(f.keys)-1] {
		old = append(old, k.Key)
	}
	f.mu.Unlock()
	return f.expire(ctx, old)
}

// expire deletes keys and waits until the store refuses them.
func (f *Front) expire(ctx context.Context, keys []Key) error {
	var errs []error
	for _, k := range keys {
		if err := f.iam.deleteAccessKey(ctx, f.opts.User, k.AccessKeyID); err != nil {
			errs = append(errs, fmt.Errorf("vendingcatalog: delete key %s: %w", k.AccessKeyID, err))
			continue
		}
		f.mu.Lock()
		f.counts.Deleted++
		f.keys = removeKey(f.keys, k.AccessKeyID)
		f.mu.Unlock()
		if err := f.waitStore(ctx, k, true); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func removeKey(keys []key, id string) []key {
	out := keys[:0]
	for _, k := range keys {
		if k.AccessKeyID != id {
			out = append(out, k)
		}
	}
	return out
}

// waitStore polls SeaweedFS's S3 store until it accepts k (refused false)
// or refuses it (refused true).
func (f *Front) waitStore(ctx context.Context, k Key, refused bool) error {
	ctx, cancel := context.WithTimeout(ctx, storeWait)
	defer cancel()
	want := "accept"
	if refused {
		want = "refuse"
	}
	var last Answer
	for {
		a, err := listBucket(ctx, f.hc, f.opts.S3, f.opts.Region, k, f.opts.Bucket)
		if err == nil {
			last = a
			if a.Refused() == refused && (refused || a.Status == http.StatusOK) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("vendingcatalog: SeaweedFS's S3 store did not %s key %s within %s (last answer %d %s, %v)",
				want, k.AccessKeyID, storeWait, last.Status, last.Code, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// nudge makes the timer recompute its next event.
func (f *Front) nudge() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// run is the timer: it rotates every Rotation and deletes each old key at
// its advertised expiry, until Close. Close lets a tick under way finish
// (a tick is bounded by storeWait), so that no key is minted unrecorded.
func (f *Front) run() {
	defer close(f.done)
	ctx := context.Background()
	var retryAt time.Time // after a failed tick, not before
	for {
		f.mu.Lock()
		next := f.nextEventLocked()
		f.mu.Unlock()
		if next.Before(retryAt) {
			next = retryAt
		}
		timer := time.NewTimer(time.Until(next))
		select {
		case <-f.stop:
			timer.Stop()
			return
		case <-f.wake:
			timer.Stop()
			continue
		case <-timer.C:
		}
		if err := f.tick(ctx); err != nil {
			retryAt = time.Now().Add(time.Second)
			f.mu.Lock()
			if f.bgErr == nil {
				f.bgErr = err
			}
			f.mu.Unlock()
		}
	}
}

// nextEventLocked is when the timer has work next: a rotation, or an old
// key's expiry (the current key's expiry forces a rotation).
func (f *Front) nextEventLocked() time.Time {
	cur := f.keys[len(f.keys)-1]
	next := cur.Expires
	if f.opts.Rotation > 0 {
		next = minTime(next, cur.minted.Add(f.opts.Rotation))
	}
	for _, k := range f.keys[:len(f.keys)-1] {
		next = minTime(next, k.Expires)
	}
	return next
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// tick does the timer's work that is due.
func (f *Front) tick(ctx context.Context) error {
	f.ops.Lock()
	defer f.ops.Unlock()
	now := time.Now()
	f.mu.Lock()
	cur := f.keys[len(f.keys)-1]
	rotate := !now.Before(cur.Expires) || f.opts.Rotation > 0 && !now.Before(cur.minted.Add(f.opts.Rotation))
	f.mu.Unlock()
	if rotate {
		if _, err := f.rotate(ctx); err != nil {
			return err
		}
	}
	f.mu.Lock()
	var due []Key
	for _, k := range f.keys[:len(f.keys)-1] {
		if !now.Before(k.Expires) {
			due = append(due, k.Key)
		}
	}
	f.mu.Unlock()
	return f.expire(ctx, due)
}

// Err is the first error of the front's timed work (a rotation or an
// expiry SeaweedFS did not carry out), nil when there was none.
func (f *Front) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bgErr
}

// Close stops serving and the timer, deletes every key and the user, and
// returns the first error of the timed work, if any. Only the first call
// does anything.
func (f *Front) Close() error {
	err := errors.New("vendingcatalog: closed already")
	f.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = f.srv.Shutdown(ctx)
		close(f.stop)
		<-f.done
		err = errors.Join(err, f.Err(), f.deleteAll(ctx))
	})
	return err
}

// deleteAll deletes every key and the user.
func (f *Front) deleteAll(ctx context.Context) error {
	f.mu.Lock()
	keys := slices.Clone(f.keys)
	f.mu.Unlock()
	var errs []error
	for _, k := range keys {
		errs = append(errs, f.iam.deleteAccessKey(ctx, f.opts.User, k.AccessKeyID))
	}
	errs = append(errs, f.iam.deleteUser(ctx, f.opts.User))
	return errors.Join(errs...)
}
