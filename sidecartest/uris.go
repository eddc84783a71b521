package sidecartest

import (
	"bytes"
	"regexp"
	"strconv"
)

// NormalizeURIs replaces the server's base URL and the tokens in an answer,
// which hold the checkout's absolute paths, with stable placeholders, so
// that it can be held to a golden file: the first token is
// http://sidecar:8080/splits/<token-1> (or files/), every split id
// "<split-id>".
func NormalizeURIs(base string, body []byte) []byte {
	re := regexp.MustCompile(regexp.QuoteMeta(base) + `/(splits|files)/[A-Za-z0-9_\-.]+`)
	// A split id hashes its token, which holds the checkout's paths too.
	body = regexp.MustCompile(`"id": "[0-9a-f]{16}"`).ReplaceAll(body, []byte(`"id": "<split-id>"`))
	seen := map[string]string{}
	return re.ReplaceAllFunc(body, func(m []byte) []byte {
		if p, ok := seen[string(m)]; ok {
			return []byte(p)
		}
		route := "splits"
		if bytes.Contains(m, []byte("/files/")) {
			route = "files"
		}
		p := "http://sidecar:8080/" + route + "/<token-" + strconv.Itoa(len(seen)+1) + ">"
		seen[string(m)] = p
		return []byte(p)
	})
}
