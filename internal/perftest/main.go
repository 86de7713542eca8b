// Package perftest is RabbitMQ PerfTest (com.rabbitmq.perf.PerfTest) on
// amqp091-go: the options of 2.18.0 or 2.22.1 (PERFCLONES_PERFTEST_VERSION),
// their help and errors, the same topology and message layout, and the
// release's lines on stdout.
package perftest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/clock"
	"github.com/perfclones/perfclones/internal/jvm"
	"github.com/perfclones/perfclones/internal/latency"
	"github.com/perfclones/perfclones/internal/lineout"
	"github.com/perfclones/perfclones/internal/result"
)

// logTime is logback's %d{HH:mm:ss.SSS}.
func logTime() string { return time.Now().Format("15:04:05.000") }

// Main is com.rabbitmq.perf.PerfTest's main: `perftest ARGS...`.
func Main(ctx context.Context, args []string, sys cli.IO) int {
	rel, err := releases.Select(sys.Getenv)
	if err != nil {
		return cli.Finish(sys, err)
	}
	d := &rel.Diff
	run := result.New("perftest", rel.Name, args)
	code := mainRun(ctx, d, args, sys, run)
	ending := "completed"
	if c, ok := cli.Interrupted(ctx); ok {
		ending, code = "interrupted", c
	} else if code != 0 {
		ending = "failed"
	}
	run.Finish(ending, code, nil)
	if len(run.Tests) > 0 || ending != "completed" {
		run.Save(sys.Getenv, sys.Stderr)
	}
	return code
}

// mainThreadException is PerfTest's catch-all: the exception on stderr,
// a logback ERROR line and the exception on stdout, exit 1; 2.19+ also
// print "test stopped" when the failure came after setup began.
//
// logback prints an exception without a message as "Class: null".
func mainThreadException(d *diff, e jvm.Exception, afterSetup bool, clock func() string, causes ...jvm.Exception) *cli.Exit {
	logged := func(x jvm.Exception) string {
		if x.Message == "" {
			return x.Class + ": null"
		}
		return x.String()
	}
	out := clock() + " [main] ERROR com.rabbitmq.perf.PerfTest - Main thread caught exception\n" + logged(e) + "\n"
	for _, c := range causes {
		out += "Caused by: " + logged(c) + "\n"
	}
	if afterSetup && d.metricsRefactor {
		out += "test stopped\n"
	}
	return &cli.Exit{Code: 1, Stderr: "Main thread caught exception: " + e.String() + "\n", Stdout: out}
}

// strerror is the C library's text of an I/O error, as Java's messages
// carry it ("No such file or directory").
func strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return err.Error()
}

// serversUp waits up to timeout seconds, trying every second the brokers
// of uris not yet reached, until limit of them (-sul; -1 = all) have
// accepted a TCP connection. A limit no count of reached brokers equals (0,
// or more than there are) waits the whole timeout. The run then uses every
// URI still, the unreached ones too, as PerfTest's connections do.
func serversUp(ctx context.Context, uris []string, timeout, limit int) bool {
	if limit == -1 {
		limit = len(uris)
	}
	deadline := time.Now().Add(time.Duration(timeout) * time.Second)
	untried := append([]string{}, uris...)
	reached := 0
	for {
		var left []string
		for _, u := range untried {
			addr := "localhost:5672"
			if pu, err := url.Parse(u); err == nil && pu.Host != "" {
				addr = pu.Host
				if pu.Port() == "" {
					port := "5672"
					if strings.EqualFold(pu.Scheme, "amqps") {
						port = "5671"
					}
					addr = net.JoinHostPort(pu.Hostname(), port)
				}
			}
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				left = append(left, u)
				continue
			}
			_ = c.Close()
			if reached++; reached == limit {
				return true
			}
		}
		untried = left
		if time.Now().Add(time.Second).After(deadline) {
			return false
		}
		if clock.Sleep(ctx, time.Second) != nil {
			return false
		}
	}
}

