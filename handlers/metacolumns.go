package handlers

import (
	"fmt"
	"strings"

	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/splits/split"
)

// parseMetaColumns reads the metadataColumns a planning route takes: a
// comma-separated list in a query, a list in a POST body.
func parseMetaColumns(names []string) (split.MetaColumns, error) {
	trimmed := make([]string, len(names))
	for i, n := range names {
		if trimmed[i] = strings.TrimSpace(n); trimmed[i] == "" {
			return 0, fmt.Errorf("%w: metadataColumns has an empty name", splits.ErrBadRequest)
		}
	}
	return split.ParseMetaColumns(trimmed)
}

// metaColumnsQuery reads the query parameter metadataColumns; "" is none.
func metaColumnsQuery(v string) (split.MetaColumns, error) {
	if v == "" {
		return 0, nil
	}
	return parseMetaColumns(strings.Split(v, ","))
}
