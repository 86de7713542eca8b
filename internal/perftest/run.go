package perftest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/perfclones/perfclones/internal/clock"
	"github.com/perfclones/perfclones/internal/jvm"
	"github.com/perfclones/perfclones/internal/latency"
)

// Latencies are recorded in microseconds, from 1 µs to an hour.
const (
	histogramLowest  = 1
	histogramHighest = 3_600_000_000
	histogramDigits  = 3
)

func newHistogram() *latency.Histogram {
	return latency.New(histogramLowest, histogramHighest, histogramDigits)
}

// counters are what every worker adds to; the printer and the summary
// only read them.
type counters struct {
	published, returned, confirmed, nacked, received atomic.Int64
	publishedBytes, receivedBytes                    atomic.Int64
	// Interval histograms are reset at every report; total ones never
	// (2.19+ reset them once, when every agent has started).
	consumeInterval, confirmInterval *latency.Histogram
	consumeTotal, confirmTotal       *latency.Histogram
	// confirmSizes are the interval's confirms per basic.ack or
	// basic.nack frame; publishFailed the publishes that failed (the Java
	// client's meters).
	confirmSizes  *latency.Histogram
	publishFailed atomic.Int64
	// blocked counts connection.blocked episodes and their time.
	blocked      atomic.Int64
	blockedNanos atomic.Int64
	// legacy -l numbers of the interval (2.18): µs.
	legacyMin, legacyMax, legacySum, legacyCount atomic.Int64
	// totalsRestart (Unix ns, 0 = never) is when the summary's totals
	// started again, with the counts published and received by then:
	// 2.19+ restart them when the last producer ends its -prsd delay.
	totalsRestart               atomic.Int64
	publishedBase, receivedBase atomic.Int64
}

// restartTotals starts the summary's totals again from now: its counts,
// its time and its latency histograms.
func (c *counters) restartTotals() {
	c.publishedBase.Store(c.published.Load())
	c.receivedBase.Store(c.received.Load())
	c.consumeTotal.Reset()
	c.confirmTotal.Reset()
	c.totalsRestart.Store(time.Now().UnixNano())
}

func newCounters() *counters {
	c := &counters{
		consumeInterval: newHistogram(), confirmInterval: newHistogram(), confirmSizes: newHistogram(),
		consumeTotal: newHistogram(), confirmTotal: newHistogram(),
	}
	c.legacyMin.Store(1<<62 - 1)
	return c
}

// finalTotals is one reading of the whole run's counters and histograms,
// taken when the agents have stopped: the summary lines and the result file
// are both made from it, so a confirm or delivery that still lands while
// they are written shows in neither or in both.
type finalTotals struct {
	published, publishedBytes, received, receivedBytes int64
	confirmed, nacked                                  int64
	consume, confirm                                   *latency.Snapshot
}

func (c *counters) final() finalTotals {
	return finalTotals{
		published: c.published.Load(), publishedBytes: c.publishedBytes.Load(),
		received: c.received.Load(), receivedBytes: c.receivedBytes.Load(),
		confirmed: c.confirmed.Load(), nacked: c.nacked.Load(),
		consume: c.consumeTotal.Snapshot(), confirm: c.confirmTotal.Snapshot(),
	}
}

// stopReasons records why agents ended, in the order first seen.
type stopReasons struct {
	mu   sync.Mutex
	list []reasonCount
}

func (s *stopReasons) add(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.list {
		if s.list[i].reason == reason {
			s.list[i].count++
			return
		}
	}
	s.list = append(s.list, reasonCount{reason: reason, count: 1})
}

func (s *stopReasons) snapshot() []reasonCount {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]reasonCount(nil), s.list...)
}

// monotonic is the process-local nanosecond clock the message timestamps
// carry (System.nanoTime in Java), or wall milliseconds with -ms.
type monotonic struct{ base time.Time }

func (m monotonic) nanos() int64 { return int64(time.Since(m.base)) }

// runner holds a run's connections and the signals between its workers.
type runner struct {
	p        *plan
	c        *counters
	reasons  *stopReasons
	clock    monotonic
	wall     clock.Wall
	stderr   func(string)
	stdout   func(string) // --verbose lines
	tlsConf  *tls.Config
	mu       sync.Mutex
	conns    []*amqp.Connection
	framed   map[*amqp.Connection]*framedConn
	done     chan struct{} // closed when enough agents reached their limits
	doneOnce sync.Once
	limits   atomic.Int64
	// delayedStarts counts producers still in their -prsd delay.
	delayedStarts atomic.Int64
	// fatal is the first error that ends the run from a worker.
	fatal   atomic.Pointer[error]
	started chan struct{}

	// recovering are the connections that reconnect when lost; closing
	// is set when the run ends, so that no new connection outlives it.
	recovering []*recoveringConn
	closing    bool
	// limitedProcs is set while the run holds GOMAXPROCS at its plan's
	// procs; the runtime's default comes back when it ends.
	limitedProcs bool
}

// limitProcs sets GOMAXPROCS to the plan's procs for the run, unless the
// environment chooses it or the default is already lower.
func (r *runner) limitProcs() {
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing || r.limitedProcs {
		return
	}
	if r.p.procs > 0 && r.p.procs < runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(r.p.procs)
		r.limitedProcs = true
	}
}

func (r *runner) finish() { r.doneOnce.Do(func() { close(r.done) }) }

// reachedLimit is an agent's completion: when every counted agent has
// completed, the run ends.
func (r *runner) reachedLimit(reason string) {
	r.reasons.add(reason)
	if r.limits.Add(1) >= int64(r.p.countLimits) {
		r.finish()
	}
}

// lost is an agent's channel going away for good: without recovery
// (-dcr) that ends the run with the agent's reason, as PerfTest's does;
// with recovery, a channel whose connection is still open (a channel
// error, a cancel) is not recovered, by PerfTest either: the agent stops
// and the run goes on.
func (r *runner) lost(reason string, err error) {
	if !r.p.recovery {
		r.fail(reason, err)
		return
	}
	r.stderr("perfclones: " + reason + ": " + err.Error() + "; the connection is open, so nothing is recovered")
}

func (r *runner) fail(reason string, err error) {
	r.reasons.add(reason)
	r.fatal.CompareAndSwap(nil, &err)
	r.finish()
}