// javaURIs checks the broker URIs as java.net.URI and the Java client's
// ConnectionFactory.setUri do, in that order, and rewrites in place the
// forms Java accepts and Go's URL parser would not: a non-numeric port
// (Java then falls back to localhost and the default port) and non-ASCII
// bytes (percent-encoded, which decode to the same user and password).
func javaURIs(uris []string) *jvm.Exception {
	if len(uris) == 0 {
		return &jvm.Exception{Class: "java.lang.ArrayIndexOutOfBoundsException", Message: "Index 0 out of bounds for length 0"}
	}
	for i, u := range uris {
		for j := 0; j < len(u); j++ {
			if u[j] == '%' && (j+2 >= len(u) || !isHex(u[j+1]) || !isHex(u[j+2])) {
				return &jvm.Exception{Class: "java.net.URISyntaxException", Message: fmt.Sprintf("Malformed escape pair at index %d: %s", j, u)}
			}
		}
		scheme, rest, ok := strings.Cut(u, ":")
		if !ok || !javaScheme.MatchString(scheme) {
			return &jvm.Exception{Class: "java.lang.NullPointerException",
				Message: `Cannot invoke "String.toLowerCase()" because the return value of "java.net.URI.getScheme()" is null`}
		}
		if authority, ok := strings.CutPrefix(rest, "//"); ok {
			if end := strings.IndexAny(authority, "/?#"); end >= 0 {
				authority = authority[:end]
			}
			host := authority[strings.LastIndexByte(authority, '@')+1:]
			if strings.HasPrefix(host, "[") && !strings.Contains(host, "]") {
				return &jvm.Exception{Class: "java.net.URISyntaxException",
					Message: fmt.Sprintf("Expected closing bracket for IPv6 address at index %d: %s", len(u), u)}
			}
		}
		if s := strings.ToLower(scheme); s != "amqp" && s != "amqps" {
			return &jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: "Wrong scheme in AMQP URI: " + scheme}
		}
		if pu, err := url.Parse(percentNonASCII(u)); err == nil {
			if n, err := strconv.Atoi(pu.Port()); err == nil && n > 65535 {
				return &jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: fmt.Sprintf("port out of range:%d", n)}
			}
		} else if strings.Contains(err.Error(), "invalid port") {
			// A registry-based authority to java.net.URI: no host, no
			// port, no user, so the client's defaults.
			path := ""
			if authority, ok := strings.CutPrefix(rest, "//"); ok {
				if end := strings.IndexAny(authority, "/?#"); end >= 0 {
					path = authority[end:]
				}
			}
			uris[i] = scheme + "://localhost" + path
			continue
		}
		uris[i] = percentNonASCII(u)
	}
	return nil
}

var javaScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func percentNonASCII(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			fmt.Fprintf(&b, "%%%02X", s[i])
		} else {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func mainRun(ctx context.Context, d *diff, args []string, sys cli.IO, run *result.Run) int {
	o, err := parseOptions(d, args, sys.Getenv)
	if ne, ok := err.(*numberError); ok {
		err = mainThreadException(d, jvm.Exception{Class: "java.lang.NumberFormatException", Message: ne.msg}, false, logTime)
	} else if jt, ok := err.(*javaThrow); ok {
		err = mainThreadException(d, jt.e, false, logTime)
	}
	if err != nil {
		return cli.Finish(sys, err)
	}
	if n := ignoredNotice(o.ignored); n != "" {
		_, _ = sys.Stderr.Write([]byte(n))
	}
	id := o.id
	if id == "" && !o.idGiven {
		id = "test-" + time.Now().Format("150405.000")
		id = id[:11] + "-" + id[12:]
	}
	if o.queuePattern != "" {
		if _, e := javaFormatInt(o.queuePattern, o.patternFrom); e != nil {
			return cli.Finish(sys, mainThreadException(d, *e, false, logTime))
		}
	}
	p := buildPlan(d, o, id)
	out := lineout.New(sys.Stdout)
	// A TLS system property in JAVA_OPTS makes PerfTest take the JVM's
	// default SSL context, its stores loaded at once (auth.go).
	jt, failure := loadJVMTLS(jvmSystemProperties(sys.Getenv("JAVA_OPTS")))
	if failure != nil {
		return cli.Finish(sys, mainThreadException(d, failure.e, false, logTime, failure.causes...))
	}
	p.clientCerts, p.brokerRoots, p.verifyBroker = jt.certs, jt.roots, p.verifyBroker || jt.set
	if o.heartbeat < 0 || o.heartbeat > 65535 {
		set := 0
		if o.heartbeat > 65535 {
			set = 65535
		}
		out.Line(fmt.Sprintf("%s [main] WARN  c.rabbitmq.client.ConnectionFactory - Requested heartbeat must be between 0 and 65535, value has been set to %d instead of %d", logTime(), set, o.heartbeat))
		p.heartbeat = time.Duration(set) * time.Second
	}
	if e := javaURIs(p.uris); e != nil {
		return cli.Finish(sys, mainThreadException(d, *e, false, logTime))
	}
	for _, u := range p.uris {
		if len(u) > 8 && (u[:8] == "amqps://" || u[:8] == "AMQPS://") {
			out.Line(logTime() + " [main] WARN  c.r.c.TrustEverythingTrustManager - SECURITY ALERT: this trust manager trusts every certificate, effectively disabling peer verification. This is convenient for local development but offers no protection against man-in-the-middle attacks. Please see https://www.rabbitmq.com/ssl.html to learn more about peer certificate verification.")
			break
		}
	}
	if o.nioErr != nil {
		return cli.Finish(sys, mainThreadException(d, jvm.Exception{Class: "java.lang.NumberFormatException", Message: o.nioErr.(*numberError).msg}, false, logTime))
	}
	if e := nioSettings(o.nioThreads, o.nioPool); e != nil {
		return cli.Finish(sys, mainThreadException(d, *e, false, logTime))
	}
	// Then PerfTest sets the OAuth2 credentials provider up.
	if o.oauth2.endpoint != "" {
		if msg := o.oauth2.missing(); msg != "" {
			return cli.Finish(sys, &cli.Exit{Stderr: "Parsing failed. Reason: " + msg + "\n", Stdout: fullUsage(d)})
		}
		params, e := o.oauth2.formParams()
		if e != nil {
			return cli.Finish(sys, mainThreadException(d, *e, false, logTime))
		}
		var verify *tls.Config
		if p.verifyBroker {
			verify = &tls.Config{RootCAs: p.brokerRoots, Certificates: p.clientCerts}
		}
		p.oauth2 = newOAuth2Credentials(o.oauth2, params, verify, out.Line)
		defer p.oauth2.close()
	}
	// Then the socket settings: -sni's names, -tsbs and -trbs.
	for _, name := range o.serverNames {
		if e := serverNameError(name); e != nil {
			return cli.Finish(sys, mainThreadException(d, *e, false, logTime))
		}
	}
	if o.socketErr != nil {
		return cli.Finish(sys, mainThreadException(d, jvm.Exception{Class: "java.lang.NumberFormatException", Message: o.socketErr.(*numberError).msg}, false, logTime))
	}
	// PerfTest sets its metrics up here, after the connection settings
	// and before the output file.
	metrics, thrown := readMetricsSettings(o.line, args)
	if thrown != nil {
		return cli.Finish(sys, mainThreadException(d, *thrown, false, logTime))
	}
	if n := metrics.notice(); n != "" {
		_, _ = sys.Stderr.Write([]byte(n))
	}
	// The registries start once the brokers are up (2.19+: after the
	// instance synchronization), before the first connection; 2.18's
	// Prometheus endpoint starts with its set-up.
	var mx *metricsExport
	defer func() {
		if mx != nil {
			mx.close()
		}
	}()
	startRegistries := func() error {
		var causes []jvm.Exception
		var e *jvm.Exception
		if mx, e, causes = startMetrics(metrics, p, o); e != nil {
			return mainThreadException(d, *e, d.metricsRefactor, logTime, causes...)
		}
		return nil
	}
	if metrics.enabled() && !d.metricsRefactor {
		if err := startRegistries(); err != nil {
			return cli.Finish(sys, err)
		}
	}
	var csv *lineout.Writer
	if p.csvPath != "" {
		_ = os.Remove(p.csvPath)
		f, err := os.OpenFile(p.csvPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return cli.Finish(sys, mainThreadException(d, jvm.Exception{Class: "java.io.FileNotFoundException", Message: p.csvPath + " (" + strerror(err) + ")"}, false, logTime))
		}
		defer f.Close()
		csv = lineout.New(f)
	}
	if thrown = metrics.readExpected(d, o.line, o); thrown != nil {
		return cli.Finish(sys, mainThreadException(d, *thrown, true, logTime))
	}
	if o.syncTimeoutErr != nil {
		return cli.Finish(sys, mainThreadException(d, jvm.Exception{Class: "java.lang.NumberFormatException", Message: o.syncTimeoutErr.(*numberError).msg}, true, logTime))
	}
	if o.serversStartupTimeout > 0 && !serversUp(ctx, p.uris, o.serversStartupTimeout, o.serversUpLimit) {
		if ctx.Err() != nil {
			return interruptedEnding(ctx, d, out)
		}
		out.Line(fmt.Sprintf("Could not connect to broker(s) in %d second(s), exiting.", o.serversStartupTimeout))
		out.Line("test stopped")
		if !d.metricsRefactor {
			for _, l := range d.summary(p.id, p.compact, p.sh, 0, 0, 0, latencyStats{}, latencyStats{}) {
				out.Line(l)
			}
		}
		return 0
	}
	if metrics.enabled() && mx == nil {
		if err := startRegistries(); err != nil {
			return cli.Finish(sys, err)
		}
	}
	ex, err := executeWith(ctx, p, out, lineout.New(sys.Stderr).Line, csv, nil, mx)
	if ex == nil {
		return interruptedEnding(ctx, d, out)
	}
	if err != nil {
		var failure *javaFailure
		if errors.As(err, &failure) {
			ex := mainThreadException(d, failure.e, true, logTime, failure.causes...)
			logged := ""
			for _, l := range failure.logged {
				logged += logTime() + " " + l + "\n"
			}
			ex.Stdout = logged + ex.Stdout
			return cli.Finish(sys, ex)
		}
		var untrusted *untrustedBrokerError
		if errors.As(err, &untrusted) {
			// The Java client logs the failed handshake, then PerfTest's
			// catch-all reports the exception and its causes.
			ex := mainThreadException(d, untrusted.exception(), true, logTime, untrusted.causes()...)
			ex.Stdout = logTime() + " [main] ERROR c.r.client.impl.SocketFrameHandler - TLS connection failed: " + untrusted.message + "\n" + ex.Stdout
			return cli.Finish(sys, ex)
		}
		var timedOut *syncTimeoutError
		if errors.As(err, &timedOut) {
			return cli.Finish(sys, mainThreadException(d, timedOut.exception(), true, logTime, timedOut.causes()...))
		}
		e, causes := javaException(err)
		return cli.Finish(sys, mainThreadException(d, e, true, logTime, causes...))
	}
	rep, r, end, interrupted := ex.rep, ex.r, ex.end, ex.interrupted
	// One reading of the counters and histograms serves the summary and
	// the result file, so the file holds what was printed.
	totals := rep.c.final()
	run.Tests = rep.tests(end, totals)
	if interrupted && !d.metricsRefactor {
		// 2.18 prints nothing more on a signal.
		code, _ := cli.Interrupted(ctx)
		return code
	}
	out.Line(stopLine(r.reasons.snapshot()))
	for _, l := range rep.summaryLines(end, totals) {
		out.Line(l)
	}
	if interrupted {
		code, _ := cli.Interrupted(ctx)
		return code
	}
	return 0
}

// nioSettings checks -niot and -niotp as PerfTest does before it turns the
// Java client's NIO mode on: either one set (> 0) needs a positive thread
// count, -niot or else -niotp minus 2. Go has no NIO mode to switch to
// (every connection reads and writes on its own goroutines, whatever the
// thread counts), so values that pass change nothing else.
func nioSettings(threads, pool int) *jvm.Exception {
	if threads <= 0 && pool <= 0 {
		return nil
	}
	n := threads
	if n <= 0 {
		n = pool - 2
	}
	executor := pool
	if executor <= 0 {
		executor = n
	}
	if n <= 0 {
		return &jvm.Exception{Class: "java.lang.IllegalArgumentException",
			Message: fmt.Sprintf("NIO number of threads and executor must be greater than 0: %d, %d", n, executor)}
	}
	return nil
}

// brokerTLS is the TLS set-up for amqps URIs: PerfTest trusts every
// certificate, unless -udsc or a TLS system property gives it the JVM's
// default context, which checks the broker's chain against the trust
// store (roots; nil is the system's) and, like the Java client's
// useSslProtocol, not the host name. certs are the key store's, for a
// broker that asks for a client certificate.
func brokerTLS(verify bool, roots *x509.CertPool, certs []tls.Certificate) *tls.Config {
	conf := &tls.Config{InsecureSkipVerify: true, Certificates: certs} //nolint:gosec // PerfTest trusts every certificate unless -udsc
	if verify {
		conf.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error { return verifyBrokerChain(raw, roots) }
	}
	return conf
}

func verifyBrokerChain(raw [][]byte, roots *x509.CertPool) error {
	var certs []*x509.Certificate
	for _, der := range raw {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return &untrustedBrokerError{message: "PKIX path building failed: " + err.Error()}
		}
		certs = append(certs, c)
	}
	var err error
	if roots == nil {
		roots, err = x509.SystemCertPool()
	}
	if err != nil || len(certs) == 0 {
		return &untrustedBrokerError{message: pkixNoPath}
	}
	intermediates := x509.NewCertPool()
	for _, c := range certs[1:] {
		intermediates.AddCert(c)
	}
	_, err = certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates})
	var invalid x509.CertificateInvalidError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return &untrustedBrokerError{message: "PKIX path validation failed: java.security.cert.CertPathValidatorException: validity check failed", validation: true}
	}
	return &untrustedBrokerError{message: pkixNoPath}
}

