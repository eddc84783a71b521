package handlers

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
)

// Credential is one username and password that HTTP Basic auth accepts.
type Credential struct {
	Username string
	Password string
}

// basicAuth checks HTTP Basic credentials against the configured ones in
// constant time: both sides are hashed first, so neither the lengths nor the
// position of the first differing byte leak.
type basicAuth struct {
	creds [][2][sha256.Size]byte
}

func newBasicAuth(creds []Credential) *basicAuth {
	if len(creds) == 0 {
		return nil
	}
	a := &basicAuth{}
	for _, c := range creds {
		a.creds = append(a.creds, [2][sha256.Size]byte{sha256.Sum256([]byte(c.Username)), sha256.Sum256([]byte(c.Password))})
	}
	return a
}

func (a *basicAuth) allows(r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	u, p := sha256.Sum256([]byte(user)), sha256.Sum256([]byte(pass))
	match := 0
	for _, c := range a.creds {
		match |= subtle.ConstantTimeCompare(u[:], c[0][:]) & subtle.ConstantTimeCompare(p[:], c[1][:])
	}
	return match == 1
}

// require answers 401 with a Basic challenge unless the request carries
// valid credentials.
func (s *server) require(a *basicAuth) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if a == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !a.allows(r) {
				w.Header().Set("WWW-Authenticate", `Basic realm="iceberg-sidecar", charset="UTF-8"`)
				writeError(w, r, s.Logger, errorf(http.StatusUnauthorized, "unauthorized",
					"missing or wrong credentials: this sidecar requires HTTP Basic auth"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