// errFrameMaxTooSmall is the broker's refusal of -M below its minimum.
var errFrameMaxTooSmall = errors.New("frame max below 4096")

// dial opens one named connection to the uri for its index.
func (r *runner) dial(name string, index int) (*amqp.Connection, error) {
	uri := r.p.uris[index%len(r.p.uris)]
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(name)
	// TLS is ours, under the framing (amqp091-go would put it above the
	// connection we give it, where frames cannot be told apart): the URI
	// it is given says amqp://, with amqps://'s port.
	var tlsConf *tls.Config
	dialURI := uri
	if strings.HasPrefix(strings.ToLower(uri), "amqps://") {
		tlsConf = r.tlsConf
		switch len(r.p.serverNames) {
		case 0:
		case 1:
			tlsConf = r.tlsConf.Clone()
			tlsConf.ServerName = r.p.serverNames[0]
		default:
			// A TLS socket takes one host name: Java's SSLParameters
			// refuses a second one.
			return nil, &javaThrow{jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: "Duplicated server name of type 0"}}
		}
		var err error
		if dialURI, err = plainSchemeURI(uri); err != nil {
			return nil, err
		}
	} else if len(r.p.serverNames) > 0 {
		// The Java client logs (with logback, to stdout) for every plain
		// socket it configures with -sni.
		r.stdout(time.Now().Format("15:04:05.000") + " [main] WARN  com.rabbitmq.perf.Utils - SNI parameter set on a non-TLS connection")
	}
	var framed *framedConn
	cfg := amqp.Config{
		Properties: props, Heartbeat: r.p.heartbeat, Locale: "en_US",
		Dial: func(network, addr string) (net.Conn, error) {
			c, err := amqp.DefaultDial(10*time.Second)(network, addr)
			if err != nil {
				return nil, err
			}
			if err := r.configureSocket(c); err != nil {
				_ = c.Close()
				return nil, err
			}
			if r.p.frameMax > 0 && r.p.frameMax < 4096 {
				// The broker refuses a frame max below 4096 at tune.
				_ = c.Close()
				return nil, errFrameMaxTooSmall
			}
			c = newRawSocket(c)
			if tlsConf != nil {
				conf := tlsConf
				if conf.ServerName == "" {
					// As amqp091-go: the URI's host names the server.
					host, _, _ := net.SplitHostPort(addr)
					conf = conf.Clone()
					conf.ServerName = host
				}
				tc := tls.Client(c, conf)
				if err := tc.Handshake(); err != nil {
					_ = c.Close()
					return nil, err
				}
				c = tc
			}
			framed = newFramedConn(c)
			return framed, nil
		},
	}
	if r.p.frameMax > 0 {
		cfg.FrameSize = r.p.frameMax
	}
	if r.p.saslExternal {
		cfg.SASL = []amqp.Authentication{&amqp.ExternalAuth{}}
	}
	var login *tokenLogin
	if r.p.oauth2 != nil {
		// The Java client logs in as "" with the token, whatever user
		// the URI names, asking for it once connected.
		login = &tokenLogin{creds: r.p.oauth2, external: r.p.saslExternal}
		cfg.SASL = []amqp.Authentication{login}
		dial := cfg.Dial
		cfg.Dial = func(network, addr string) (net.Conn, error) {
			c, err := dial(network, addr)
			login.conn = c
			return c, err
		}
	}
	conn, err := amqp.DialConfig(dialURI, cfg)
	if err != nil {
		if login != nil && login.err != nil {
			return nil, login.err
		}
		return nil, loginFailure(err, uri, r.p.saslExternal, tlsConf)
	}
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		_ = conn.Close()
		return nil, net.ErrClosed
	}
	r.conns = append(r.conns, conn)
	if r.framed == nil {
		r.framed = map[*amqp.Connection]*framedConn{}
	}
	r.framed[conn] = framed
	r.mu.Unlock()
	if r.p.oauth2 != nil {
		r.p.oauth2.register(conn)
	}
	r.watchBlocked(name, conn)
	return conn, nil
}

// framedConn is the framing under a connection of the run's.
func (r *runner) framedConn(conn *amqp.Connection) *framedConn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.framed[conn]
}

// plainSchemeURI is an amqps:// URI as amqp:// with the same port (5671
// when it gives none), for amqp091-go under our TLS.
func plainSchemeURI(uri string) (string, error) {
	u, err := amqp.ParseURI(uri)
	if err != nil {
		return "", err
	}
	parsed, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	parsed.Scheme = "amqp"
	if parsed.Port() == "" {
		parsed.Host = net.JoinHostPort(u.Host, strconv.Itoa(u.Port))
	}
	return parsed.String(), nil
}

// configureSocket sets -tsbs, -trbs and -tnd on a new connection's
// socket before the TLS and AMQP handshakes. PerfTest's configurator sets
// them before the TCP connect; Go's dialer has connected by then, so a
// receive buffer given here does not change the window scale offered.
func (r *runner) configureSocket(c net.Conn) error {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	if r.p.sendBuffer > 0 {
		if err := tc.SetWriteBuffer(r.p.sendBuffer); err != nil {
			return err
		}
	}
	if r.p.receiveBuffer > 0 {
		if err := tc.SetReadBuffer(r.p.receiveBuffer); err != nil {
			return err
		}
	}
	return tc.SetNoDelay(r.p.noDelay)
}

// connect dials one named connection that, unless -dcr, the Java client
// would recover: a lost one is dialled again every -cri.
func (r *runner) connect(name string, index int) (*recoveringConn, error) {
	conn, err := r.dial(name, index)
	if err != nil {
		return nil, err
	}
	rc := newRecoveringConn(name, conn, r.p.recovery, func() (*amqp.Connection, error) { return r.dial(name, index) }, r.p.recoveryDelay, r.stderr)
	r.mu.Lock()
	r.recovering = append(r.recovering, rc)
	r.mu.Unlock()
	return rc, nil
}

