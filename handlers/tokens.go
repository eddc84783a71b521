package handlers

import (
	"context"

	"github.com/druidiceberg/sidecar/token"
)

// splitOf verifies a token of the given kind and returns the catalog it
// was planned in and the files of its split: those the token holds, or
// those of the split its plan reference names, which the catalog's planner
// resolves (planning the referenced snapshot again, or from its cache).
func (s *server) splitOf(ctx context.Context, kind token.TokenKind, token string) (Catalog, []token.Split, error) {
	tok, err := s.Signer.Decode(kind, token)
	if err != nil {
		return Catalog{}, nil, err
	}
	if tok.Ref == nil {
		cat, err := s.catalogs.forSplit(tok.Parts[0])
		return cat, tok.Parts, err
	}
	cat, err := s.catalogs.forToken(tok.Ref.Catalog)
	if err != nil {
		return Catalog{}, nil, err
	}
	parts, err := cat.Splits.Resolve(ctx, kind, *tok.Ref)
	return cat, parts, err
}
