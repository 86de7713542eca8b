package perftest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/perfclones/perfclones/internal/javaopts"
	"github.com/perfclones/perfclones/internal/jvm"
)

// How PerfTest authenticates beside a URI's user and password: SASL
// EXTERNAL (-se) with the client certificate of the JVM's default SSL
// context, which the javax.net.ssl system properties in JAVA_OPTS (passed
// to java by bin/runjava) configure; and OAuth2 (-o2uri and the rest,
// 2.19+), where the Java client's credentials provider fetches a token,
// uses it as the password and refreshes it before it expires.

// javaFailure is a failure as the Java client and PerfTest's catch-all
// report it: the exception, its causes, and the lines the client logs
// before the catch-all's, each an event without its time stamp (its
// exception on the lines after its first).
type javaFailure struct {
	e      jvm.Exception
	causes []jvm.Exception
	logged []string
}

func (f *javaFailure) Error() string { return f.e.String() }

// jvmSystemProperties are the -Dkey=value words of JAVA_OPTS, split at
// white space as the unquoted $JAVA_OPTS of bin/runjava is.
func jvmSystemProperties(javaOpts string) map[string]string {
	props := map[string]string{}
	for _, w := range strings.Fields(javaOpts) {
		if kv, ok := strings.CutPrefix(w, "-D"); ok && kv != "" {
			k, v, _ := strings.Cut(kv, "=")
			props[k] = v
		}
	}
	return props
}

// jvmTLS is the JVM's default SSL context, which PerfTest uses for its
// broker connections when any javax.net.ssl or jdk.tls system property is
// set (or with -udsc): the key store's certificate is presented to a
// broker that asks for one, and the broker's chain is checked against the
// trust store (the system's roots without one; an unreadable file trusts
// nothing, as JSSE's empty store).
type jvmTLS struct {
	set   bool
	certs []tls.Certificate
	roots *x509.CertPool // nil: the system's roots
}

// defaultSSLContextFailure is SSLContext.getDefault()'s exception when a
// store cannot be loaded, with the cause's message.
func defaultSSLContextFailure(msg string) *javaFailure {
	return &javaFailure{
		e: jvm.Exception{Class: "java.security.NoSuchAlgorithmException",
			Message: "Error constructing implementation (algorithm: Default, provider: SunJSSE, class: sun.security.ssl.SSLContextImpl$DefaultSSLContext)"},
		causes: []jvm.Exception{{Class: "java.security.KeyManagementException", Message: msg}},
	}
}

// loadJVMTLS reads the key and trust stores that the system properties
// name. PKCS12 is the JVM's default store type; PEM (a file holding the
// key and certificates, or the trusted certificates) is read too, which
// the JVM does not do.
func loadJVMTLS(props map[string]string) (jvmTLS, *javaFailure) {
	var jt jvmTLS
	for k := range props {
		if strings.HasPrefix(k, "javax.net.ssl") || strings.HasPrefix(k, "jdk.tls") {
			jt.set = true
		}
	}
	if !jt.set {
		return jt, nil
	}
	if path, ok := props["javax.net.ssl.keyStore"]; ok && path != "" && path != "NONE" {
		data, err := os.ReadFile(path)
		if err != nil {
			// JSSE's key manager reports a missing file without a message.
			return jt, defaultSSLContextFailure("")
		}
		cert, msg := keyStoreCertificate(data, props["javax.net.ssl.keyStoreType"], props["javax.net.ssl.keyStorePassword"])
		if msg != "" {
			return jt, defaultSSLContextFailure(msg)
		}
		jt.certs = []tls.Certificate{cert}
	}
	if path, ok := props["javax.net.ssl.trustStore"]; ok && path != "NONE" {
		jt.roots = x509.NewCertPool()
		data, err := os.ReadFile(path)
		if err == nil {
			if strings.EqualFold(props["javax.net.ssl.trustStoreType"], "PEM") {
				if !jt.roots.AppendCertsFromPEM(data) {
					return jt, defaultSSLContextFailure("problem accessing trust store")
				}
			} else {
				certs, err := pkcs12.DecodeTrustStore(data, props["javax.net.ssl.trustStorePassword"])
				if err != nil {
					return jt, defaultSSLContextFailure("problem accessing trust store")
				}
				for _, c := range certs {
					jt.roots.AddCert(c)
				}
			}
		}
	}
	return jt, nil
}