const pkixNoPath = "PKIX path building failed: sun.security.provider.certpath.SunCertPathBuilderException: unable to find valid certification path to requested target"

// untrustedBrokerError is a broker certificate -udsc does not trust; its
// message is the JSSE one for the same failure.
type untrustedBrokerError struct {
	message    string
	validation bool // the chain was built but failed validation
}

func (e *untrustedBrokerError) Error() string { return e.message }

func (e *untrustedBrokerError) exception() jvm.Exception {
	return jvm.Exception{Class: "javax.net.ssl.SSLHandshakeException", Message: e.message}
}

// causes are the exceptions JSSE chains under the handshake failure.
func (e *untrustedBrokerError) causes() []jvm.Exception {
	validator := jvm.Exception{Class: "sun.security.validator.ValidatorException", Message: e.message}
	if e.validation {
		return []jvm.Exception{validator, {Class: "java.security.cert.CertPathValidatorException", Message: "validity check failed"}}
	}
	return []jvm.Exception{validator, {Class: "sun.security.provider.certpath.SunCertPathBuilderException", Message: "unable to find valid certification path to requested target"}}
}

func interruptedEnding(ctx context.Context, d *diff, out *lineout.Writer) int {
	code, _ := cli.Interrupted(ctx)
	if d.metricsRefactor {
		out.Line("test stopped")
	}
	return code
}

