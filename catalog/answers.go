package catalog

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/druidiceberg/sidecar/token"
)

// The bound on what the sidecar reads of a REST catalog's answers. iceberg-go
// parses each answer whole (json.Decoder over the HTTP body), so a catalog
// that answers with an endless body, or a plan of a million files in one
// answer, would otherwise fill the process before any count of the sidecar
// sees it. The REST catalog's transport (answerTransport) reads every body
// through a bound: the answers of a plan on the server (plan, poll, tasks)
// against the plan's memory (token.PlanMeter), as they arrive; every other
// answer (config, table loads, lists, OAuth2 tokens) up to maxAnswerBytes.
// Iceberg Java's client (org.apache.iceberg.rest.HTTPClient) parses each
// answer whole from its stream, without a bound; the bound is the
// sidecar's.

// maxAnswerBytes is the most the sidecar reads of one answer of a REST
// catalog that no plan's memory bounds: generous, as a table's metadata
// with a long history can run to tens of MiB, but finite.
const maxAnswerBytes = 256 << 20

// errAnswerTooLarge: a catalog's answer passed maxAnswerBytes.
var errAnswerTooLarge = errors.New("the catalog's answer is larger than the sidecar reads of one answer")

// answerTransport is the REST catalog's transport: the one iceberg-go
// builds for it (rest.createSession: http.Transport with the proxy of the
// environment and the catalog's TLS configuration), its answers bounded.
type answerTransport struct {
	base http.RoundTripper
	// limit is the bound of answers outside a plan (maxAnswerBytes).
	limit int64
}

// answerTransports is the rest.TransportFactory of the REST catalog.
func answerTransports(limit int64) func(*tls.Config) (http.RoundTripper, func()) {
	return func(cfg *tls.Config) (http.RoundTripper, func()) {
		t := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: cfg}
		return answerTransport{base: t, limit: limit}, t.CloseIdleConnections
	}
}

func (t answerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	b := &boundedBody{body: resp.Body, limit: t.limit, what: r.Method + " " + r.URL.Path}
	if pa := planAnswersOf(r.Context()); pa != nil {
		b.plan, b.limit = pa, 0
	}
	resp.Body = b
	return resp, nil
}

// boundedBody is an answer's body read through its bound: limit bytes, or
// (limit 0) the plan's meter. A read past the bound fails, and every read
// after it: the rest of the body is never read.
type boundedBody struct {
	body  io.ReadCloser
	limit int64
	plan  *planAnswers
	what  string
	read  int64
	err   error
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.limit > 0 && int64(len(p)) > b.limit-b.read+1 {
		// One byte past the bound tells a body that ends at it from one
		// that goes on.
		p = p[:b.limit-b.read+1]
	}
	n, err := b.body.Read(p)
	b.read += int64(n)
	switch {
	case b.limit > 0 && b.read > b.limit:
		b.err = fmt.Errorf("%w: %s answered with more than %d bytes", errAnswerTooLarge, b.what, b.limit)
	case b.plan != nil && n > 0:
		b.err = b.plan.answer(b.read)
	}
	if b.err != nil {
		return 0, b.err
	}
	return n, err
}

func (b *boundedBody) Close() error { return b.body.Close() }

// planAnswers is one plan's meter as the transport charges it: the first
// refusal is kept, as iceberg-go reports a body's read error in words only.
type planAnswers struct {
	meter token.PlanMeter

	mu      sync.Mutex
	refusal error
}

// answer charges the answer being read, of which read bytes arrived.
func (pa *planAnswers) answer(read int64) error {
	pa.mu.Lock()
	defer pa.mu.Unlock()
	if pa.refusal != nil {
		return pa.refusal
	}
	pa.refusal = pa.meter.Answer(read)
	return pa.refusal
}

// refused is the refusal that ended the plan's reads, if one did.
func (pa *planAnswers) refused() error {
	pa.mu.Lock()
	defer pa.mu.Unlock()
	return pa.refusal
}

type planAnswersKey struct{}

// withPlanAnswers has the answers of the catalog's requests under ctx
// charged to pa.
func withPlanAnswers(ctx context.Context, pa *planAnswers) context.Context {
	return context.WithValue(ctx, planAnswersKey{}, pa)
}

// planAnswersOf is the plan whose answers the requests under ctx are, nil
// outside a plan.
func planAnswersOf(ctx context.Context) *planAnswers {
	pa, _ := ctx.Value(planAnswersKey{}).(*planAnswers)
	return pa
}
