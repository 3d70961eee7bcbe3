package agents

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"
)

// selfSigned returns a self-signed certificate for the agent port.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "berth"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"berth.example"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// handshake runs a TLS handshake between a server presenting cert and a
// replica dialing with relayTLS(leaf).
func handshake(t *testing.T, cert tls.Certificate, leaf []byte) error {
	t.Helper()
	c, s := net.Pipe()
	defer c.Close()
	defer s.Close()
	go func() {
		_ = tls.Server(s, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}).Handshake()
		s.Close()
	}()
	return tls.Client(c, relayTLS(leaf)).Handshake()
}

func TestRelayTrustsOnlyTheSharedCertificate(t *testing.T) {
	own, other := selfSigned(t), selfSigned(t)
	// Dialed by an address the certificate does not name: trusted, it is
	// the shared certificate.
	if err := handshake(t, own, own.Certificate[0]); err != nil {
		t.Fatalf("a replica presenting the shared certificate: %v", err)
	}
	if err := handshake(t, other, own.Certificate[0]); err == nil {
		t.Fatal("a peer with another certificate was trusted")
	}
}
