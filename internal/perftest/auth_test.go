package perftest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/testenv"
)

// The expected texts below are what PerfTest 2.22.1 (the jar, through
// scripts/perftest-tool) printed for the same command lines, stack frames
// left out and log times masked.

// tokenRequest is one request a token endpoint of the tests received.
type tokenRequest struct {
	method, uri string
	header      http.Header
	body        string
}

// tokenEndpoint is a loopback OAuth2 token endpoint that records what it
// is sent and answers with reply.
type tokenEndpoint struct {
	*httptest.Server
	mu       sync.Mutex
	requests []tokenRequest
}

func startTokenEndpoint(t *testing.T, reply func(w http.ResponseWriter)) *tokenEndpoint {
	t.Helper()
	te := &tokenEndpoint{}
	te.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		te.mu.Lock()
		te.requests = append(te.requests, tokenRequest{method: r.Method, uri: r.RequestURI, header: r.Header.Clone(), body: string(body)})
		te.mu.Unlock()
		reply(w)
	}))
	t.Cleanup(te.Close)
	return te
}

func (te *tokenEndpoint) received() []tokenRequest {
	te.mu.Lock()
	defer te.mu.Unlock()
	return append([]tokenRequest(nil), te.requests...)
}

// signedToken is a JWT the private node trusts (HS256 with authKey) for
// every resource of its default virtual host, expiring in ttl.
func signedToken(ttl time.Duration) string {
	enc := func(v any) string {
		data, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(data)
	}
	now := time.Now()
	head := enc(map[string]any{"alg": "HS256", "typ": "JWT", "kid": authKeyID})
	claims := enc(map[string]any{"sub": "perftest", "aud": []string{authResource}, "iat": now.Unix(), "exp": now.Add(ttl).Unix(),
		"scope": []string{authResource + ".configure:*/*", authResource + ".write:*/*", authResource + ".read:*/*"}})
	mac := hmac.New(sha256.New, []byte(authKey))
	mac.Write([]byte(head + "." + claims))
	return head + "." + claims + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func jsonReply(status int, body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func closedEndpoint(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr + "/token"
}

// TestOAuth2TokenRequestAndErrors: the token request is the Java
// client's (a form POST, the client as basic authentication, -o2p in
// HashMap order), made once the broker has answered (one that cannot be
// reached fails first), and a refused, unreachable or malformed endpoint
// fails as the jar does (the shared node is reached, and never logged in to).
func TestOAuth2TokenRequestAndErrors(t *testing.T) {
	broker := testenv.RabbitMQ(t).URI
	down := "amqp://" + strings.TrimSuffix(strings.TrimPrefix(closedEndpoint(t), "http://"), "/token")
	refused := startTokenEndpoint(t, jsonReply(401, `{"error":"unauthorized"}`))
	html := startTokenEndpoint(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html></html>")
	})
	// An https endpoint: the Java client trusts any certificate for it
	// (the host name is still checked) unless the JVM's default context
	// is in use.
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { jsonReply(401, "{}")(w) }))
	t.Cleanup(secure.Close)
	// The usage after a parse error, as the jar prints it.
	jarUsage := ""
	for _, oc := range readErrorsOracle(t) {
		if oc.release == "2.22" && strings.HasPrefix(oc.stderr, "Parsing failed. Reason: ") {
			jarUsage = oc.stdout
			break
		}
	}
	if !strings.HasPrefix(jarUsage, "usage: <program>\n") {
		t.Fatalf("no 2.22 usage in the errors oracle: %q", jarUsage)
	}
	caught := func(lines ...string) string {
		return "HH:MM:SS.mmm [main] ERROR com.rabbitmq.perf.PerfTest - Main thread caught exception\n" + strings.Join(lines, "\n") + "\n"
	}
	tokenErr := "com.rabbitmq.client.impl.OAuthTokenManagementException: "
	cases := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"broker unreachable", []string{"-h", down, "-o2uri", refused.URL, "-o2id", "a", "-o2sec", "b"}, 1,
			caught("java.net.ConnectException: Connection refused", "test stopped"),
			"Main thread caught exception: java.net.ConnectException: Connection refused\n"},
		{"refused", []string{"-o2uri", refused.URL + "/token/path?x=1", "-o2id", "my-client", "-o2sec", "s3cr:et é",
			"-o2p", "orgId=12 34", "-o2p", "b=~*x", "-o2p", "a=1=2"}, 1,
			caught(tokenErr+"HTTP request for token retrieval did not return 200 response code: 401", "test stopped"),
			"Main thread caught exception: " + tokenErr + "HTTP request for token retrieval did not return 200 response code: 401\n"},
		{"https", []string{"-o2uri", secure.URL + "/token", "-o2id", "a", "-o2sec", "b"}, 1,
			caught(tokenErr+"HTTP request for token retrieval did not return 200 response code: 401", "test stopped"),
			"Main thread caught exception: " + tokenErr + "HTTP request for token retrieval did not return 200 response code: 401\n"},
		{"not json", []string{"-o2uri", html.URL + "/token", "-o2id", "a", "-o2sec", "b"}, 1,
			caught(tokenErr+"HTTP request for token retrieval is not JSON: text/html", "test stopped"),
			"Main thread caught exception: " + tokenErr + "HTTP request for token retrieval is not JSON: text/html\n"},
		{"unreachable", []string{"-o2uri", closedEndpoint(t), "-o2id", "a", "-o2sec", "b"}, 1,
			caught(tokenErr+"Error while retrieving OAuth 2 token", "Caused by: java.net.ConnectException: Connection refused", "test stopped"),
			"Main thread caught exception: " + tokenErr + "Error while retrieving OAuth 2 token\n"},
		{"space in path", []string{"-o2uri", "http://127.0.0.1:18783/to ken", "-o2id", "a", "-o2sec", "b"}, 1,
			caught(tokenErr+"Error while retrieving OAuth 2 token", "Caused by: java.net.URISyntaxException: Illegal character in path at index 25: http://127.0.0.1:18783/to ken", "test stopped"),
			"Main thread caught exception: " + tokenErr + "Error while retrieving OAuth 2 token\n"},
		{"unknown protocol", []string{"-o2uri", "foo://x/token", "-o2id", "a", "-o2sec", "b"}, 1,
			caught(tokenErr+"Error while retrieving OAuth 2 token", "Caused by: java.net.MalformedURLException: unknown protocol: foo", "test stopped"),
			"Main thread caught exception: " + tokenErr + "Error while retrieving OAuth 2 token\n"},
		{"relative", []string{"-o2uri", "token", "-o2id", "a", "-o2sec", "b"}, 1,
			caught("java.lang.IllegalArgumentException: URI is not absolute", "test stopped"),
			"Main thread caught exception: java.lang.IllegalArgumentException: URI is not absolute\n"},
		{"parameter without =", []string{"-o2uri", refused.URL, "-o2id", "a", "-o2sec", "b", "-o2p", "foo"}, 1,
			caught("java.lang.ArrayIndexOutOfBoundsException: Index 1 out of bounds for length 1"),
			"Main thread caught exception: java.lang.ArrayIndexOutOfBoundsException: Index 1 out of bounds for length 1\n"},
		{"no client id", []string{"-o2uri", refused.URL, "-o2sec", "b"}, 0,
			jarUsage, "Parsing failed. Reason: -o2id/--oauth2-client-id is mandatory when OAuth2 is used\n"},
		{"no client secret", []string{"-o2uri", refused.URL, "-o2id", "a"}, 0,
			jarUsage, "Parsing failed. Reason: -o2sec/--oauth2-client-secret is mandatory when OAuth2 is used\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, stdout, stderr := runMain(t, "2.22", append(append([]string{}, tc.args...), "-h", broker, "-z", "2"), nil)
			stdout = logTimeRe.ReplaceAllString(stdout, "HH:MM:SS.mmm ")
			if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
				t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	reqs := refused.received()
	if len(reqs) != 1 {
		t.Fatalf("the endpoint got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	want := map[string]string{
		"Authorization": "Basic bXktY2xpZW50OnMzY3I6ZXQg6Q==", // "my-client:s3cr:et é" in ISO-8859-1
		"Content-Type":  "application/x-www-form-urlencoded",
		"Accept":        "application/json",
		"Charset":       "UTF-8",
	}
	for k, v := range want {
		if got := r.header.Get(k); got != v {
			t.Errorf("header %s: %q, want %q", k, got, v)
		}
	}
	if r.method != "POST" || r.uri != "/token/path?x=1" || r.body != "grant_type=client_credentials&a=1%3D2&b=%7E*x&orgId=12+34" {
		t.Errorf("request %s %s %q", r.method, r.uri, r.body)
	}
	// 2.18 has no OAuth2: its options stay accepted and named as not acted
	// on (-o2uri itself is -o with the value "2uri" there).
	if _, _, stderr := runMain(t, "2.18", []string{"-h", down, "--oauth2-token-endpoint", refused.URL, "-z", "1"}, nil); !strings.Contains(stderr, "does not act on -o2uri") {
		t.Errorf("2.18 stderr: %q", stderr)
	}
}

func TestJavaClientPieces(t *testing.T) {
	for _, tc := range []struct{ keys, want []string }{
		{[]string{"orgId", "b", "a"}, []string{"a", "b", "orgId"}}, // as the jar sent them
		{[]string{"z"}, []string{"z"}},
		{nil, nil},
	} {
		if got := javaHashMapOrder(tc.keys); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("javaHashMapOrder(%q) = %q, want %q", tc.keys, got, tc.want)
		}
	}
	for in, want := range map[string]string{"a b": "a+b", "~*._-": "%7E*._-", "é=&": "%C3%A9%3D%26"} {
		if got := javaURLEncode(in); got != want {
			t.Errorf("javaURLEncode(%q) = %q, want %q", in, got, want)
		}
	}
	if h := javaStringHash("orgId"); h != 106008351 {
		t.Errorf(`"orgId".hashCode() = %d`, h)
	}
	props := jvmSystemProperties("-Xmx256m -Djavax.net.ssl.keyStore=/k.p12  -Dflag -Da=b=c")
	if props["javax.net.ssl.keyStore"] != "/k.p12" || props["a"] != "b=c" || len(props) != 3 {
		t.Errorf("jvmSystemProperties: %v", props)
	}
	for secs, want := range map[int64]time.Duration{10: 8 * time.Second, 5: 4 * time.Second, 1: 0, -3: 0} {
		if got := refreshDelay(secs); got != want {
			t.Errorf("refreshDelay(%d) = %v, want %v", secs, got, want)
		}
	}
	for _, tc := range []struct{ body, want string }{
		{`{"access_token":"abc","expires_in":59.9}`, ""},
		{`{"access_token":"abc"}`, `Cannot invoke "java.lang.Number.intValue()"`},
		{`{"expires_in":5}`, `Cannot invoke "Object.toString()"`},
	} {
		tok, f := parseOAuth2Token([]byte(tc.body), time.Now())
		switch {
		case tc.want == "" && (f != nil || tok.access != "abc" || tok.expiresIn != 59):
			t.Errorf("%s: %+v %v", tc.body, tok, f)
		case tc.want != "" && (f == nil || f.e.Message != "Error while parsing OAuth 2 token" || !strings.HasPrefix(f.causes[0].Message, tc.want)):
			t.Errorf("%s: %v", tc.body, f)
		}
	}
}