// watchBlocked reports RabbitMQ's flow control (connection.blocked and
// unblocked) on stderr, which PerfTest does not print at all, and counts
// it for the result file.
func (r *runner) watchBlocked(name string, conn *amqp.Connection) {
	ch := conn.NotifyBlocked(make(chan amqp.Blocking, 4))
	go func() {
		var since time.Time
		for b := range ch {
			if b.Active {
				since = time.Now()
				r.c.blocked.Add(1)
				r.stderr(fmt.Sprintf("perfclones: connection %s blocked by the broker (flow control): %s", name, b.Reason))
			} else {
				if !since.IsZero() {
					r.c.blockedNanos.Add(int64(time.Since(since)))
				}
				r.stderr(fmt.Sprintf("perfclones: connection %s unblocked by the broker", name))
			}
		}
	}()
}

func (r *runner) closeAll() {
	r.mu.Lock()
	r.closing = true
	if r.limitedProcs {
		runtime.SetDefaultGOMAXPROCS()
		r.limitedProcs = false
	}
	conns := r.conns
	r.conns = nil
	recovering := r.recovering
	r.mu.Unlock()
	for _, rc := range recovering {
		rc.shutDown()
	}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func(c *amqp.Connection) {
			defer wg.Done()
			_ = c.CloseDeadline(time.Now().Add(3 * time.Second))
		}(c)
	}
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	limit := r.p.shutdown
	if limit <= 0 {
		return
	}
	select {
	case <-waited:
	case <-time.After(limit):
	}
}

// methodError is a channel error with the AMQP method that caused it,
// whose class and method ids the Java client's message names.
type methodError struct {
	classID, methodID int
	err               error
}

func (e *methodError) Error() string { return e.err.Error() }
func (e *methodError) Unwrap() error { return e.err }

func during(classID, methodID int, err error) error {
	if err == nil {
		return nil
	}
	return &methodError{classID: classID, methodID: methodID, err: err}
}

// javaException is the exception the Java client would have thrown for
// err, as PerfTest's catch-all in its main thread prints it.
func javaException(err error) (jvm.Exception, []jvm.Exception) {
	var amqpErr *amqp.Error
	var opErr *net.OpError
	var dnsErr *net.DNSError
	var thrown *javaThrow
	switch {
	case errors.As(err, &thrown):
		return thrown.e, nil
	case errors.Is(err, errFrameMaxTooSmall):
		return jvm.Exception{Class: "java.io.IOException"}, nil
	case errors.As(err, &amqpErr) && amqpErr.Code == amqp.AccessRefused &&
		(!amqpErr.Server || strings.HasPrefix(amqpErr.Reason, "ACCESS_REFUSED - Login was refused")):
		return jvm.Exception{Class: "com.rabbitmq.client.AuthenticationFailureException",
			Message: "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile."}, nil
	case errors.As(err, &amqpErr):
		var m *methodError
		classID, methodID := 0, 0
		if errors.As(err, &m) {
			classID, methodID = m.classID, m.methodID
		}
		return jvm.Exception{Class: "java.io.IOException"}, []jvm.Exception{{
			Class: "com.rabbitmq.client.ShutdownSignalException",
			Message: fmt.Sprintf("channel error; protocol method: #method<channel.close>(reply-code=%d, reply-text=%s, class-id=%d, method-id=%d)",
				amqpErr.Code, amqpErr.Reason, classID, methodID)}}
	case errors.As(err, &dnsErr):
		return jvm.Exception{Class: "java.net.UnknownHostException", Message: dnsErr.Name}, nil
	case errors.Is(err, syscall.ECONNREFUSED):
		return jvm.Exception{Class: "java.net.ConnectException", Message: "Connection refused"}, nil
	case errors.As(err, &opErr) && opErr.Timeout():
		return jvm.Exception{Class: "java.net.SocketTimeoutException", Message: "connect timed out"}, nil
	case errors.Is(err, amqp.ErrSASL), errors.Is(err, amqp.ErrCredentials):
		return jvm.Exception{Class: "com.rabbitmq.client.AuthenticationFailureException",
			Message: "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile."}, nil
	case strings.Contains(err.Error(), "tls:"):
		return jvm.Exception{Class: "javax.net.ssl.SSLHandshakeException", Message: err.Error()}, nil
	}
	return jvm.Exception{Class: "java.io.IOException", Message: err.Error()}, nil
}

// declareExchange declares (or, with -p, checks and only then declares)
// the run's exchange on ch.
func (r *runner) declareExchange(conn *amqp.Connection, ch *amqp.Channel) (*amqp.Channel, error) {
	p := r.p
	if !p.declareExchange {
		return ch, nil
	}
	if p.predeclared {
		if err := ch.ExchangeDeclarePassive(p.exchange, p.exchangeType, false, false, false, false, nil); err == nil {
			return ch, nil
		}
		// A failed passive check closes the channel; declare on a new one.
		var err error
		if ch, err = conn.Channel(); err != nil {
			return nil, err
		}
	}
	return ch, during(40, 10, ch.ExchangeDeclare(p.exchange, p.exchangeType, p.exchangeDurable, false, false, false, nil))
}

// declareQueue declares a named queue (with -p only if a passive check
// fails) and binds it to the exchange unless bindings are skipped.
func (r *runner) declareQueue(conn *amqp.Connection, ch *amqp.Channel, b queueBinding) (*amqp.Channel, error) {
	p := r.p
	exists := false
	if p.predeclared {
		if _, err := ch.QueueDeclarePassive(b.queue, false, false, false, false, nil); err == nil {
			exists = true
		} else {
			var err error
			if ch, err = conn.Channel(); err != nil {
				return nil, err
			}
		}
	}
	if !exists {
		if _, err := ch.QueueDeclare(b.queue, p.queue.durable, p.queue.autoDelete, p.queue.exclusive, false, p.queue.args); err != nil {
			return nil, during(50, 10, err)
		}
	}
	if !p.skipBinding {
		if err := ch.QueueBind(b.queue, b.key, p.exchange, false, nil); err != nil {
			return nil, during(50, 20, err)
		}
	}
	return ch, nil
}