// keyStoreCertificate is a key store's private key and certificate chain;
// the message is the JVM's for a store it cannot read.
func keyStoreCertificate(data []byte, storeType, password string) (tls.Certificate, string) {
	if strings.EqualFold(storeType, "PEM") {
		cert, err := tls.X509KeyPair(data, data)
		if err != nil {
			return tls.Certificate{}, err.Error()
		}
		return cert, ""
	}
	key, leaf, chain, err := pkcs12.DecodeChain(data, password)
	switch {
	case errors.Is(err, pkcs12.ErrIncorrectPassword):
		return tls.Certificate{}, "keystore password was incorrect"
	case err != nil && len(data) > 0 && data[0] != 0x30:
		// Not DER at all (a PEM file, say): the JVM's parser names the
		// first byte's tag.
		return tls.Certificate{}, fmt.Sprintf("toDerInputStream rejects tag type %d", data[0])
	case err != nil:
		return tls.Certificate{}, err.Error()
	}
	cert := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	return cert, ""
}

// externalRefused is the Java client's failure when the broker does not
// offer EXTERNAL; mechanisms are the ones it offers, as it lists them.
func externalRefused(mechanisms string) *javaFailure {
	return &javaFailure{e: jvm.Exception{Class: "java.io.IOException",
		Message: "No compatible authentication mechanism found - server offered [" + mechanisms + "]"}}
}

// brokerMechanisms opens a connection of its own to addr (through TLS
// when conf is set) and reads the SASL mechanisms of the broker's
// connection.start, which amqp091-go does not keep when none matches.
func brokerMechanisms(addr string, conf *tls.Config) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if conf != nil {
		tc := tls.Client(c, conf)
		if err := tc.Handshake(); err != nil {
			return "", err
		}
		c = tc
	}
	if _, err := c.Write([]byte("AMQP\x00\x00\x09\x01")); err != nil {
		return "", err
	}
	// A method frame: type, channel, size, then class and method ids,
	// the version, the server properties (a table) and the mechanisms.
	head := make([]byte, 7)
	if _, err := io.ReadFull(c, head); err != nil {
		return "", err
	}
	size := int(head[3])<<24 | int(head[4])<<16 | int(head[5])<<8 | int(head[6])
	if head[0] != 1 || size > 1<<20 {
		return "", errors.New("not a connection.start frame")
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(c, body); err != nil {
		return "", err
	}
	long := func(at int) (int, bool) {
		if at+4 > len(body) {
			return 0, false
		}
		return int(body[at])<<24 | int(body[at+1])<<16 | int(body[at+2])<<8 | int(body[at+3]), true
	}
	tableLen, ok := long(6)
	if !ok {
		return "", errors.New("short connection.start")
	}
	at := 10 + tableLen
	n, ok := long(at)
	if !ok || at+4+n > len(body) {
		return "", errors.New("short connection.start")
	}
	return string(body[at+4 : at+4+n]), nil
}

// loginFailure is a failed connection start as the Java client reports
// it, where that differs from err's own report: a TLS alert once the
// handshake is over (which amqp091-go may report only as a closed
// connection), and a broker that does not offer EXTERNAL.
func loginFailure(err error, uri string, external bool, conf *tls.Config) error {
	u, perr := amqp.ParseURI(uri)
	if perr != nil {
		return err
	}
	addr := net.JoinHostPort(u.Host, strconv.Itoa(u.Port))
	if f := alertAfterHandshake(err, addr); f != nil {
		return f
	}
	var closed *amqp.Error
	if u.Scheme == "amqps" && errors.As(err, &closed) && closed.Code == amqp.ChannelError && !closed.Server {
		// The reader saw the alert first, and the handshake's call only
		// that the connection is gone: a second connection hears it again.
		if _, perr := brokerMechanisms(addr, conf); perr != nil {
			if f := alertAfterHandshake(perr, addr); f != nil {
				return f
			}
		}
	}
	if external && errors.Is(err, amqp.ErrSASL) {
		if u.Scheme != "amqps" {
			conf = nil
		}
		if mechanisms, merr := brokerMechanisms(addr, conf); merr == nil {
			return externalRefused(mechanisms)
		}
	}
	return err
}