// TestAuthAgainstNode logs in as PerfTest does against a private node
// with rabbitmq_auth_mechanism_ssl (its TLS listener requires a client
// certificate) and rabbitmq_auth_backend_oauth2: SASL EXTERNAL with the
// key store JAVA_OPTS names, and OAuth2 tokens that expire and are
// refreshed during the run. Where the login must not use the URI's user
// and password, they are wrong ones.
func TestAuthAgainstNode(t *testing.T) {
	certs := testenv.TLSCerts(t)
	if certs.Truststore == "" {
		t.Fatal("keytool did not make the trust stores")
	}
	node := startAuthNode(t, certs)
	tlsURI, _ := url.Parse(node.TLSURI)
	plainURI, _ := url.Parse(node.URI)
	stores := func(keyStore bool) string {
		opts := "-Xmx256m -Djavax.net.ssl.trustStore=" + certs.Truststore + " -Djavax.net.ssl.trustStorePassword=" + certs.StorePassword
		if keyStore {
			opts += " -Djavax.net.ssl.keyStore=" + certs.ClientKeystore + " -Djavax.net.ssl.keyStorePassword=" + certs.StorePassword + " -Djavax.net.ssl.keyStoreType=PKCS12"
		}
		return opts
	}
	trustAll := "HH:MM:SS.mmm [main] WARN  c.r.c.TrustEverythingTrustManager - SECURITY ALERT: this trust manager trusts every certificate, effectively disabling peer verification. This is convenient for local development but offers no protection against man-in-the-middle attacks. Please see https://www.rabbitmq.com/ssl.html to learn more about peer certificate verification.\n"
	noCert := trustAll +
		"HH:MM:SS.mmm [AMQP Connection " + tlsURI.Host + "] ERROR c.r.perf.RelaxedExceptionHandler - An unexpected connection driver error occurred\n" +
		"javax.net.ssl.SSLHandshakeException: Received fatal alert: certificate_required\n" +
		"HH:MM:SS.mmm [main] ERROR com.rabbitmq.perf.PerfTest - Main thread caught exception\n" +
		"java.io.IOException: null\n" +
		"Caused by: com.rabbitmq.client.ShutdownSignalException: connection error\n" +
		"Caused by: javax.net.ssl.SSLHandshakeException: Received fatal alert: certificate_required\n" +
		"test stopped\n"
	noExternal := "java.io.IOException: No compatible authentication mechanism found - server offered [AMQPLAIN PLAIN]"
	cases := []struct {
		name, rel, javaOpts string
		args                []string
		code                int
		// stdout is the whole output when it is an error's, else a line
		// it holds; stderr the whole of it.
		stdout, stderr string
	}{
		{"external", "2.22", stores(true), []string{"-h", "amqps://nobody:wrong@" + tlsURI.Host, "-se", "-C", "200", "-z", "10"}, 0,
			"test stopped (Producer reached message limit)", ""},
		{"external 2.18", "2.18", stores(true), []string{"-h", "amqps://nobody:wrong@" + tlsURI.Host, "-se", "-C", "200", "-z", "10", "-e", "direct-2.18"}, 0,
			"test stopped (Producer reached message limit)", ""},
		{"external without a key store", "2.22", stores(false), []string{"-h", "amqps://" + tlsURI.Host, "-se", "-C", "200"}, 1,
			noCert, "Main thread caught exception: java.io.IOException\n"},
		{"external without TLS", "2.22", "", []string{"-h", "amqp://" + plainURI.Host, "-se", "-C", "200"}, 1,
			"HH:MM:SS.mmm [main] ERROR com.rabbitmq.perf.PerfTest - Main thread caught exception\n" + noExternal + "\ntest stopped\n",
			"Main thread caught exception: " + noExternal + "\n"},
		{"key store password", "2.22", "-Djavax.net.ssl.keyStore=" + certs.ClientKeystore + " -Djavax.net.ssl.keyStorePassword=wrong",
			[]string{"-h", "amqps://" + tlsURI.Host, "-se"}, 1,
			"HH:MM:SS.mmm [main] ERROR com.rabbitmq.perf.PerfTest - Main thread caught exception\n" +
				"java.security.NoSuchAlgorithmException: Error constructing implementation (algorithm: Default, provider: SunJSSE, class: sun.security.ssl.SSLContextImpl$DefaultSSLContext)\n" +
				"Caused by: java.security.KeyManagementException: keystore password was incorrect\n",
			"Main thread caught exception: java.security.NoSuchAlgorithmException: Error constructing implementation (algorithm: Default, provider: SunJSSE, class: sun.security.ssl.SSLContextImpl$DefaultSSLContext)\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, tc.rel, tc.args, map[string]string{"JAVA_OPTS": tc.javaOpts})
			stdout = logTimeRe.ReplaceAllString(stdout, "HH:MM:SS.mmm ")
			okOut := stdout == tc.stdout || tc.code == 0 && strings.Contains(stdout, tc.stdout+"\n")
			if code != tc.code || !okOut || stderr != tc.stderr {
				t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
		})
	}

	t.Run("oauth2 token refreshed", func(t *testing.T) {
		// A token lives 3 s: PerfTest fetches it again every 2 s (80%) and
		// sends it to each connection, which the node closes otherwise.
		te := startTokenEndpoint(t, func(w http.ResponseWriter) {
			jsonReply(200, fmt.Sprintf(`{"access_token":%q,"token_type":"bearer","expires_in":3}`, signedToken(3*time.Second)))(w)
		})
		code, stdout, stderr := runMain(t, "2.22", []string{"-h", "amqp://nobody:wrong@" + plainURI.Host, "-o2uri", te.URL + "/token",
			"-o2id", "perftest", "-o2sec", "secret", "-r", "50", "-z", "9"}, nil)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "test stopped (Reached time limit)\n") {
			t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		// The average is over the run from the producer's start, so it may
		// read 49 as well as 50 (-r 50).
		if m := receivingAvg.FindStringSubmatch(stdout); m == nil {
			t.Errorf("no receiving rate:\n%s", stdout)
		} else if v, _ := strconv.ParseFloat(m[1], 64); v < 45 || v > 55 {
			t.Errorf("the consumer did not receive at the producer's rate (-r 50):\n%s", stdout)
		}
		reqs := te.received()
		if len(reqs) < 4 || len(reqs) > 5 {
			t.Errorf("%d token requests in 9 s, want 4 or 5 (at 0, 2, 4, 6 and 8 s)", len(reqs))
		}
		for _, r := range reqs {
			if r.body != "grant_type=client_credentials" || r.header.Get("Authorization") != "Basic cGVyZnRlc3Q6c2VjcmV0" {
				t.Errorf("request %q %q", r.body, r.header.Get("Authorization"))
			}
		}
	})

	t.Run("oauth2 refreshed token refused", func(t *testing.T) {
		// The refresh is sent to the connections (connection.update-secret):
		// the node refuses a token that is no JWT, and closes them.
		var mu sync.Mutex
		served := 0
		te := startTokenEndpoint(t, func(w http.ResponseWriter) {
			mu.Lock()
			served++
			first := served == 1
			mu.Unlock()
			if first {
				jsonReply(200, fmt.Sprintf(`{"access_token":%q,"expires_in":2}`, signedToken(2*time.Second)))(w)
				return
			}
			jsonReply(200, `{"access_token":"not-a-jwt","expires_in":60}`)(w)
		})
		code, stdout, stderr := runMain(t, "2.22", []string{"-h", "amqp://" + plainURI.Host, "-o2uri", te.URL, "-o2id", "a", "-o2sec", "b",
			"-r", "10", "-z", "3", "-cri", "1", "-e", "direct-refused"}, nil)
		warn := " [pool-3-thread-1] WARN  c.rabbitmq.client.impl.AMQConnection - Error while trying to update secret: connection error. Connection has been closed.\n"
		if code != 0 || strings.Count(stdout, warn) != 3 || !strings.Contains(stderr, "New secret was refused") {
			t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
	})

	t.Run("oauth2 token refused by the broker", func(t *testing.T) {
		te := startTokenEndpoint(t, jsonReply(200, `{"access_token":"not-a-jwt","expires_in":60}`))
		code, stdout, stderr := runMain(t, "2.22", []string{"-h", "amqp://" + plainURI.Host, "-o2uri", te.URL, "-o2id", "a", "-o2sec", "b", "-z", "2"}, nil)
		refused := "com.rabbitmq.client.AuthenticationFailureException: ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile."
		want := "HH:MM:SS.mmm [main] ERROR com.rabbitmq.perf.PerfTest - Main thread caught exception\n" + refused + "\ntest stopped\n"
		if stdout = logTimeRe.ReplaceAllString(stdout, "HH:MM:SS.mmm "); code != 1 || stdout != want || stderr != "Main thread caught exception: "+refused+"\n" {
			t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
	})
}

var receivingAvg = regexp.MustCompile(`receiving rate avg: ([0-9.]+) msg/s`)