// setUp opens the configuration connection(s), declares what is declared
// up front, then the consumers and the producers, printing their startup
// lines; it returns the agents to start.
func (r *runner) setUp(ctx context.Context, out func(string)) (agents []func(context.Context), err error) {
	p := r.p
	r.limitProcs()
	if p.consumerCount < 0 {
		// PerfTest sizes its consumer array first.
		return nil, &javaThrow{jvm.Exception{Class: "java.lang.NegativeArraySizeException", Message: strconv.Itoa(p.consumerCount)}}
	}
	confConn, err := r.connect("perf-test-configuration-0", 0)
	if err != nil {
		return nil, err
	}
	conf, _ := confConn.current()
	ch, err := conf.Channel()
	if err != nil {
		return nil, err
	}
	if ch, err = r.declareExchange(conf, ch); err != nil {
		// PerfTest declares the exchange from its first consumer channel
		// (or producer channel without consumers), after that agent's
		// start line.
		switch {
		case p.consumerConns > 0:
			out(fmt.Sprintf("id: %s, starting consumer #0", p.id))
		case p.producerConns > 0:
			out(fmt.Sprintf("id: %s, starting producer #0", p.id))
		}
		return nil, err
	}
	for _, b := range p.upfront {
		if ch, err = r.declareQueue(conf, ch, b); err != nil {
			return nil, err
		}
	}
	_ = ch.Close()
	// What the configuration connection declared, it declares again when
	// it recovers (PerfTest's topology recording).
	confConn.onRecovery(func(conn *amqp.Connection) error {
		ch, err := conn.Channel()
		if err != nil {
			return err
		}
		if ch, err = r.declareExchange(conn, ch); err != nil {
			return err
		}
		for _, b := range p.upfront {
			if ch, err = r.declareQueue(conn, ch, b); err != nil {
				return err
			}
		}
		return ch.Close()
	})
	// Consumers first, then producers, as PerfTest starts them.
	byConn := map[int][]consumerPlan{}
	for _, cp := range p.consumers {
		byConn[cp.conn] = append(byConn[cp.conn], cp)
	}
	for c := 0; c < p.consumerConns; c++ {
		out(fmt.Sprintf("id: %s, starting consumer #%d", p.id, c))
		conn, err := r.connect(fmt.Sprintf("perf-test-consumer-%d", c), c)
		if err != nil {
			return nil, err
		}
		for _, cp := range byConn[c] {
			out(fmt.Sprintf("id: %s, starting consumer #%d, channel #%d", p.id, c, cp.channel))
			agent, err := r.newConsumer(conn, cp)
			if err != nil {
				return nil, err
			}
			agents = append(agents, agent)
		}
		if p.slowStart && !p.rel.metricsRefactor {
			// 2.18 waits here, between consumer connections; 2.19+
			// waits as each consumer channel starts (main.go).
			out("Delaying start by 1 second because -S/--slow-start was requested")
			if err := clock.Sleep(ctx, time.Second); err != nil {
				return nil, err
			}
		}
	}
	switch {
	case p.producerCount < 0:
		return nil, &javaThrow{jvm.Exception{Class: "java.lang.NegativeArraySizeException", Message: strconv.Itoa(p.producerCount)}}
	case p.producerCount > 0 && p.minMsgSize < 0:
		return nil, &javaThrow{jvm.Exception{Class: "java.lang.NegativeArraySizeException", Message: strconv.Itoa(p.minMsgSize)}}
	case p.intervalSecs <= 0:
		// The reporting schedule's period.
		return nil, &javaThrow{jvm.Exception{Class: "java.lang.IllegalArgumentException"}}
	}
	prodByConn := map[int][]producerPlan{}
	for _, pp := range p.producers {
		prodByConn[pp.conn] = append(prodByConn[pp.conn], pp)
	}
	for c := 0; c < p.producerConns; c++ {
		out(fmt.Sprintf("id: %s, starting producer #%d", p.id, c))
		conn, err := r.connect(fmt.Sprintf("perf-test-producer-%d", c), c)
		if err != nil {
			return nil, err
		}
		for _, pp := range prodByConn[c] {
			out(fmt.Sprintf("id: %s, starting producer #%d, channel #%d", p.id, c, pp.channel))
			agent, err := r.newProducer(conn, pp)
			if err != nil {
				return nil, err
			}
			agents = append(agents, agent)
		}
	}
	return agents, nil
}

// newConsumer sets up one consumer channel: its queues are declared now,
// and it subscribes now or, with -csd, when its agent has waited the
// delay (PerfTest starts its consumers on a timer then, after the
// producers). The agent handles deliveries until ctx ends or its message
// limit is reached.
func (r *runner) newConsumer(rc *recoveringConn, cp consumerPlan) (func(context.Context), error) {
	conn, _ := rc.current()
	sub, err := r.prepareConsumer(conn, cp)
	if err != nil {
		return nil, err
	}
	delay := r.p.consumerStartDelay
	if delay <= 0 {
		if err := r.startConsuming(sub, cp); err != nil {
			return nil, err
		}
	}
	return func(ctx context.Context) {
		if delay > 0 {
			if clock.Sleep(ctx, delay) != nil {
				return
			}
			if err := r.startConsuming(sub, cp); err != nil {
				if ctx.Err() != nil {
					return
				}
				if !r.p.recovery || !sub.conn.IsClosed() {
					r.lost("Consumer shut down", err)
					return
				}
				if sub = r.resubscribe(ctx, rc, cp, sub.conn); sub == nil {
					return
				}
			}
		}
		r.consume(ctx, rc, cp, sub)
	}, nil
}

// subscription is a consumer channel on one connection, made again on
// the recovered connection after a loss.
type subscription struct {
	conn       *amqp.Connection
	ch         *amqp.Channel
	queues     []string // server-named ones get new names on every subscription
	deliveries <-chan amqp.Delivery
	closed     chan *amqp.Error
	// stopPolling ends -po's gets once the consumer has its -D messages.
	stopPolling func()
	// feed is the deliveries framed under amqp091-go; nil when the
	// consumer needs what only amqp091-go decodes (-v's properties, -B's
	// timestamp header) or polls (-po).
	feed *deliveryFeed
	// acks is what the consumer acks with: feed, or else ch.
	acks acknowledger
}

// subscribe declares the consumer channel's queues and bindings and
// subscribes to them, as PerfTest does at start and on recovery.
func (r *runner) subscribe(conn *amqp.Connection, cp consumerPlan) (*subscription, error) {
	sub, err := r.prepareConsumer(conn, cp)
	if err != nil {
		return nil, err
	}
	return sub, r.startConsuming(sub, cp)
}

