// Package tlscert provides the standard agent's TLS certificate: the one
// given by the operator, or a self-signed pair generated on the first start
// and kept in the agent's data directory, with its SHA-256 fingerprint.
package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Load reads the certificate and key files.
func Load(certFile, keyFile string) (tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tls: %w", err)
	}
	return pair, nil
}

// LoadOrCreate returns the self-signed pair kept in dir (agent.crt,
// agent.key), generating it first when it does not exist. hosts are the
// names and addresses the certificate is valid for. created is true when it
// was generated now.
func LoadOrCreate(dir string, hosts []string) (pair tls.Certificate, created bool, err error) {
	certFile, keyFile := filepath.Join(dir, "agent.crt"), filepath.Join(dir, "agent.key")
	pair, err = tls.LoadX509KeyPair(certFile, keyFile)
	if err == nil {
		return pair, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return tls.Certificate{}, false, fmt.Errorf("tls: %w", err)
	}
	certPEM, keyPEM, err := generate(hosts)
	if err != nil {
		return tls.Certificate{}, false, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return tls.Certificate{}, false, fmt.Errorf("tls: %w", err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, false, fmt.Errorf("tls: %w", err)
	}
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		return tls.Certificate{}, false, fmt.Errorf("tls: %w", err)
	}
	pair, err = tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, false, fmt.Errorf("tls: %w", err)
	}
	return pair, true, nil
}

// generate makes a self-signed ECDSA P-256 certificate for hosts, valid ten years.
func generate(hosts []string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, fmt.Errorf("tls: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "berth-agent"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // self-signed: it is its own CA, so Berth can trust it as tlsCa
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: %w", err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

// Fingerprint is the SHA-256 fingerprint of a pair's leaf certificate, as
// colon-separated upper-case hex (the form `openssl x509 -fingerprint -sha256` prints).
func Fingerprint(pair tls.Certificate) string {
	if len(pair.Certificate) == 0 {
		return ""
	}
	sum := sha256.Sum256(pair.Certificate[0])
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	parts := make([]string, 0, len(sum))
	for i := 0; i < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, ":")
}