// tlsAlertNames are the JSSE names of the TLS alerts a broker sends.
var tlsAlertNames = map[string]string{
	"certificate required":          "certificate_required",
	"bad certificate":               "bad_certificate",
	"unknown certificate authority": "unknown_ca",
	"unsupported certificate":       "unsupported_certificate",
	"certificate revoked":           "certificate_revoked",
	"certificate expired":           "certificate_expired",
	"certificate unknown":           "certificate_unknown",
	"access denied":                 "access_denied",
	"handshake failure":             "handshake_failure",
}

// alertAfterHandshake is the Java client's failure when the broker ends a
// TLS connection with an alert once the handshake is over, as TLS 1.3
// brokers refuse a missing or untrusted client certificate: the reading
// thread logs it, and the connection's start fails without a message. A
// nil result: err is no such alert.
func alertAfterHandshake(err error, addr string) *javaFailure {
	// amqp091-go's reader turns the alert into a frame error.
	var op *net.OpError
	var amqpErr *amqp.Error
	text := ""
	switch {
	case errors.As(err, &op) && op.Op == "remote error":
		text = op.Err.Error()
	case errors.As(err, &amqpErr):
		text, _ = strings.CutPrefix(amqpErr.Reason, "remote error: ")
	}
	name, ok := tlsAlertNames[strings.TrimPrefix(text, "tls: ")]
	if !ok {
		return nil
	}
	alert := jvm.Exception{Class: "javax.net.ssl.SSLHandshakeException", Message: "Received fatal alert: " + name}
	return &javaFailure{
		e:      jvm.Exception{Class: "java.io.IOException"},
		causes: []jvm.Exception{{Class: "com.rabbitmq.client.ShutdownSignalException", Message: "connection error"}, alert},
		logged: []string{"[AMQP Connection " + addr + "] ERROR c.r.perf.RelaxedExceptionHandler - An unexpected connection driver error occurred\n" + alert.String()},
	}
}

// oauth2Request is what PerfTest's OAuth2 flags (-o2uri and the rest) ask for.
type oauth2Request struct {
	endpoint         string // -o2uri; "" = no OAuth2
	clientID, secret string
	idSet, secretSet bool
	grantType        string   // -o2gr, client_credentials by default
	params           []string // -o2p, key=value each
}

// missing is the option PerfTest requires once -o2uri is given, as
// its MissingArgumentException names it; "" when none is missing.
func (q oauth2Request) missing() string {
	switch {
	case !q.idSet:
		return "-o2id/--oauth2-client-id is mandatory when OAuth2 is used"
	case !q.secretSet:
		return "-o2sec/--oauth2-client-secret is mandatory when OAuth2 is used"
	}
	return ""
}

// formParams are -o2p's pairs in the order the Java client sends them: it
// keeps them in a java.util.HashMap (the last value of a key wins), whose
// order is that of the keys' hash buckets. A pair without "=" throws as
// PerfTest's split does.
func (q oauth2Request) formParams() ([][2]string, *jvm.Exception) {
	values := map[string]string{}
	var keys []string
	for _, p := range q.params {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, &jvm.Exception{Class: "java.lang.ArrayIndexOutOfBoundsException", Message: "Index 1 out of bounds for length 1"}
		}
		if _, seen := values[k]; !seen {
			keys = append(keys, k)
		}
		values[k] = v
	}
	var out [][2]string
	for _, k := range javaHashMapOrder(keys) {
		out = append(out, [2]string{k, values[k]})
	}
	return out, nil
}