// prepareConsumer opens a consumer channel, declares and binds its queues
// and sets its prefetch: a subscription without deliveries yet.
func (r *runner) prepareConsumer(conn *amqp.Connection, cp consumerPlan) (*subscription, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	for _, b := range cp.declare {
		if ch, err = r.declareQueue(conn, ch, b); err != nil {
			return nil, err
		}
	}
	queues := cp.queues
	if cp.declareOwn {
		q, err := ch.QueueDeclare("", r.p.queue.durable, r.p.queue.autoDelete, r.p.queue.exclusive, false, r.p.queue.args)
		if err != nil {
			return nil, during(50, 10, err)
		}
		if !r.p.skipBinding {
			if err := ch.QueueBind(q.Name, cp.bindKey, r.p.exchange, false, nil); err != nil {
				return nil, during(50, 20, err)
			}
		}
		queues = []string{q.Name}
	}
	if cp.prefetch > 0 {
		if err := ch.Qos(cp.prefetch, 0, false); err != nil {
			return nil, err
		}
	}
	if cp.globalPrefetch > 0 {
		if err := ch.Qos(cp.globalPrefetch, 0, true); err != nil {
			return nil, err
		}
	}
	return &subscription{conn: conn, ch: ch, queues: queues}, nil
}

// startConsuming subscribes a prepared consumer channel to its queues
// (with -po, starts its gets) and puts it in transaction mode with -n.
func (r *runner) startConsuming(sub *subscription, cp consumerPlan) error {
	ch, queues := sub.ch, sub.queues
	var feeds []<-chan amqp.Delivery
	var stopPolling func()
	consumed := queues
	if cp.polling {
		// -po: basic.get from every queue in turn instead of subscribing.
		var feed <-chan amqp.Delivery
		feed, stopPolling = pollQueues(ch, queues, cp.autoAck, cp.pollInterval)
		feeds, consumed = append(feeds, feed), nil
	}
	sub.acks = ch
	if !cp.polling && cp.verbose == quietMessages && !cp.timestampInHeader {
		if sub.feed = newDeliveryFeed(r.framedConn(sub.conn), ch, cp.routingKey); sub.feed != nil {
			sub.acks = sub.feed
		}
	}
	for _, q := range consumed {
		d, err := ch.Consume(q, "", cp.autoAck, false, false, false, cp.args)
		if err != nil {
			return during(60, 20, err)
		}
		feeds = append(feeds, d)
	}
	merged := feeds[0]
	if len(feeds) > 1 {
		m := make(chan amqp.Delivery, 256)
		var wg sync.WaitGroup
		for _, f := range feeds {
			wg.Add(1)
			go func(f <-chan amqp.Delivery) {
				defer wg.Done()
				for d := range f {
					m <- d
				}
			}(f)
		}
		go func() { wg.Wait(); close(m) }()
		merged = m
	}
	if cp.txSize > 0 {
		if err := ch.Tx(); err != nil {
			return err
		}
	}
	sub.deliveries, sub.stopPolling = merged, stopPolling
	sub.closed = ch.NotifyClose(make(chan *amqp.Error, 1))
	return nil
}

// resubscribe waits for the consumer's connection to come back and
// subscribes again on it; nil when the run ends first.
func (r *runner) resubscribe(ctx context.Context, rc *recoveringConn, cp consumerPlan, lost *amqp.Connection) *subscription {
	for {
		conn := rc.recovered(ctx, lost, 0)
		if conn == nil {
			return nil
		}
		sub, err := r.subscribe(conn, cp)
		if err == nil {
			return sub
		}
		if !conn.IsClosed() {
			r.stderr("perfclones: a consumer could not subscribe again after recovery: " + err.Error())
		}
		lost = conn
	}
}

// channelError is why a channel closed, when amqp091 says so in time.
func channelError(closed chan *amqp.Error, fallback string) error {
	select {
	case e, ok := <-closed:
		if ok && e != nil {
			return e
		}
	case <-time.After(100 * time.Millisecond):
	}
	return errors.New(fallback)
}

