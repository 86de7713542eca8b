package redisbench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// connectTimeout bounds a TCP connect. The C tool blocks in connect(2) for as
// long as the kernel retries; a benchmark against an unreachable host should
// say so within seconds instead.
const connectTimeout = 5 * time.Second

// endpoint is where a connection goes: a TCP host and port, or a unix socket.
type endpoint struct {
	host   string
	port   int
	unix   bool // -s was given, even as an empty path
	socket string
}

// String is the address as the C tool prints it in messages.
func (e endpoint) String() string {
	if e.unix {
		return e.socket
	}
	return e.host + ":" + strconv.Itoa(e.port)
}

// dialer opens connections with the run's TLS settings.
type dialer struct {
	tls *tls.Config // nil without --tls
	// tlsErr is a TLS set-up that failed (a CA file that cannot be read, a
	// bad client certificate). The C tool sets TLS up anew on every
	// connection, after the TCP connect, so every connect that succeeds
	// fails with it.
	tlsErr error
}

// connectError carries the text the C tool prints after "Could not connect to Redis at <addr>: ".
type connectError struct {
	addr   string
	reason string
}

func (e *connectError) Error() string {
	return fmt.Sprintf("Could not connect to Redis at %s: %s", e.addr, e.reason)
}

// tlsError is a failed TLS set-up or handshake.
type tlsError struct {
	reason string
	// handshake: the set-up was fine but the handshake failed. The C tool
	// says nothing of that on its set-up connection (only that it could not
	// fetch the server's CONFIG), and its clients then wait forever.
	handshake bool
	// timeout: the handshake got no answer within connectTimeout (a server
	// that does not speak TLS); the C tool waits for it forever.
	timeout bool
}

func (e *tlsError) Error() string { return "Could not negotiate a TLS connection: " + e.reason }

// dial connects to ep; a cancelled ctx ends a connect or handshake at once.
func (d *dialer) dial(ctx context.Context, ep endpoint) (net.Conn, error) {
	var c net.Conn
	var err error
	nd := net.Dialer{Timeout: connectTimeout}
	switch {
	case ep.unix:
		// An empty path is, to connect(2), the abstract socket with an
		// empty name, which refuses: the C tool's "-s ''" outcome.
		path := ep.socket
		if path == "" {
			path = "@"
		}
		c, err = nd.DialContext(ctx, "unix", path)
	case ep.host == "":
		// getaddrinfo(3) refuses an empty host without a lookup.
		return nil, &connectError{addr: ep.String(), reason: "Name or service not known"}
	default:
		host := ep.host
		if ip, ok := numericHost(host); ok {
			host = ip.String()
		}
		c, err = nd.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(ep.port)))
	}
	if err != nil {
		return nil, &connectError{addr: ep.String(), reason: strerror(err)}
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if d.tlsErr != nil {
		c.Close()
		return nil, d.tlsErr
	}
	if d.tls == nil {
		return c, nil
	}
	tc := tls.Client(c, d.tls)
	_ = tc.SetDeadline(time.Now().Add(connectTimeout))
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, handshakeError(err)
	}
	_ = tc.SetDeadline(time.Time{})
	return tc, nil
}

// handshakeError is a failed handshake in the C tool's terms: a chain that
// does not verify is OpenSSL's "certificate verify failed".
func handshakeError(err error) *tlsError {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case isTimeout(err):
		return &tlsError{reason: err.Error(), handshake: true, timeout: true}
	case errors.As(err, &unknown), errors.As(err, &invalid), errors.As(err, &verify):
		return &tlsError{reason: "certificate verify failed", handshake: true}
	}
	return &tlsError{reason: err.Error(), handshake: true}
}

// strerror turns a Go network error into the C library's message for it.
func strerror(err error) string {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return "Name or service not known"
		}
		return "Temporary failure in name resolution"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return capitalize(errno.Error())
	}
	if errors.Is(err, os.ErrDeadlineExceeded) || isTimeout(err) {
		return "Connection timed out"
	}
	if errors.Is(err, io.EOF) {
		return "Server closed the connection"
	}
	// A TLS alert from the server (a client certificate it refuses, or
	// none where it requires one) comes with its close; OpenSSL reads the
	// close, which hiredis reports so.
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return "Server closed the connection"
	}
	return err.Error()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// buildTLSConfig turns the --tls options into a client configuration as