// javaStringHash is String.hashCode over the UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// javaHashMapOrder is the iteration order of a HashMap copied (Java 17's
// new HashMap(map)) from a map holding keys in this order: the table is
// sized for them at once, and iterated bucket by bucket, each bucket in
// insertion order.
func javaHashMapOrder(keys []string) []string {
	t := int(float32(len(keys))/0.75 + 1)
	capacity := 1
	for capacity < t {
		capacity <<= 1
	}
	buckets := make([][]string, capacity)
	for _, k := range keys {
		h := uint32(javaStringHash(k))
		i := (h ^ h>>16) & uint32(capacity-1)
		buckets[i] = append(buckets[i], k)
	}
	var out []string
	for _, b := range buckets {
		out = append(out, b...)
	}
	return out
}

// javaURLEncode is URLEncoder.encode(s, "UTF-8"): letters, digits and
// ".-*_" as they are, a space as "+", every other byte as %XX.
func javaURLEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '*', c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// latin1 is s in ISO-8859-1, '?' for what it cannot hold.
func latin1(s string) []byte {
	var out []byte
	for _, r := range s {
		if r > 0xFF {
			r = '?'
		}
		out = append(out, byte(r))
	}
	return out
}

// javaURIError is the exception new URI(s).toURL() throws for a token
// endpoint it refuses, nil for one it takes; wrapped tells whether the
// Java client wraps it (URISyntaxException and MalformedURLException) or
// lets it through (IllegalArgumentException).
func javaURIError(s string) (e *jvm.Exception, wrapped bool) {
	scheme, rest, hasScheme := strings.Cut(s, ":")
	if hasScheme && strings.ContainsAny(scheme, "/?#") {
		hasScheme, rest = false, s
	}
	if hasScheme && scheme == "" {
		return &jvm.Exception{Class: "java.net.URISyntaxException", Message: "Expected scheme name at index 0: " + s}, true
	}
	if at := firstNonScheme(scheme); hasScheme && at >= 0 {
		return &jvm.Exception{Class: "java.net.URISyntaxException", Message: fmt.Sprintf("Illegal character in scheme name at index %d: %s", at, s)}, true
	}
	start := len(s) - len(rest)
	authorityEnd := start
	if strings.HasPrefix(rest, "//") {
		authorityEnd = len(s)
		if k := strings.IndexAny(rest[2:], "/?#"); k >= 0 {
			authorityEnd = start + 2 + k
		}
	}
	component := "path"
	for i := start; i < len(s); i++ {
		c := s[i]
		switch {
		case i < authorityEnd:
			component = "authority"
		case c == '#':
			component = "fragment"
		case c == '?' && component != "fragment":
			component = "query"
		case component == "authority":
			component = "path"
		}
		if c <= ' ' || c == 0x7F || strings.IndexByte("\"<>\\^`{|}", c) >= 0 {
			return &jvm.Exception{Class: "java.net.URISyntaxException", Message: fmt.Sprintf("Illegal character in %s at index %d: %s", component, i, s)}, true
		}
	}
	if !hasScheme {
		return &jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: "URI is not absolute"}, false
	}
	if l := strings.ToLower(scheme); l != "http" && l != "https" {
		return &jvm.Exception{Class: "java.net.MalformedURLException", Message: "unknown protocol: " + l}, true
	}
	return nil, false
}

func firstNonScheme(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !(letter || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return i
		}
	}
	return -1
}

// oauth2Token is a token as the Java client keeps it: its expires_in and
// when it was received.
type oauth2Token struct {
	access     string
	expiresIn  int
	receivedAt time.Time
}

// secondsLeft is Token.getTimeBeforeExpiration in whole seconds.
func (t oauth2Token) secondsLeft(now time.Time) int64 {
	return int64(t.expiresIn) - int64(now.Sub(t.receivedAt)/time.Second)
}