// execution is how one run of a plan went.
type execution struct {
	rep         *reporter
	r           *runner
	end         time.Time
	interrupted bool
}

// execute runs a plan: connections and topology, the agents, the printer
// on the release's schedule (lines to out unless the plan is quiet; every
// report also to onReport), until the time limit, the agents' limits or
// ctx's end. A nil execution means ctx ended during setup; an error, that
// setup failed.
func execute(ctx context.Context, p *plan, out *lineout.Writer, stderr func(string), csv *lineout.Writer, onReport func(intervalReport)) (*execution, error) {
	return executeWith(ctx, p, out, stderr, csv, onReport, nil)
}

// executeWith is execute with the metrics registries (nil: none) fed the
// run's counters and intervals.
func executeWith(ctx context.Context, p *plan, out *lineout.Writer, stderr func(string), csv *lineout.Writer, onReport func(intervalReport), mx *metricsExport) (*execution, error) {
	d := p.rel
	r := &runner{
		p: p, c: newCounters(), reasons: &stopReasons{}, clock: monotonic{base: time.Now()}, wall: clock.NewWall(),
		stderr: stderr, done: make(chan struct{}), started: make(chan struct{}),
		tlsConf: brokerTLS(p.verifyBroker, p.brokerRoots, p.clientCerts), stdout: out.Line,
	}
	if p.quiet {
		r.stdout = func(string) {}
	}
	// A connection's watchers (flow control, recovery) may still be
	// running when the run returns; what they say after that is dropped,
	// so that nothing is written behind the summary or into a caller's
	// stream it has taken back.
	var lateMu sync.Mutex
	ended := false
	guard := func(write func(string)) func(string) {
		return func(s string) {
			lateMu.Lock()
			defer lateMu.Unlock()
			if !ended {
				write(s)
			}
		}
	}
	defer func() { lateMu.Lock(); ended = true; lateMu.Unlock() }()
	r.stdout, r.stderr = guard(r.stdout), guard(r.stderr)
	rep := &reporter{p: p, c: r.c, out: out, csv: csv, statsStart: time.Now(), onReport: onReport, metrics: mx}
	if mx != nil {
		mx.attach(r)
	}
	if csv != nil && !d.metricsRefactor {
		csv.Line(csvHeader(p.sh))
	}
	agentCtx, stopAgents := context.WithCancel(context.Background())
	defer stopAgents()
	setupErr := make(chan error, 1)
	var agents []func(context.Context)
	startLine := out.Line
	if p.quiet {
		startLine = func(string) {}
	}
	go func() {
		a, err := r.setUp(ctx, startLine)
		agents = a
		setupErr <- err
	}()
	var err error
	select {
	case err = <-setupErr:
	case <-ctx.Done():
		r.closeAll()
		return nil, nil
	}
	if err == nil && p.instances.expected >= 2 {
		err = awaitInstances(ctx, r, out)
		if ctx.Err() != nil {
			r.closeAll()
			return nil, nil
		}
	}
	if err != nil {
		r.closeAll()
		return &execution{rep: rep, r: r}, err
	}
	// Agents start; 2.19+ measure from here.
	rep.begin(d.metricsRefactor)
	printerDone := make(chan struct{})
	printerStop := make(chan struct{})
	go func() { defer close(printerDone); rep.loop(printerStop) }()
	var wg sync.WaitGroup
	for i, a := range agents {
		if p.slowStart && d.metricsRefactor && i < len(p.consumers) {
			// 2.19+ start the consumer channels one a second, after every
			// start-up line, the reporter already running (it prints
			// nothing while nothing moves); -z counts from the last start.
			startLine("Delaying start by 1 second because -S/--slow-start was requested")
			if clock.Sleep(ctx, time.Second) != nil {
				break
			}
		}
		wg.Add(1)
		go func(a func(context.Context)) { defer wg.Done(); a(agentCtx) }(a)
	}
	var limit <-chan time.Time
	if p.timeLimit > 0 {
		t := time.NewTimer(p.timeLimit)
		defer t.Stop()
		limit = t.C
	}
	ex := &execution{rep: rep, r: r}
	select {
	case <-limit:
		r.reasons.add("Reached time limit")
	case <-r.done:
	case <-ctx.Done():
		ex.interrupted = true
	}
	close(printerStop)
	<-printerDone
	stopAgents()
	// PerfTest prints its summary once the connections are closed (within
	// -st): their closing counts in the summary's time, as there.
	r.closeAll()
	ex.end = time.Now()
	waitTimeout(&wg, 5*time.Second)
	return ex, nil
}

