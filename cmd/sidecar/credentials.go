package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/druidiceberg/sidecar/handlers"
)

// credential is one username and password.
type credential struct{ Username, Password string }

// readCredentials reads the username:password lines of path (blank lines
// and # comments skipped), or one pair from the environment variables
// userEnv and passEnv; neither gives none. The errors never quote a line
// of the file: it holds passwords.
func readCredentials(flagName, path, userEnv, passEnv string, getenv func(string) string) ([]credential, error) {
	user, pass := getenv(userEnv), getenv(passEnv)
	if path == "" {
		if (user == "") != (pass == "") {
			return nil, fmt.Errorf("set both %s and %s, or neither", userEnv, passEnv)
		}
		if user == "" {
			return nil, nil
		}
		return []credential{{user, pass}}, nil
	}
	if user != "" || pass != "" {
		return nil, fmt.Errorf("give credentials either in %s or in %s/%s, not both", flagName, userEnv, passEnv)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	var creds []credential
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		u, p, ok := strings.Cut(line, ":")
		if !ok || u == "" || p == "" {
			return nil, fmt.Errorf("%s %s line %d: want username:password", flagName, path, i+1)
		}
		creds = append(creds, credential{u, p})
	}
	if len(creds) == 0 {
		return nil, fmt.Errorf("%s %s holds no username:password line", flagName, path)
	}
	return creds, nil
}

// serveCredentials are the credentials serve requires: the lines of
// --basic-auth-file, or SIDECAR_BASIC_AUTH_USERNAME and _PASSWORD.
func serveCredentials(path string, getenv func(string) string) ([]handlers.Credential, error) {
	creds, err := readCredentials("--basic-auth-file", path, "SIDECAR_BASIC_AUTH_USERNAME", "SIDECAR_BASIC_AUTH_PASSWORD", getenv)
	if err != nil || len(creds) == 0 {
		return nil, err
	}
	out := make([]handlers.Credential, len(creds))
	for i, c := range creds {
		out[i] = handlers.Credential{Username: c.Username, Password: c.Password}
	}
	return out, nil
}

// oneCredential is the first credential of readCredentials, for a client
// that sends one.
func oneCredential(flagName, path, userEnv, passEnv string, getenv func(string) string) (*credential, error) {
	creds, err := readCredentials(flagName, path, userEnv, passEnv, getenv)
	if err != nil || len(creds) == 0 {
		return nil, err
	}
	return &creds[0], nil
}