// the C tool's cliSecureConnection sets up OpenSSL: the server's chain is
// verified (unless --insecure) against --cacert/--cacertdir or the system's
// CAs, but its host name is not (OpenSSL checks no name unless asked), and
// SNI is sent only with --sni. Failures carry its texts.
func buildTLSConfig(t TLSOptions) (*tls.Config, error) {
	if !t.Enabled {
		return nil, nil
	}
	// Go's own verification always checks the name; ours below does not,
	// so Go's is off and VerifyConnection does the chain.
	cfg := &tls.Config{ServerName: t.SNI, InsecureSkipVerify: true}
	var roots *x509.CertPool
	if t.CACert != "" || t.CACertDir != "" {
		roots = x509.NewCertPool()
		if t.CACert != "" {
			pem, err := os.ReadFile(t.CACert)
			if err != nil || !roots.AppendCertsFromPEM(pem) {
				return nil, &tlsError{reason: "Invalid CA Certificate File/Directory"}
			}
		}
		// OpenSSL reads a CA directory lazily, by subject hash file name
		// (<8 hex digits>.<n>), so a missing or empty one is no error here.
		if t.CACertDir != "" {
			entries, _ := os.ReadDir(t.CACertDir)
			for _, e := range entries {
				if hashedCertName.MatchString(e.Name()) {
					if pem, err := os.ReadFile(filepath.Join(t.CACertDir, e.Name())); err == nil {
						roots.AppendCertsFromPEM(pem)
					}
				}
			}
		}
	}
	if !t.Insecure {
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("no peer certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	var certPEM, keyPEM []byte
	if t.Cert != "" {
		b, err := os.ReadFile(t.Cert)
		if err != nil || !hasPEMBlock(b, "CERTIFICATE") {
			return nil, &tlsError{reason: "Invalid client certificate"}
		}
		certPEM = b
	}
	if t.Key != "" {
		b, err := os.ReadFile(t.Key)
		if err != nil || !hasPEMBlock(b, "PRIVATE KEY") {
			return nil, &tlsError{reason: "Invalid private key"}
		}
		keyPEM = b
	}
	if certPEM != nil && keyPEM != nil {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			// OpenSSL checks that the key matches the certificate when it loads the key.
			return nil, &tlsError{reason: "Invalid private key"}
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	// A certificate without its key (or a key alone) is loaded by OpenSSL
	// but cannot sign; like it, we then present nothing.
	if t.Ciphers != "" {
		suites, ok := opensslCipherList(t.Ciphers)
		if !ok {
			return nil, &tlsError{reason: "Error while configuring ciphers"}
		}
		cfg.CipherSuites = suites
	}
	if t.CipherSuites != "" {
		// Go does not let a client narrow the TLS 1.3 suites; we check the
		// names so that a typo fails as it does with OpenSSL.
		for _, name := range strings.Split(t.CipherSuites, ":") {
			if !tls13Suites[name] {
				return nil, &tlsError{reason: "Error while configuring ciphersuites"}
			}
		}
	}
	return cfg, nil
}

// hashedCertName is how OpenSSL's CA directory lookup names its files.
var hashedCertName = regexp.MustCompile(`^[0-9a-f]{8}\.[0-9]+$`)

// hasPEMBlock reports whether b holds a PEM block whose type ends in kind
// ("CERTIFICATE", "PRIVATE KEY" for every key type).
func hasPEMBlock(b []byte, kind string) bool {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return false
		}
		if strings.HasSuffix(blk.Type, kind) {
			return true
		}
	}
}

var tls13Suites = map[string]bool{
	"TLS_AES_128_GCM_SHA256": true, "TLS_AES_256_GCM_SHA384": true, "TLS_CHACHA20_POLY1305_SHA256": true,
	"TLS_AES_128_CCM_SHA256": true, "TLS_AES_128_CCM_8_SHA256": true,
}

// opensslCipherList maps an OpenSSL cipher list ("ECDHE-RSA-AES128-GCM-SHA256:...")
// onto Go's suites. Unknown names are skipped as OpenSSL skips them; a list
// with no usable name fails.
func opensslCipherList(list string) ([]uint16, bool) {
	byName := map[string]uint16{}
	for _, s := range tls.CipherSuites() {
		byName[opensslName(s.Name)] = s.ID
	}
	var ids []uint16
	for _, name := range strings.FieldsFunc(list, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		if id, ok := byName[name]; ok {
			ids = append(ids, id)
		}
	}
	return ids, len(ids) > 0
}

// opensslName converts an IANA suite name such as
// TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 to OpenSSL's ECDHE-RSA-AES128-GCM-SHA256.
func opensslName(iana string) string {
	s := strings.TrimPrefix(iana, "TLS_")
	s = strings.Replace(s, "_WITH_", "_", 1)
	s = strings.ReplaceAll(s, "AES_128", "AES128")
	s = strings.ReplaceAll(s, "AES_256", "AES256")
	s = strings.ReplaceAll(s, "CHACHA20_POLY1305_SHA256", "CHACHA20_POLY1305")
	return strings.ReplaceAll(s, "_", "-")
}

// setupConn is a blocking connection for the commands around a benchmark
// (AUTH, CONFIG GET, CLUSTER NODES/SLOTS), like the C tool's getRedisContext.
type setupConn struct {
	socket net.Conn
	reader *replyReader
	// unwatch stops closing the socket when the run's ctx ends, which is how a
	// signal ends a set-up command waiting on a silent server.
	unwatch func() bool
}

// openSetupConn connects and authenticates with auth (the AUTH command, nil
// for none). Errors are the C tool's messages.
func openSetupConn(ctx context.Context, d *dialer, ep endpoint, auth []string) (*setupConn, error) {
	c, err := d.dial(ctx, ep)
	if err != nil {
		return nil, err
	}
	s := &setupConn{socket: c, reader: newReplyReader(c), unwatch: context.AfterFunc(ctx, func() { c.Close() })}
	if auth != nil {
		v, err := s.do(auth...)
		if err != nil {
			s.shut()
			return nil, fmt.Errorf("ERROR: failed to fetch reply from %s", ep)
		}
		if e, ok := v.(replyError); ok {
			s.shut()
			return nil, fmt.Errorf("Node %s replied with error:\n%s", ep, string(e))
		}
	}
	return s, nil
}

func (s *setupConn) do(args ...string) (any, error) {
	_ = s.socket.SetDeadline(time.Now().Add(connectTimeout))
	if _, err := s.socket.Write(encodeCommand(args)); err != nil {
		return nil, err
	}
	return s.reader.value()
}

func (s *setupConn) shut() {
	s.unwatch()
	s.socket.Close()
}

// serverConfig is what the report prints of a server's persistence settings.
type serverConfig struct {
	save       string
	appendonly string
}

// fetchConfig runs CONFIG GET save and appendonly. A NOAUTH error is fatal
// (returned as fatal); any other failure only means no config lines.
func fetchConfig(s *setupConn, ep endpoint) (cfg *serverConfig, fatal error) {
	var values [2]string
	for i, name := range []string{"save", "appendonly"} {
		v, err := s.do("CONFIG", "GET", name)
		if err != nil {
			return nil, nil
		}
		if e, ok := v.(replyError); ok {
			if strings.HasPrefix(string(e), "NOAUTH") {
				return nil, fmt.Errorf("Node %s replied with error:\n%s", ep, string(e))
			}
			return nil, nil
		}
		arr, ok := v.([]any)
		if !ok || len(arr) < 2 {
			return nil, nil
		}
		values[i], _ = arr[1].(string)
	}
	return &serverConfig{save: values[0], appendonly: values[1]}, nil
}