// awaitInstances is PerfTest's instance synchronisation, after every
// start-up line and before any agent runs, on a connection of its own.
func awaitInstances(ctx context.Context, r *runner, out *lineout.Writer) error {
	conn, err := r.dial("perf-test-instance-sync", 0)
	if err != nil {
		return err
	}
	defer conn.Close()
	write := out.Write
	if r.p.quiet {
		write = func(string) {}
	}
	return r.p.instances.wait(ctx, conn, write)
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// reporter takes snapshots of the counters on the release's schedule and
// prints them; it never touches the network.
type reporter struct {
	p   *plan
	c   *counters
	out *lineout.Writer
	csv *lineout.Writer
	// statsStart is when the stats were created (2.18 measures from it);
	// agentsStart when agents started (2.19+ measure from it).
	statsStart, agentsStart time.Time
	totalsFrom              time.Time
	last                    [5]int64
	lastTick                time.Time
	firstReport             bool
	intervals               []result.Interval
	recvIntervals           []result.Interval
	lastBytes               [2]int64
	onReport                func(intervalReport)
	metrics                 *metricsExport // nil without -mpr or -mda
}

// intervalReport is one interval as PerfTestMulti's samples see it: counts and
// the interval's latency (µs) when it had samples.
type intervalReport struct {
	elapsedMs      int64 // the interval's length
	sent, received int64
	latencyCount   int64
	latencyMin     int64
	latencyMax     int64
	latencyMean    float64
}

func (rep *reporter) begin(reset bool) {
	now := time.Now()
	rep.agentsStart = now
	rep.totalsFrom = rep.statsStart
	rep.lastTick = rep.statsStart
	if reset {
		rep.totalsFrom = now
		rep.lastTick = now
	}
}

func (rep *reporter) counts() [5]int64 {
	c := rep.c
	return [5]int64{c.published.Load(), c.returned.Load(), c.confirmed.Load(), c.nacked.Load(), c.received.Load()}
}

// loop prints interval lines until stop is closed: 2.19+ every interval
// (skipping idle ones), 2.18 on the first event after an interval has
// passed (polled finely, so idle time prints nothing).
func (rep *reporter) loop(stop <-chan struct{}) {
	d := rep.p.rel
	for {
		var wait time.Duration
		if d.metricsRefactor {
			next := rep.agentsStart.Add(time.Duration(int64(time.Since(rep.agentsStart)/rep.p.interval)+1) * rep.p.interval)
			wait = time.Until(next)
		} else {
			wait = time.Until(rep.lastTick.Add(rep.p.interval))
		}
		select {
		case <-stop:
			return
		case <-time.After(max(wait, 0)):
		}
		if !d.metricsRefactor {
			for rep.counts() == rep.last {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		} else if rep.counts() == rep.last {
			if rep.metrics != nil {
				rep.metrics.idle()
			}
			continue
		}
		rep.report(time.Now())
	}
}

func (rep *reporter) report(now time.Time) {
	d := rep.p.rel
	cur := rep.counts()
	elapsedMs := now.Sub(rep.lastTick).Milliseconds()
	if elapsedMs <= 0 {
		elapsedMs = 1
	}
	rate := func(i int) float64 { return 1000 * float64(cur[i]-rep.last[i]) / float64(elapsedMs) }
	s := sample{sent: rate(0), returned: rate(1), confirmed: rate(2), nacked: rate(3), recvd: rate(4)}
	if d.metricsRefactor {
		s.sinceStart = now.Sub(rep.agentsStart)
	} else {
		s.sinceStart = now.Sub(rep.statsStart)
	}
	cons := rep.c.consumeInterval.SnapshotAndReset()
	conf := rep.c.confirmInterval.SnapshotAndReset()
	s.consumer = rep.stats(cons)
	s.confirm = rep.stats(conf)
	if rep.metrics != nil {
		rep.metrics.interval([5]float64{s.sent, s.confirmed, s.nacked, s.returned, s.recvd}, cons, conf, rep.c.confirmSizes.SnapshotAndReset())
	}
	if n := rep.c.legacyCount.Swap(0); n > 0 {
		s.legacyCount = n
		s.legacyAvg = rep.c.legacySum.Swap(0) / n
		s.legacyMin = rep.c.legacyMin.Swap(1<<62 - 1)
		s.legacyMax = rep.c.legacyMax.Swap(0)
	}
	pubBytes, recvBytes := rep.c.publishedBytes.Load(), rep.c.receivedBytes.Load()
	dur := now.Sub(rep.lastTick).Seconds()
	rep.intervals = append(rep.intervals, result.Interval{EndSeconds: now.Sub(rep.agentsStart).Seconds(), DurationSeconds: dur,
		Operations: cur[0] - rep.last[0], Bytes: pubBytes - rep.lastBytes[0]})
	rep.recvIntervals = append(rep.recvIntervals, result.Interval{EndSeconds: now.Sub(rep.agentsStart).Seconds(), DurationSeconds: dur,
		Operations: cur[4] - rep.last[4], Bytes: recvBytes - rep.lastBytes[1]})
	rep.lastBytes = [2]int64{pubBytes, recvBytes}
	if rep.onReport != nil {
		rr := intervalReport{elapsedMs: elapsedMs, sent: cur[0] - rep.last[0], received: cur[4] - rep.last[4], latencyCount: cons.TotalCount()}
		if rr.latencyCount > 0 {
			rr.latencyMin, rr.latencyMax, rr.latencyMean = cons.Min(), cons.Max(), cons.Mean()
		}
		rep.onReport(rr)
	}
	rep.last = cur
	rep.lastTick = now
	if rep.p.quiet {
		return
	}
	if rep.p.compact {
		if !rep.firstReport {
			rep.out.Line(d.compactHeader(rep.p.sh))
		}
		rep.out.Line(d.compactLine(rep.p.sh, s, time.Now()))
	} else {
		rep.out.Line(d.intervalLine(rep.p.id, rep.p.sh, s))
	}
	if rep.csv != nil {
		if !rep.firstReport && d.metricsRefactor {
			rep.csv.Line(csvHeader(rep.p.sh))
		}
		rep.csv.Line(csvRow(rep.p.id, rep.p.sh, s))
	}
	rep.firstReport = true
}

// stats are the printed values of a histogram of µs values: in ms with
// -ms (values were measured in whole ms), else µs.
func (rep *reporter) stats(s *latency.Snapshot) latencyStats {
	var l latencyStats
	if s.TotalCount() == 0 {
		return l
	}
	vals := []int64{s.Min(), s.ValueAtPercentile(50), s.ValueAtPercentile(75), s.ValueAtPercentile(95), s.ValueAtPercentile(99), s.Max()}
	for i, v := range vals {
		if rep.p.useMillis {
			v /= 1000
		}
		l[i] = v
	}
	return l
}

func (rep *reporter) summaryLines(end time.Time, t finalTotals) []string {
	from, published, received := rep.totalsFrom, t.published, t.received
	if at := rep.c.totalsRestart.Load(); at != 0 {
		from = time.Unix(0, at)
		published -= rep.c.publishedBase.Load()
		received -= rep.c.receivedBase.Load()
	}
	elapsed := end.Sub(from)
	ms := float64(elapsed.Milliseconds())
	if ms <= 0 {
		ms = 1
	}
	sent := float64(published) * 1000 / ms
	recvd := float64(received) * 1000 / ms
	return rep.p.rel.summary(rep.p.id, rep.p.compact, rep.p.sh, elapsed, sent, recvd,
		rep.stats(t.consume), rep.stats(t.confirm))
}

// tests are the run's result-file entries: what the producers published
// and what the consumers received, with their latencies, with confirms
// what the broker confirmed (and nacked, and left unconfirmed), and the
// time the broker's flow control blocked connections.
func (rep *reporter) tests(end time.Time, t finalTotals) []result.Test {
	start := rep.agentsStart
	el := end.Sub(start).Seconds()
	pub := result.Test{Name: "publish", Start: start, End: end, ElapsedSeconds: el,
		Counts:    result.Counts{Operations: t.published, Bytes: t.publishedBytes},
		Intervals: rep.intervals}
	if rep.p.sh.confirmed {
		if l, err := result.LatencyOf(t.confirm); err == nil {
			pub.Latency = map[string]*result.Latency{"confirm": l}
		}
	}
	con := result.Test{Name: "consume", Start: start, End: end, ElapsedSeconds: el,
		Counts:    result.Counts{Operations: t.received, Bytes: t.receivedBytes},
		Intervals: rep.recvIntervals}
	if l, err := result.LatencyOf(t.consume); err == nil {
		con.Latency = map[string]*result.Latency{"consume": l}
	}
	tests := []result.Test{pub, con}
	if rep.p.sh.confirmed {
		// The broker's answers to the publishes: every one published is
		// confirmed, nacked, or still unconfirmed when the run ended.
		confirmed, nacked := t.confirmed, t.nacked
		errs := map[string]int64{}
		if nacked > 0 {
			errs["nacked"] = nacked
		}
		if n := pub.Counts.Operations - confirmed - nacked; n > 0 {
			errs["unconfirmed"] = n
		}
		if len(errs) == 0 {
			errs = nil
		}
		tests = append(tests, result.Test{Name: "confirm", Start: start, End: end, ElapsedSeconds: el,
			Counts: result.Counts{Operations: confirmed, Errors: errs}})
	}
	if n := rep.c.blocked.Load(); n > 0 {
		tests = append(tests, result.Test{Name: "flow-control-blocked", Start: start, End: end,
			ElapsedSeconds: time.Duration(rep.c.blockedNanos.Load()).Seconds(),
			Counts:         result.Counts{Operations: n}})
	}
	return tests
}