// oauth2Credentials is the Java client's OAuth2 credentials provider with
// PerfTest's refresh service: the token is fetched on the first
// connection and shared by all; at 80% of its lifetime it is fetched
// again (three tries a second apart) and sent to every open connection
// with connection.update-secret.
type oauth2Credentials struct {
	endpoint, clientID, secret, grantType string
	params                                [][2]string
	client                                *http.Client
	// logLine prints a line of the client's log (stdout, time-stamped).
	logLine func(string)

	mu      sync.Mutex
	token   *oauth2Token
	conns   map[*amqp.Connection]bool
	stop    chan struct{}
	stopped bool
	// ctx ends a request in flight when the run ends; done is closed
	// when the refresh schedule (started by the first connection) is over.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// newOAuth2Credentials is the provider for q, params being its -o2p
// pairs in the order they are sent (formParams). An https endpoint gets verify's TLS settings when the JVM's default context is in
// use, else one that trusts every certificate; the host name is checked
// either way, as HttpsURLConnection does.
func newOAuth2Credentials(q oauth2Request, params [][2]string, verify *tls.Config, logLine func(string)) *oauth2Credentials {
	conf := verify
	if conf == nil {
		// The state's ServerName is empty for an IP address: the name
		// checked is the endpoint's host, as HttpsURLConnection checks it.
		host := ""
		if u, err := url.Parse(q.endpoint); err == nil {
			host = u.Hostname()
		}
		conf = &tls.Config{InsecureSkipVerify: true, //nolint:gosec // the Java client's trust-everything manager, host name checked below
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 {
					return errors.New("no certificate")
				}
				return cs.PeerCertificates[0].VerifyHostname(host)
			}}
	}
	transport := &http.Transport{
		Proxy:               nil, // the JVM takes proxies from its own properties only
		DialContext:         (&net.Dialer{Timeout: 60 * time.Second}).DialContext,
		TLSClientConfig:     conf,
		DisableCompression:  true,
		TLSHandshakeTimeout: 60 * time.Second,
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &oauth2Credentials{
		ctx: ctx, cancel: cancel,
		endpoint: q.endpoint, clientID: q.clientID, secret: q.secret, grantType: q.grantType, params: params,
		client: &http.Client{Transport: transport, Timeout: 120 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		logLine: logLine, conns: map[*amqp.Connection]bool{}, stop: make(chan struct{}),
	}
}

// tokenFailure is OAuthTokenManagementException, with its cause.
func tokenFailure(msg string, cause *jvm.Exception) *javaFailure {
	f := &javaFailure{e: jvm.Exception{Class: "com.rabbitmq.client.impl.OAuthTokenManagementException", Message: msg}}
	if cause != nil {
		f.causes = []jvm.Exception{*cause}
	}
	return f
}

// ioCause is the java.net exception of a failed HTTP exchange.
func ioCause(err error) *jvm.Exception {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &dns):
		return &jvm.Exception{Class: "java.net.UnknownHostException", Message: dns.Name}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &jvm.Exception{Class: "java.net.ConnectException", Message: "Connection refused"}
	case errors.As(err, &op) && op.Op == "dial" && op.Timeout():
		return &jvm.Exception{Class: "java.net.SocketTimeoutException", Message: "Connect timed out"}
	case errors.As(err, &op) && op.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
		return &jvm.Exception{Class: "java.net.SocketTimeoutException", Message: "Read timed out"}
	case strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "x509:"):
		return &jvm.Exception{Class: "javax.net.ssl.SSLHandshakeException", Message: err.Error()}
	}
	return &jvm.Exception{Class: "java.io.IOException", Message: err.Error()}
}