func (r *runner) consume(ctx context.Context, rc *recoveringConn, cp consumerPlan, sub *subscription) {
	c := r.c
	var lastDelivery atomic.Int64
	lastDelivery.Store(time.Now().UnixNano())
	var current atomic.Pointer[subscription]
	current.Store(sub)
	if cp.exitWhen != "" {
		go r.watchExit(ctx, cp, &current, &lastDelivery)
	}
	// Latencies go straight into the histograms (a lock each, not a
	// batching recorder): an interval line then shows the messages of its
	// own interval, the first one too, however slow the rate.
	interval, total := c.consumeInterval, c.consumeTotal
	var count, sinceAck int
	// The -R schedule counts from base (delivery baseCount on).
	start := time.Now()
	base, baseCount := start, 0
	// flushAcks writes the acks of framed deliveries (amqp091-go's are
	// written as they are made).
	flushAcks := func() {
		if sub.feed != nil {
			sub.feed.flushAcks()
		}
	}
	// handle is one delivery; full is amqp091-go's, for -v (nil when the
	// delivery was framed here).
	handle := func(d *fastDelivery, full *amqp.Delivery) {
		if cp.msgCount > 0 && count >= cp.msgCount {
			return // past -D: neither counted nor acknowledged
		}
		count++
		lastDelivery.Store(time.Now().UnixNano())
		c.received.Add(1)
		c.receivedBytes.Add(int64(d.size))
		if cp.verbose != quietMessages {
			r.stdout(verboseReceived(cp.index, d.ts, full, cp.verbose == verboseFullMessages, cp.timestampInHeader))
		}
		if d.hasTS && d.ownKey {
			var us int64
			if cp.useMillis {
				us = (r.wall.Ms() - d.ts) * 1000
			} else {
				us = (r.clock.nanos() - d.ts) / 1000
			}
			if us < 0 {
				us = -us
			}
			if us > 0 || !cp.dropZeroLatency {
				interval.Record(us)
				total.Record(us)
				c.legacySum.Add(us)
				c.legacyCount.Add(1)
				for old := c.legacyMin.Load(); us < old && !c.legacyMin.CompareAndSwap(old, us); old = c.legacyMin.Load() {
				}
				for old := c.legacyMax.Load(); us > old && !c.legacyMax.CompareAndSwap(old, us); old = c.legacyMax.Load() {
				}
			}
		}
		latencyMicros := int64(cp.latencyMicros)
		if cp.latencies != nil {
			latencyMicros = cp.latencies.at(time.Since(start))
		}
		if latencyMicros > 0 {
			flushAcks()
			simulateProcessing(time.Duration(latencyMicros) * time.Microsecond)
		}
		if !cp.autoAck {
			acks := sub.acks
			sinceAck++
			acked := 0 // messages the ack (or nack) covers
			switch {
			case cp.nack:
				_ = acks.Nack(d.tag, cp.multiAckEvery > 0, cp.requeue)
				acked = 1
			case cp.multiAckEvery <= 0:
				_ = acks.Ack(d.tag, false)
				acked = 1
			case sinceAck >= cp.multiAckEvery:
				_ = acks.Ack(d.tag, true)
				acked, sinceAck = sinceAck, 0
			}
			if acked > 0 && cp.verbose != quietMessages {
				r.stdout(verboseAcknowledged(cp.index, d.ts, d.tag, acked))
			}
			if cp.txSize > 0 && count%cp.txSize == 0 {
				flushAcks()
				_ = sub.ch.TxCommit()
			}
		}
		if cp.rate > 0 {
			due := base.Add(time.Duration(float64(count-baseCount) / cp.rate * float64(time.Second)))
			if r.p.rel.tokenBucket && time.Since(due) > time.Second {
				// At most one second's stored permits.
				base, baseCount = time.Now().Add(-time.Second), count
				due = base
			}
			if wait := time.Until(due); wait > 0 {
				flushAcks()
				_ = clock.Sleep(ctx, wait)
			}
		}
		if cp.msgCount > 0 && count == cp.msgCount {
			r.reachedLimit("Consumer reached message limit")
			if sub.stopPolling != nil {
				sub.stopPolling()
			}
		}
	}
	var batch []fastDelivery
	// handleFramed is the deliveries framed since the last batch.
	handleFramed := func() {
		batch = sub.feed.takeAll(batch)
		for i := range batch {
			handle(&batch[i], nil)
		}
		sub.feed.flushAcks()
	}
	for {
		var d amqp.Delivery
		var ok bool
		var framed <-chan struct{}
		if sub.feed != nil {
			framed = sub.feed.wake
		}
		select {
		case <-ctx.Done():
			return
		case <-framed:
			handleFramed()
			continue
		case d, ok = <-sub.deliveries:
		}
		if !ok {
			if ctx.Err() != nil {
				return
			}
			if sub.feed != nil {
				// What was read before the channel closed is counted, as
				// the Java client's consumer thread still runs it.
				handleFramed()
			}
			err := channelError(sub.closed, "consumer channel closed")
			if !r.p.recovery || !sub.conn.IsClosed() {
				r.lost("Consumer shut down", err)
				return
			}
			// PerfTest's consumer subscribes again once its connection
			// has recovered; its multiple-ack count starts over.
			if sub = r.resubscribe(ctx, rc, cp, sub.conn); sub == nil {
				return
			}
			current.Store(sub)
			sinceAck = 0
			continue
		}
		fd := fastDelivery{tag: d.DeliveryTag, size: len(d.Body), ownKey: d.RoutingKey == cp.routingKey}
		fd.ts, fd.hasTS = deliveryTimestamp(&d, cp.timestampInHeader)
		handle(&fd, &d)
	}
}

// acknowledger is what a consumer acks with: amqp091-go's channel, or
// the framing's.
type acknowledger interface {
	Ack(tag uint64, multiple bool) error
	Nack(tag uint64, multiple, requeue bool) error
}

// watchExit is -ew: from 2 s on, every second, a consumer that had no
// delivery for more than a second is idle; "empty" also wants its queues
// to hold no message. Either ends that consumer's part of the run.
func (r *runner) watchExit(ctx context.Context, cp consumerPlan, current *atomic.Pointer[subscription], last *atomic.Int64) {
	if clock.Sleep(ctx, 2*time.Second) != nil {
		return
	}
	for {
		if time.Since(time.Unix(0, last.Load())) > time.Second {
			if cp.exitWhen == "idle" {
				r.reachedLimit("Consumer is idle for more than 1 second")
				return
			}
			if sub := current.Load(); r.queuesEmpty(sub.conn, sub.queues) {
				r.reachedLimit("Consumer queue(s) empty")
				return
			}
		}
		if clock.Sleep(ctx, time.Second) != nil {
			return
		}
	}
}

func (r *runner) queuesEmpty(conn *amqp.Connection, queues []string) bool {
	ch, err := conn.Channel()
	if err != nil {
		return false
	}
	defer ch.Close()
	for _, q := range queues {
		st, err := ch.QueueDeclarePassive(q, false, false, false, false, nil)
		if err != nil || st.Messages > 0 {
			return false
		}
	}
	return true
}

