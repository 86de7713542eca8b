package redisbench

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testCA is a CA made for a test, which signs certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a certificate (PEM) and its key (PEM, PKCS#8) for the DNS
// names and IPs given.
func (ca *testCA) issue(t *testing.T, dns []string, ips []net.IP, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: dns, IPAddresses: ips, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// tlsListener serves TLS handshakes on a loopback port with certPEM and
// keyPEM and holds each connection open; clientCAs, when set, makes it
// require a client certificate they signed.
func tlsListener(t *testing.T, certPEM, keyPEM []byte, clientCAs *x509.CertPool) string {
	t.Helper()
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}}
	if clientCAs != nil {
		cfg.ClientCAs, cfg.ClientAuth = clientCAs, tls.RequireAndVerifyClientCert
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
				_, _ = c.Read(make([]byte, 1))
			}()
		}
	}()
	return l.Addr().String()
}

// TestTLSHandshakeVerifiesChainOnly: like the C tool (OpenSSL without a
// host name to check), the chain is verified and the name is not, whatever
// the certificate names and whatever --sni says.
func TestTLSHandshakeVerifiesChainOnly(t *testing.T) {
	dir := t.TempDir()
	ca, wrong := newTestCA(t, "ca"), newTestCA(t, "wrong")
	caFile := writeFile(t, dir, "ca.pem", ca.pem)
	wrongFile := writeFile(t, dir, "wrong.pem", wrong.pem)
	dnsCert, dnsKey := ca.issue(t, []string{"localhost"}, nil, x509.ExtKeyUsageServerAuth)
	ipCert, ipKey := ca.issue(t, nil, []net.IP{net.IPv4(127, 0, 0, 1)}, x509.ExtKeyUsageServerAuth)
	clientCert, clientKey := ca.issue(t, nil, nil, x509.ExtKeyUsageClientAuth)
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	dnsOnly := tlsListener(t, dnsCert, dnsKey, nil)
	ipOnly := tlsListener(t, ipCert, ipKey, nil)
	mtls := tlsListener(t, ipCert, ipKey, pool)
	certFile, keyFile := writeFile(t, dir, "client.pem", clientCert), writeFile(t, dir, "client.key", clientKey)

	tests := []struct {
		name   string
		addr   string
		opts   TLSOptions
		reason string // "" when the handshake must succeed
	}{
		{name: "dns-only cert by ip", addr: dnsOnly, opts: TLSOptions{CACert: caFile}},
		{name: "ip cert", addr: ipOnly, opts: TLSOptions{CACert: caFile}},
		{name: "sni names nothing the cert has", addr: dnsOnly, opts: TLSOptions{CACert: caFile, SNI: "wrong.example"}},
		{name: "insecure", addr: dnsOnly, opts: TLSOptions{Insecure: true}},
		{name: "insecure with wrong ca", addr: dnsOnly, opts: TLSOptions{Insecure: true, CACert: wrongFile}},
		{name: "client cert", addr: mtls, opts: TLSOptions{CACert: caFile, Cert: certFile, Key: keyFile}},
		{name: "wrong ca", addr: dnsOnly, opts: TLSOptions{CACert: wrongFile}, reason: "certificate verify failed"},
		{name: "missing ca dir", addr: dnsOnly, opts: TLSOptions{CACertDir: filepath.Join(dir, "none")}, reason: "certificate verify failed"},
		{name: "ca dir without hashed names", addr: dnsOnly, opts: TLSOptions{CACertDir: dir}, reason: "certificate verify failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Enabled = true
			cfg, err := buildTLSConfig(tt.opts)
			if err != nil {
				t.Fatalf("set-up: %v", err)
			}
			host, port, _ := net.SplitHostPort(tt.addr)
			p, err := strconv.Atoi(port)
			if err != nil {
				t.Fatal(err)
			}
			ep := endpoint{host: host, port: p}
			c, err := (&dialer{tls: cfg}).dial(context.Background(), ep)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				c.Close()
				return
			}
			var te *tlsError
			if !errors.As(err, &te) || !te.handshake || te.timeout || te.reason != tt.reason {
				t.Fatalf("dial: %#v, want a handshake failure %q", err, tt.reason)
			}
		})
	}
}

// TestTLSSetupFailureLines: a TLS set-up that fails is found after the TCP
// connect, as in the C tool: its error, the CONFIG warning, and its error
// again as the run's; after a refused connect, the connect error first.
func TestTLSSetupFailureLines(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, "ca")
	caFile := writeFile(t, dir, "ca.pem", ca.pem)
	certPEM, _ := ca.issue(t, nil, nil, x509.ExtKeyUsageClientAuth)
	_, otherKey := ca.issue(t, nil, nil, x509.ExtKeyUsageClientAuth)
	certFile := writeFile(t, dir, "client.pem", certPEM)
	badFile := writeFile(t, dir, "bad.pem", []byte("not a certificate\n"))
	otherKeyFile := writeFile(t, dir, "other.key", otherKey)

	// Anything that accepts TCP connections: the set-up fails before a byte is sent.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, open, _ := net.SplitHostPort(l.Addr().String())
	closedL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closed, _ := net.SplitHostPort(closedL.Addr().String())
	closedL.Close()

	const warn = "WARNING: Could not fetch server CONFIG"
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "missing ca file", args: []string{"-p", open, "--cacert", filepath.Join(dir, "none.pem")},
			want: []string{"Could not negotiate a TLS connection: Invalid CA Certificate File/Directory", warn,
				"Could not negotiate a TLS connection: Invalid CA Certificate File/Directory"}},
		{name: "ca file without a certificate", args: []string{"-p", open, "--cacert", badFile},
			want: []string{"Could not negotiate a TLS connection: Invalid CA Certificate File/Directory", warn,
				"Could not negotiate a TLS connection: Invalid CA Certificate File/Directory"}},
		{name: "bad client cert", args: []string{"-p", open, "--cacert", caFile, "--cert", badFile, "--key", otherKeyFile},
			want: []string{"Could not negotiate a TLS connection: Invalid client certificate", warn,
				"Could not negotiate a TLS connection: Invalid client certificate"}},
		{name: "key of another cert", args: []string{"-p", open, "--cacert", caFile, "--cert", certFile, "--key", otherKeyFile},
			want: []string{"Could not negotiate a TLS connection: Invalid private key", warn,
				"Could not negotiate a TLS connection: Invalid private key"}},
		{name: "refused, then the set-up", args: []string{"-p", closed, "--cacert", filepath.Join(dir, "none.pem")},
			want: []string{"Could not connect to Redis at 127.0.0.1:" + closed + ": Connection refused", warn,
				"Could not negotiate a TLS connection: Invalid CA Certificate File/Directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-h", "127.0.0.1", "--tls", "-n", "10", "-q", "-t", "ping"}, tt.args...)
			done, stdout, stderr := runMain(args...)
			select {
			case rc := <-done:
				if rc != 1 {
					t.Errorf("exit code %d, want 1", rc)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("no exit within 20 s")
			}
			if got := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, strings.Join(tt.want, "\n"))
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", stdout)
			}
		})
	}
}