// fetch is one token request, as the Java client makes it: a form POST
// with the client id and secret as basic authentication.
func (c *oauth2Credentials) fetch() (*oauth2Token, *javaFailure) {
	if e, wrapped := javaURIError(c.endpoint); e != nil {
		if !wrapped {
			return nil, &javaFailure{e: *e}
		}
		return nil, tokenFailure("Error while retrieving OAuth 2 token", e)
	}
	form := []string{javaURLEncode("grant_type") + "=" + javaURLEncode(c.grantType)}
	for _, kv := range c.params {
		form = append(form, javaURLEncode(kv[0])+"="+javaURLEncode(kv[1]))
	}
	body := strings.Join(form, "&")
	u, err := url.Parse(c.endpoint)
	if err != nil {
		return nil, tokenFailure("Error while retrieving OAuth 2 token", &jvm.Exception{Class: "java.net.URISyntaxException", Message: err.Error()})
	}
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, u.String(), strings.NewReader(body))
	if err != nil {
		return nil, tokenFailure("Error while retrieving OAuth 2 token", &jvm.Exception{Class: "java.net.MalformedURLException", Message: err.Error()})
	}
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString(latin1(c.clientID+":"+c.secret)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Charset", "UTF-8")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Cache-Control", "no-cache")
	req.Header.Set("Pragma", "no-cache")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, tokenFailure("Error while retrieving OAuth 2 token", ioCause(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, tokenFailure(fmt.Sprintf("HTTP request for token retrieval did not return 200 response code: %d", resp.StatusCode), nil)
	}
	contentType := resp.Header.Get("Content-Type")
	if !strings.Contains(strings.ToLower(contentType), "json") {
		if contentType == "" {
			contentType = "null"
		}
		return nil, tokenFailure("HTTP request for token retrieval is not JSON: "+contentType, nil)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, tokenFailure("Error while retrieving OAuth 2 token", ioCause(err))
	}
	return parseOAuth2Token(data, time.Now())
}

// parseOAuth2Token reads access_token and expires_in as PerfTest's Gson
// parser does (expires_in a number, cut to an int; access_token any value,
// as text).
func parseOAuth2Token(data []byte, now time.Time) (*oauth2Token, *javaFailure) {
	parsing := func(cause jvm.Exception) *javaFailure {
		return tokenFailure("Error while parsing OAuth 2 token", &cause)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, parsing(jvm.Exception{Class: "com.google.gson.JsonSyntaxException", Message: err.Error()})
	}
	exp, ok := m["expires_in"]
	if !ok || exp == nil {
		return nil, parsing(jvm.Exception{Class: "java.lang.NullPointerException",
			Message: `Cannot invoke "java.lang.Number.intValue()" because the return value of "java.util.Map.get(Object)" is null`})
	}
	n, ok := exp.(float64)
	if !ok {
		return nil, parsing(jvm.Exception{Class: "java.lang.ClassCastException",
			Message: fmt.Sprintf("class %s cannot be cast to class java.lang.Number", gsonClass(exp))})
	}
	access, ok := m["access_token"]
	if !ok || access == nil {
		return nil, parsing(jvm.Exception{Class: "java.lang.NullPointerException",
			Message: `Cannot invoke "Object.toString()" because the return value of "java.util.Map.get(Object)" is null`})
	}
	text, isText := access.(string)
	if !isText {
		raw, _ := json.Marshal(access)
		text = string(raw)
	}
	return &oauth2Token{access: text, expiresIn: int(jvm.DoubleToInt(n)), receivedAt: now}, nil
}

func gsonClass(v any) string {
	switch v.(type) {
	case string:
		return "java.lang.String"
	case bool:
		return "java.lang.Boolean"
	case []any:
		return "java.util.ArrayList"
	}
	return "com.google.gson.internal.LinkedTreeMap"
}

// password is the token to log in with: fetched on first use, then the
// latest refreshed one (an expired one too, as the Java client does when
// its refreshes fail). The user name that goes with it is "".
func (c *oauth2Credentials) password() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == nil {
		t, f := c.fetch()
		if f != nil {
			return "", f
		}
		c.token = t
	}
	return c.token.access, nil
}

// tokenLogin is an OAuth2 connection's SASL login. amqp091-go asks for
// its response once the broker's connection.start has come, which is when
// the Java client asks its provider for the token (its socket connected,
// TLS done): a broker that cannot be reached fails first, as there. A
// token that cannot be had closes conn, which ends the handshake, and is
// err. With -se the token is fetched all the same, and EXTERNAL sent.
type tokenLogin struct {
	creds    *oauth2Credentials
	external bool
	conn     net.Conn
	err      error
}

func (l *tokenLogin) Mechanism() string {
	if l.external {
		return "EXTERNAL"
	}
	return "PLAIN"
}

