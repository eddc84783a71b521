package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certPath, keyPath string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "sidecar test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certPath, keyPath, pool
}

// TestServeTLS: with --tls-cert and --tls-key the sidecar speaks HTTPS and
// hands out https URIs.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	certPath, keyPath, pool := selfSigned(t)
	dir := t.TempDir()
	s, _ := startServeArgs(t, []string{
		"--addr", "127.0.0.1:0", "--demo", "--warehouse", filepath.Join(dir, "warehouse"),
		"--token-key-file", filepath.Join(dir, "token.key"), "--tls-cert", certPath, "--tls-key", keyPath,
	}, nil)
	defer s.stop(t)
	addr := s.addr
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get("https://" + addr + "/splits?table=demo.orders")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct {
		InputSource struct {
			URIs []string `json:"uris"`
		} `json:"inputSource"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || len(p.InputSource.URIs) == 0 {
		t.Fatalf("plan over TLS: %v", err)
	}
	for _, u := range p.InputSource.URIs {
		if !strings.HasPrefix(u, "https://"+addr+"/") {
			t.Fatalf("uri %s is not an https URI of this server", u)
		}
	}
	// net/http answers a plain-HTTP request to a TLS server with a 400; it
	// is never served.
	if plain, err := http.Get("http://" + addr + "/healthz"); err == nil {
		plain.Body.Close()
		if plain.StatusCode == http.StatusOK {
			t.Fatal("the TLS server served plain HTTP")
		}
	}
}

func TestTLSFlags(t *testing.T) {
	certPath, _, _ := selfSigned(t)
	for _, args := range [][]string{
		{"--tls-cert", certPath},
		{"--tls-cert", certPath, "--tls-key", certPath},
	} {
		if _, err := parseServe(args, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "--tls") {
			t.Errorf("%v: %v, want an error about the TLS flags", args, err)
		}
	}
}
