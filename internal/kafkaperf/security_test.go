package kafkaperf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/perfclones/perfclones/internal/javaprops"
)

func TestRefusedAuth(t *testing.T) {
	const handshake = "org.apache.kafka.common.errors.SslAuthenticationException: SSL handshake failed"
	tests := []struct {
		name string
		err  error
		want string // "" when the error is no refusal
	}{
		{"host name", &tls.CertificateVerificationError{Err: x509.HostnameError{Host: "127.0.0.1", Certificate: &x509.Certificate{}}}, handshake},
		{"unknown authority", fmt.Errorf("dial: %w", x509.UnknownAuthorityError{}), handshake},
		{"client certificate refused", &net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")},
			"org.apache.kafka.common.errors.SslAuthenticationException: Failed to process post-handshake messages"},
		{"other alert", &net.OpError{Op: "remote error", Err: errors.New("tls: protocol version not supported")}, handshake},
		{"sasl", fmt.Errorf("%w: %s", kerr.SaslAuthenticationFailed, "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"),
			"org.apache.kafka.common.errors.SaslAuthenticationException: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"},
		{"sasl without message", kerr.SaslAuthenticationFailed,
			"org.apache.kafka.common.errors.SaslAuthenticationException: " + kerr.SaslAuthenticationFailed.Description},
		{"refused connection", &net.OpError{Op: "dial", Err: errors.New("connect: connection refused")}, ""},
		{"other broker error", kerr.UnknownTopicOrPartition, ""},
		{"nil", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := refusedAuth(tt.err)
			if ok != (tt.want != "") || got != tt.want {
				t.Errorf("refusedAuth = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
}

// testPKI is a CA and a client certificate it signed.
type testPKI struct {
	ca, leaf       *x509.Certificate
	caKey, leafKey *ecdsa.PrivateKey
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	var p testPKI
	var err error
	mk := func(serial int64, cn string, isCA bool, parent *x509.Certificate, signer, key *ecdsa.PrivateKey) *x509.Certificate {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			IsCA: isCA, BasicConstraintsValid: true,
			KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		if parent == nil {
			parent = tmpl
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if p.caKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	if p.leafKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	p.ca = mk(1, "test ca", true, nil, p.caKey, p.caKey)
	p.leaf = mk(2, "client", false, p.ca, p.caKey, p.leafKey)
	return p
}

func TestPKCS12Stores(t *testing.T) {
	pki := newTestPKI(t)
	dir := t.TempDir()
	write := func(name string, data []byte, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	data, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{pki.ca}, "secret")
	trust := write("trust.p12", data, err)
	data, err = pkcs12.Modern.Encode(pki.leafKey, pki.leaf, []*x509.Certificate{pki.ca}, "secret")
	keystore := write("client.p12", data, err)

	settings := func(kv ...string) (*tls.Config, error) {
		p := javaprops.New()
		p.Set("bootstrap.servers", "127.0.0.1:1")
		for i := 0; i < len(kv); i += 2 {
			p.Set(kv[i], kv[i+1])
		}
		s, err := newClientSettings(producerClient, p, func() string { return "" })
		if err != nil {
			return nil, err
		}
		return s.tlsConfig()
	}

	cfg, err := settings("ssl.truststore.type", "PKCS12", "ssl.truststore.location", trust, "ssl.truststore.password", "secret",
		"ssl.keystore.type", "PKCS12", "ssl.keystore.location", keystore, "ssl.keystore.password", "secret", "ssl.key.password", "secret")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pki.leaf.Verify(x509.VerifyOptions{Roots: cfg.RootCAs, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the PKCS12 trust store's CA does not verify its certificate: %v", err)
	}
	if len(cfg.Certificates) != 1 || len(cfg.Certificates[0].Certificate) != 2 || !cfg.Certificates[0].Leaf.Equal(pki.leaf) {
		t.Fatalf("key store: got %d certificates, want the client's with its CA", len(cfg.Certificates))
	}
	if k, ok := cfg.Certificates[0].PrivateKey.(*ecdsa.PrivateKey); !ok || !k.Equal(pki.leafKey) {
		t.Errorf("key store: private key %T is not the client's", cfg.Certificates[0].PrivateKey)
	}

	// A key password that differs from the store's is tried after it.
	if _, err := settings("ssl.keystore.type", "PKCS12", "ssl.keystore.location", keystore,
		"ssl.keystore.password", "other", "ssl.key.password", "secret"); err != nil {
		t.Errorf("key store opened by ssl.key.password: %v", err)
	}

	refused := []struct {
		name string
		kv   []string
		want string
	}{
		{"wrong trust store password", []string{"ssl.truststore.type", "PKCS12", "ssl.truststore.location", trust, "ssl.truststore.password", "nope"},
			"Failed to load SSL keystore " + trust + " of type PKCS12: "},
		{"wrong key store password", []string{"ssl.keystore.type", "PKCS12", "ssl.keystore.location", keystore, "ssl.keystore.password", "nope"},
			"Failed to load SSL keystore " + keystore + " of type PKCS12: "},
		{"PKCS12 read as JKS", []string{"ssl.truststore.location", trust},
			"Failed to load SSL keystore " + trust + " of type JKS: JKS stores can be read only by a JVM"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, err := settings(tt.kv...)
			var ce *configError
			if !errors.As(err, &ce) || !strings.HasPrefix(ce.msg, tt.want) {
				t.Errorf("error = %v, want a ConfigException starting %q", err, tt.want)
			}
		})
	}
}