// Response is PLAIN's: no authorization id, the user "" and the token.
func (l *tokenLogin) Response() string {
	token, err := l.creds.password()
	if err != nil {
		l.err = err
		if l.conn != nil {
			_ = l.conn.Close()
		}
		return ""
	}
	if l.external {
		return ""
	}
	return "\x00\x00" + token
}

// register adds an open connection to those a refreshed token is sent to;
// the first one starts the refresh schedule.
func (c *oauth2Credentials) register(conn *amqp.Connection) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	c.conns[conn] = true
	if c.done == nil && c.token != nil {
		done := make(chan struct{})
		c.done = done
		delay := refreshDelay(c.token.secondsLeft(time.Now()))
		go func() {
			defer close(done)
			c.refreshLoop(delay)
		}()
	}
}

// refreshDelay is the refresh service's ratio strategy: 80% of the
// seconds left, in whole seconds (none once expired).
func refreshDelay(secondsLeft int64) time.Duration {
	d := int64(float64(secondsLeft) * 0.8)
	if d < 0 {
		d = 0
	}
	return time.Duration(d) * time.Second
}

// refreshLogger is the refresh service's logger and thread as logback
// prints them (the pool is the third the JVM makes in PerfTest).
const refreshLogger = "[pool-3-thread-1] WARN  c.r.c.i.DefaultCredentialsRefreshService - "

func (c *oauth2Credentials) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.stop:
		return false
	case <-t.C:
		return true
	}
}

func (c *oauth2Credentials) refreshLoop(delay time.Duration) {
	for c.wait(delay) {
		var fresh *oauth2Token
		for attempt := 0; attempt < 3; attempt++ {
			t, f := c.fetch()
			if f == nil {
				fresh = t
				break
			}
			select {
			case <-c.stop:
				return
			default:
			}
			msg := f.e.Message
			if msg == "" {
				msg = "null"
			}
			c.logLine(time.Now().Format("15:04:05.000") + " " + refreshLogger + "Error while trying to refresh token: " + msg)
			if !c.wait(time.Second) {
				return
			}
		}
		c.mu.Lock()
		if fresh == nil {
			c.mu.Unlock()
			c.logLine(time.Now().Format("15:04:05.000") + " " + refreshLogger + "Token refresh failed after retry, aborting callbacks")
		} else {
			c.token = fresh
			conns := make([]*amqp.Connection, 0, len(c.conns))
			for conn := range c.conns {
				conns = append(conns, conn)
			}
			c.mu.Unlock()
			for _, conn := range conns {
				if conn.IsClosed() {
					c.forget(conn)
				} else if err := conn.UpdateSecret(fresh.access, "Refresh scheduled by client"); err != nil {
					// The broker closes a connection whose new secret it
					// refuses; the client logs it and drops the connection.
					c.logLine(time.Now().Format("15:04:05.000") + " [pool-3-thread-1] WARN  c.rabbitmq.client.impl.AMQConnection - Error while trying to update secret: connection error. Connection has been closed.")
					c.forget(conn)
				}
			}
		}
		c.mu.Lock()
		delay = refreshDelay(c.token.secondsLeft(time.Now()))
		c.mu.Unlock()
	}
}

func (c *oauth2Credentials) forget(conn *amqp.Connection) {
	c.mu.Lock()
	delete(c.conns, conn)
	c.mu.Unlock()
}

// close ends the refresh schedule, a request in flight too, and waits
// for it: the run is over, and nothing is printed after its last line.
func (c *oauth2Credentials) close() {
	c.mu.Lock()
	if !c.stopped {
		c.stopped = true
		close(c.stop)
		c.cancel()
	}
	done := c.done
	c.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
	}
}

// fullUsage is the usage PerfTest prints after a ParseException: every
// option of the release, the metrics ones too.
func fullUsage(d *diff) string {
	all := append(append([]javaopts.CommonsOption{}, d.optionTable...), d.metricsTable...)
	return (&javaopts.CommonsParser{Options: all}).Help("<program>")
}
