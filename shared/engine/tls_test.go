package engine_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// testPKI is a throw-away CA with a server certificate for 127.0.0.1 and a
// client certificate, all in PEM as an environment stores them.
type testPKI struct {
	caPEM      string
	caPool     *x509.CertPool
	server     tls.Certificate
	clientCert string
	clientKey  string
	otherKey   string // a valid key that does not match clientCert
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	caKey := newKey(t)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "berth test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("create CA: %v", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	issue := func(serial int64, tmpl *x509.Certificate) (string, string) {
		key := newKey(t)
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatalf("issue certificate: %v", err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), keyPEM(t, key)
	}
	p := &testPKI{caPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})), caPool: x509.NewCertPool()}
	p.caPool.AddCert(ca)
	srvCert, srvKey := issue(2, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if p.server, err = tls.X509KeyPair([]byte(srvCert), []byte(srvKey)); err != nil {
		t.Fatal(err)
	}
	p.clientCert, p.clientKey = issue(3, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "berth"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	p.otherKey = keyPEM(t, newKey(t))
	return p
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func keyPEM(t *testing.T, k *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// startEngineProxy serves the local engine on 127.0.0.1, over TLS with cfg
// or over plain HTTP when cfg is nil, and returns the port.
func startEngineProxy(t *testing.T, cfg *tls.Config) int {
	t.Helper()
	srv := httptest.NewUnstartedServer(engine.EngineProxy(t))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // rejected handshakes are expected
	if cfg != nil {
		srv.TLS = cfg
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

func newManager(t *testing.T) *engine.Manager {
	t.Helper()
	m := engine.NewManager(slog.New(slog.NewTextHandler(t.Output(), nil)))
	t.Cleanup(m.Close)
	return m
}

// rawServerVersion asks the engine's socket for its version, bypassing the
// engine package.
func rawServerVersion(t *testing.T) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://engine/version", nil)
	resp, err := enginetest.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("GET /version: %v", err)
	}
	defer resp.Body.Close()
	var v struct{ Version string }
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v.Version == "" {
		t.Fatalf("decode /version: %q, %v", v.Version, err)
	}
	return v.Version
}

func isUnknownAuthority(err error) bool {
	var uae x509.UnknownAuthorityError
	return errors.As(err, &uae)
}

func TestDirectConnection(t *testing.T) {
	enginetest.Require(t)
	pki := newTestPKI(t)
	wantVersion := rawServerVersion(t)
	label := newLabel(t)
	marker := createContainer(t, localClient(t), label, engine.CreateSpec{Cmd: []string{"true"}})

	serverTLS := &tls.Config{Certificates: []tls.Certificate{pki.server}, MinVersion: tls.VersionTLS12}
	mutualTLS := &tls.Config{Certificates: []tls.Certificate{pki.server}, MinVersion: tls.VersionTLS12,
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pki.caPool}

	tests := []struct {
		name      string
		serverTLS *tls.Config // nil: plain HTTP
		env       engine.Endpoint
		// wantErr reports whether the error is the expected one; nil means
		// the connection must work.
		wantErr func(error) bool
	}{
		{
			name:      "https with tlsCa",
			serverTLS: serverTLS,
			env:       engine.Endpoint{Protocol: "https", TLSCA: pki.caPEM},
		},
		{
			name:      "https without tlsCa fails verification",
			serverTLS: serverTLS,
			env:       engine.Endpoint{Protocol: "https"},
			wantErr:   func(err error) bool { return engine.IsOffline(err) && isUnknownAuthority(err) },
		},
		{
			name:      "https with tlsSkipVerify",
			serverTLS: serverTLS,
			env:       engine.Endpoint{Protocol: "https", TLSSkipVerify: true},
		},
		{
			name:      "mutual TLS with client certificate",
			serverTLS: mutualTLS,
			env:       engine.Endpoint{Protocol: "https", TLSCA: pki.caPEM, TLSCert: pki.clientCert, TLSKey: pki.clientKey},
		},
		{
			name:      "mutual TLS without client certificate fails",
			serverTLS: mutualTLS,
			env:       engine.Endpoint{Protocol: "https", TLSCA: pki.caPEM},
			wantErr: func(err error) bool {
				return engine.IsOffline(err) && strings.Contains(err.Error(), "certificate required")
			},
		},
		{
			name: "plain http",
			env:  engine.Endpoint{Protocol: "http"},
		},
		{
			name:      "mismatched tlsCert and tlsKey",
			serverTLS: serverTLS,
			env:       engine.Endpoint{Protocol: "https", TLSCA: pki.caPEM, TLSCert: pki.clientCert, TLSKey: pki.otherKey},
			wantErr:   isInvalidNotOffline,
		},
		{
			name:      "tlsCert without tlsKey",
			serverTLS: serverTLS,
			env:       engine.Endpoint{Protocol: "https", TLSCA: pki.caPEM, TLSCert: pki.clientCert},
			wantErr:   isInvalidNotOffline,
		},
		{
			name:      "garbage tlsCa",
			serverTLS: serverTLS,
			env:       engine.Endpoint{Protocol: "https", TLSCA: "-----BEGIN CERTIFICATE-----\nbm9wZQ==\n-----END CERTIFICATE-----\n"},
			wantErr:   isInvalidNotOffline,
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env
			env.ID = int64(100 + i)
			env.ConnectionType = engine.Direct
			env.Host = "127.0.0.1"
			env.Port = startEngineProxy(t, tt.serverTLS)
			m := newManager(t)

			info, testErr := m.Test(t.Context(), env)
			var ids []string
			c, clientErr := m.Client(t.Context(), env)
			if clientErr == nil {
				list, err := c.ListContainers(t.Context(), true)
				if err != nil {
					t.Fatalf("ListContainers: %v", err)
				}
				for _, ct := range list {
					ids = append(ids, ct.ID)
				}
			}

			if tt.wantErr != nil {
				if testErr == nil || !tt.wantErr(testErr) {
					t.Errorf("Test error = %v, want the expected failure", testErr)
				}
				if clientErr == nil || !tt.wantErr(clientErr) {
					t.Errorf("Client error = %v, want the expected failure", clientErr)
				}
				return
			}
			if testErr != nil {
				t.Fatalf("Test: %v", testErr)
			}
			if info.ServerVersion != wantVersion {
				t.Errorf("Test: ServerVersion = %q, want %q (from the socket's /version)", info.ServerVersion, wantVersion)
			}
			if clientErr != nil {
				t.Fatalf("Client: %v", clientErr)
			}
			if !slices.Contains(ids, marker) {
				t.Errorf("ListContainers over the connection does not list container %s", marker)
			}
		})
	}
}

func isInvalidNotOffline(err error) bool {
	return errors.Is(err, engine.ErrInvalid) && !engine.IsOffline(err)
}

// TestDirectConnectionRefusedIsOffline checks that a closed port is reported
// as offline at once.
func TestDirectConnectionRefusedIsOffline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	env := engine.Endpoint{ID: 3, ConnectionType: engine.Direct, Host: "127.0.0.1", Port: port, Protocol: "http"}
	ctx, cancel := context.WithTimeout(t.Context(), engine.PingTimeout)
	defer cancel()
	if _, err := newManager(t).Client(ctx, env); !engine.IsOffline(err) {
		t.Fatalf("Client(closed port) = %v, want an offline error", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Client(closed port) waited for the ping deadline instead of failing at once")
	}
}