// simulateProcessing is -L: a sleep from 1 ms, a busy wait below.
func simulateProcessing(d time.Duration) {
	if d >= time.Millisecond {
		time.Sleep(d)
		return
	}
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// newProducer opens one producer channel; its agent publishes until ctx
// ends or its message count is reached.
func (r *runner) newProducer(rc *recoveringConn, pp producerPlan) (func(context.Context), error) {
	conn, _ := rc.current()
	pub, err := r.openPublisher(conn, pp)
	if err != nil {
		return nil, err
	}
	out, err := newOutgoing(outgoingSettings{
		bodies: pp.bodies, size: pp.size, sizes: pp.sizes, properties: pp.properties, persistent: pp.persistent,
		keyCache: pp.keyCache, randomKey: pp.randomKey, routingKey: pp.routingKey,
	})
	if err != nil {
		return nil, err
	}
	if pp.startDelay > 0 && pp.rate != 0 {
		r.delayedStarts.Add(1)
	}
	return func(ctx context.Context) { r.produce(ctx, rc, pp, pub, out) }, nil
}

// producerChannel is a producer's channel on one connection, opened again on the
// recovered connection after a loss.
type producerChannel struct {
	conn     *amqp.Connection
	ch       *amqp.Channel
	confirms chan amqp.Confirmation // nil without confirms
	closed   chan *amqp.Error
	// fast writes the publishes when there are no confirms to track
	// (amqp091-go numbers confirms by the publishes it made itself).
	fast *fastPublisher
	// confirmFrames are the confirm frames read (-v), by the first tag
	// each confirms; nil when they are not kept.
	confirmFrames *sync.Map
}

// openPublisher declares the exchange (unless told not to) and puts the
// channel in confirm or transaction mode, as at start and on recovery.
func (r *runner) openPublisher(conn *amqp.Connection, pp producerPlan) (*producerChannel, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	if pp.declareExchange {
		if ch, err = r.declareExchange(conn, ch); err != nil {
			return nil, err
		}
	}
	var confirms chan amqp.Confirmation
	var confirmFrames *sync.Map
	if pp.confirm >= 0 {
		if err := ch.Confirm(false); err != nil {
			return nil, err
		}
		size := 1024
		if pp.confirm > 0 {
			size = int(pp.confirm) + 16
		}
		confirms = ch.NotifyPublish(make(chan amqp.Confirmation, size))
		var frames *sync.Map
		if pp.verbose != quietMessages {
			frames = &sync.Map{}
		}
		if fc := r.framedConn(conn); fc != nil && fc.tapConfirms(ch, r.c.confirmSizes.Record, frames) {
			confirmFrames = frames
		}
	}
	if pp.mandatory {
		returns := ch.NotifyReturn(make(chan amqp.Return, 256))
		go func() {
			for range returns {
				r.c.returned.Add(1)
			}
		}()
	}
	if pp.txSize > 0 {
		if err := ch.Tx(); err != nil {
			return nil, err
		}
	}
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	pub := &producerChannel{conn: conn, ch: ch, confirms: confirms, closed: closed, confirmFrames: confirmFrames}
	if confirms == nil {
		pub.fast = newFastPublisher(r.framedConn(conn), conn, ch)
	}
	return pub, nil
}

// reopen waits for the producer's connection to come back and opens the
// channel again on it; nil when ctx ends or the run closes first. poll is
// how often to look (PerfTest's producer sleeps a second at a time while
// its connection recovers; one waiting for a confirm slot is let go as
// soon as recovery resets its window).
func (r *runner) reopen(ctx context.Context, rc *recoveringConn, pp producerPlan, lost *amqp.Connection, poll time.Duration) *producerChannel {
	for {
		conn := rc.recovered(ctx, lost, poll)
		if conn == nil {
			return nil
		}
		pub, err := r.openPublisher(conn, pp)
		if err == nil {
			return pub
		}
		if !conn.IsClosed() {
			r.stderr("perfclones: a producer could not open its channel again after recovery: " + err.Error())
		}
		lost = conn
	}
}

func (r *runner) produce(ctx context.Context, rc *recoveringConn, pp producerPlan, pub *producerChannel, out *outgoing) {
	c := r.c
	verbose, verboseFull := pp.verbose != quietMessages, pp.verbose == verboseFullMessages
	// The confirm window: a slot per unconfirmed message, and the publish
	// time of each (by delivery tag) for the confirm latency.
	var window chan struct{}
	if pp.confirm > 0 {
		window = make(chan struct{}, pp.confirm)
	}
	var sent sync.Map
	// trackConfirms counts one channel's confirms until amqp091 closes
	// its confirm channel (the channel is closed or lost).
	trackConfirms := func(confirms chan amqp.Confirmation, frames *sync.Map) chan struct{} {
		done := make(chan struct{})
		if confirms == nil {
			close(done)
			return done
		}
		go func() {
			defer close(done)
			// Straight into the histograms, as the consumers' latencies.
			rec, tot := c.confirmInterval, c.confirmTotal
			for cf := range confirms {
				if cf.Ack {
					c.confirmed.Add(1)
				} else {
					c.nacked.Add(1)
				}
				switch {
				case !verbose:
				case frames != nil:
					// The frame's line comes before its first message's,
					// with the frame's tag and count.
					if v, ok := frames.LoadAndDelete(cf.DeliveryTag); ok {
						f := v.(confirmFrame)
						r.stdout(verboseConfirm(pp.index, f.ack, f.tag, int(f.count)))
					}
				default:
					// Only amqp091-go's split confirmations: one of count 1
					// per message.
					r.stdout(verboseConfirm(pp.index, cf.Ack, cf.DeliveryTag, 1))
				}
				if v, ok := sent.LoadAndDelete(cf.DeliveryTag); ok && pp.confirm > 0 {
					us := (r.clock.nanos() - v.(int64)) / 1000
					rec.Record(us)
					tot.Record(us)
					if verbose {
						r.stdout(verboseConfirmed(pp.index, cf.Ack, v.(int64), cf.DeliveryTag))
					}
				}
				if window != nil {
					select {
					case <-window:
					default:
					}
				}
			}
		}()
		return done
	}
	confirmDone := trackConfirms(pub.confirms, pub.confirmFrames)
	if pp.rate == 0 {
		<-ctx.Done()
		return
	}
	start := time.Now()
	out.begin(start)
	// origin is the first message's time: after -prsd's random delay
	// (the -vr and -vs schedules have started before it, as PerfTest's).
	origin := start
	if pp.startDelay > 0 {
		delay := time.Duration(rand.Int64N(int64(pp.startDelay/time.Millisecond))+1) * time.Millisecond
		if clock.Sleep(ctx, delay) != nil {
			return
		}
		origin = time.Now()
		if r.delayedStarts.Add(-1) == 0 && r.p.rel.metricsRefactor {
			// Every agent has started now: what came before is warm-up.
			c.restartTotals()
		}
	}
	// rate is -r, or -vr's value in force.
	rate := pp.rate
	if pp.rates != nil {
		rate = float64(pp.rates.at(0))
	}
	// The rate's schedule counts from base (message baseN on): from the
	// end of -prsd's delay, which the 2.22.1 jar does not make up for (its
	// first second after a delay d sends (1-d)*rate, not a second's worth
	// more).
	base, baseN := origin, 0
	var tag uint64
	// recovered reports whether the channel is open again after a loss:
	// without recovery, or when the channel closed on a connection that
	// is still open, the producer ends with reason as PerfTest's does.
	recovered := func(reason string, err error, n int, poll time.Duration, waitCtx context.Context) bool {
		if !r.p.recovery || !pub.conn.IsClosed() {
			r.lost(reason, err)
			return false
		}
		next := r.reopen(waitCtx, rc, pp, pub.conn, poll)
		if next == nil {
			return false
		}
		// Recovery resets the confirm window: what was unconfirmed on the
		// lost channel never will be; the new channel's tags start at 1.
		select {
		case <-confirmDone:
		case <-ctx.Done():
			return false
		}
		sent.Clear()
		tag = 0
		for len(window) > 0 {
			<-window
		}
		pub = next
		confirmDone = trackConfirms(pub.confirms, pub.confirmFrames)
		return true
	}
	for n := 0; pp.msgCount == 0 || n < pp.msgCount; n++ {
		if ctx.Err() != nil {
			return
		}
		if pp.rates != nil {
			if v := float64(pp.rates.at(time.Since(start))); v != rate {
				rate, base, baseN = v, time.Now(), n
			}
			if rate == 0 {
				// PerfTest's producer waits a second at a time while -vr's
				// rate is 0.
				if clock.Sleep(ctx, time.Second) != nil {
					return
				}
				n--
				continue
			}
		}
		if window != nil {
			deadline := time.Now().Add(pp.confirmWait)
		slot:
			for {
				select {
				case window <- struct{}{}:
					break slot
				case <-ctx.Done():
					return
				case <-time.After(time.Until(deadline)):
					r.fail("Waiting for publisher confirms for too long", errors.New("confirm timeout"))
					return
				case e := <-pub.closed:
					// The wait goes on through recovery, within -ct.
					err := errors.New("producer channel closed")
					if e != nil {
						err = e
					}
					waitCtx, cancel := context.WithDeadline(ctx, deadline)
					ok := recovered("Error in producer ("+err.Error()+")", err, n, 0, waitCtx)
					cancel()
					if !ok {
						if ctx.Err() == nil && r.p.recovery && time.Now().After(deadline) {
							r.fail("Waiting for publisher confirms for too long", errors.New("confirm timeout"))
						}
						return
					}
				}
			}
		}
		now := r.clock.nanos()
		ts := now
		if pp.useMillis {
			ts = r.wall.Ms()
		}
		msg, key, err := out.next(n, ts)
		if err != nil {
			// As PerfTest's producer thread ends on an exception: its
			// reason counts as its completion.
			reason := "Error in producer (" + err.Error() + ")"
			if r.p.countLimits > 0 {
				r.reachedLimit(reason)
			} else {
				r.reasons.add(reason)
			}
			return
		}
		if pub.confirms != nil {
			tag++
			sent.Store(tag, now)
		}
		err = errNotFramed
		if pub.fast != nil {
			err = pub.fast.publish(pp.exchange, key, pp.mandatory, msg)
		}
		if err == errNotFramed {
			err = pub.ch.PublishWithContext(ctx, pp.exchange, key, pp.mandatory, false, *msg)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			c.publishFailed.Add(1)
			// Not sent: the same message goes on the recovered channel.
			if pub.confirms != nil {
				sent.Delete(tag)
				tag--
			}
			if window != nil {
				select {
				case <-window:
				default:
				}
			}
			if !recovered("Error in producer ("+err.Error()+")", err, n, time.Second, ctx) {
				return
			}
			n--
			continue
		}
		c.published.Add(1)
		c.publishedBytes.Add(int64(len(msg.Body)))
		if verbose {
			id := uint64(0) // the channel's next publish sequence number: 0 outside confirm mode
			if pub.confirms != nil {
				id = tag
			}
			r.stdout(verbosePublished(pp.index, ts, id, msg, verboseFull, out.headerOrder))
		}
		if pp.txSize > 0 && (n+1)%pp.txSize == 0 {
			if err := pub.ch.TxCommit(); err != nil && ctx.Err() == nil {
				if !recovered("Error in producer ("+err.Error()+")", err, n+1, time.Second, ctx) {
					return
				}
			}
		}
		if pp.every > 0 {
			// -P: one message per interval, on a fixed schedule.
			if clock.Sleep(ctx, time.Until(origin.Add(time.Duration(n+1)*pp.every))) != nil {
				return
			}
			continue
		}
		if rate > 0 {
			due := base.Add(time.Duration(float64(n+1-baseN) / rate * float64(time.Second)))
			if r.p.rel.tokenBucket && time.Since(due) > time.Second {
				// At most one second's stored permits.
				base, baseN = time.Now().Add(-time.Second), n+1
				due = base
			}
			if wait := time.Until(due); wait > 0 {
				if clock.Sleep(ctx, wait) != nil {
					return
				}
			}
		}
	}
	// -C reached: wait (up to -ct) for the outstanding confirms.
	if window != nil {
		deadline := time.After(pp.confirmWait)
	wait:
		for len(window) > 0 {
			select {
			case <-deadline:
				break wait
			case <-ctx.Done():
				break wait
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	r.reachedLimit("Producer reached message limit")
}

// pollQueues is -po: basic.get on each queue in turn, pausing every (-pi)
// after each get, until stop is called or the channel closes. A consumer
// reads the gets as it would deliveries.
func pollQueues(ch *amqp.Channel, queues []string, autoAck bool, every time.Duration) (<-chan amqp.Delivery, func()) {
	feed := make(chan amqp.Delivery)
	stop := make(chan struct{})
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	var once sync.Once
	go func() {
		defer close(feed)
		for {
			for _, q := range queues {
				select {
				case <-stop:
					return
				case <-closed:
					return
				default:
				}
				d, ok, err := ch.Get(q, autoAck)
				if err != nil {
					return
				}
				if ok {
					select {
					case feed <- d:
					case <-stop:
						return
					case <-closed:
						return
					}
				}
				if every > 0 {
					select {
					case <-time.After(every):
					case <-stop:
						return
					case <-closed:
						return
					}
				}
			}
		}
	}()
	return feed, func() { once.Do(func() { close(stop) }) }
}
