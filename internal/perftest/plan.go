package perftest

import (
	"crypto/tls"
	"crypto/x509"
	"regexp"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/perfclones/perfclones/internal/jvm"
)

// plan is everything a run needs, built once from the options: the
// topology, one entry per producer and consumer channel, and how the run
// ends. Workers get their own entry, never the options.
type plan struct {
	id  string
	rel *diff
	sh  shown

	uris []string
	// exchange is the name published to ("" = the default exchange);
	// declareExchange says whether to declare it (never "" or amq.*),
	// durable as the release declares it.
	exchange, exchangeType string
	declareExchange        bool
	exchangeDurable        bool
	predeclared            bool

	// queue declaration settings for every queue the run declares.
	queue queueSettings
	// upfront are queues declared and bound on the configuration
	// connection before any client starts (patterns, or -u without
	// consumers), with their binding keys.
	upfront     []queueBinding
	skipBinding bool

	producers []producerPlan
	consumers []consumerPlan
	// consumerConns and producerConns are the connection counts; channel
	// plans name their connection by index.
	consumerConns, producerConns int

	timeLimit time.Duration
	interval  time.Duration
	useMillis bool
	slowStart bool
	shutdown  time.Duration
	heartbeat time.Duration
	frameMax  int
	// consumerCount and producerCount are the channel counts as PerfTest
	// sizes its arrays (negative ones throw), minMsgSize -s as given and
	// intervalSecs -i as given (the schedule refuses a period <= 0).
	consumerCount, producerCount int
	minMsgSize, intervalSecs     int
	compact                      bool
	csvPath                      string
	countLimits                  int // channels that end the run when they reach their limit
	// consumerStartDelay is -csd: the consumers, declared at set-up,
	// subscribe that long after the agents start; 0 at once.
	consumerStartDelay time.Duration
	// procs is how many threads may run the run's Go code at once
	// (GOMAXPROCS): one per streamsPerProc of its message streams (the
	// queues consumed, or the producer channels when they are more).
	procs int
	// quiet runs print nothing (PerfTestMulti's scenarios).
	quiet bool
	// recovery is the Java client's automatic connection recovery (on
	// unless -dcr): a lost connection does not end the run.
	recovery bool
	// verifyBroker is -udsc: the broker's certificate must chain to the
	// system's trusted roots (the JVM's default trust store in Java).
	verifyBroker bool
	// saslExternal is -se: connections log in with SASL EXTERNAL, as the
	// client certificate's user. clientCerts and brokerRoots are the JVM
	// default SSL context's key and trust stores (nil roots: the system's);
	// oauth2, when set, gives every connection its password.
	saslExternal bool
	clientCerts  []tls.Certificate
	brokerRoots  *x509.CertPool
	oauth2       *oauth2Credentials
	// recoveryDelay is -cri, the pause before each reconnection attempt.
	recoveryDelay recoveryDelay
	// instances is -ei with -isn and -ist; expected < 2 waits for nobody.
	instances instanceSync
	// serverNames are -sni's TLS server names (the Java client sets them
	// on every TLS socket; on a plain one it logs a warning).
	serverNames []string
	// sendBuffer and receiveBuffer (> 0) and noDelay are -tsbs, -trbs and
	// -tnd, set on every connection's socket.
	sendBuffer, receiveBuffer int
	noDelay                   bool
}

type queueSettings struct {
	durable, autoDelete, exclusive bool
	args                           amqp.Table
}

type queueBinding struct{ queue, key string }

// producerPlan is one producer channel.
type producerPlan struct {
	conn, channel int
	routingKey    string
	randomKey     bool
	mandatory     bool
	persistent    bool
	rate          float64       // msg/s; <0 unlimited, 0 never publishes
	msgCount      int           // 0 = unlimited
	txSize        int           // -m: commit every txSize publishes
	every         time.Duration // -P: one message per interval
	// startDelay is -prsd: the first message waits a random 1 ms to
	// startDelay; 0 none.
	startDelay  time.Duration
	confirm     int64 // -1 off, 0 confirm mode without window
	confirmWait time.Duration
	size        int
	useMillis   bool
	exchange    string
	// declareExchange: each producer channel declares the exchange too.
	declareExchange bool
	// index numbers the producer channel in --verbose lines.
	index int
	// keyCache is -rkcs: > 0 cycles through that many random keys.
	keyCache int
	// rates and sizes are -vr and -vs (nil when fixed).
	rates, sizes *schedule
	bodies       bodySettings
	properties   []keyValue // -mp, made into properties when the producer starts
	verbose      verbosity
}

// verbosity is --verbose (a line per message event) and --verbose-full
// (with properties and body).
type verbosity int

const (
	quietMessages verbosity = iota
	verboseMessages
	verboseFullMessages
)

// consumerPlan is one consumer channel.
type consumerPlan struct {
	conn, channel int
	// queues to consume; when declareOwn is set the channel declares a
	// server-named queue and binds it with bindKey instead.
	queues     []string
	declare    []queueBinding // named queues this channel declares and binds first
	declareOwn bool
	bindKey    string
	// routingKey is the key a delivery must carry for its latency to be
	// recorded (PerfTest compares it with the consumer's own).
	routingKey      string
	autoAck         bool
	multiAckEvery   int
	prefetch        int
	globalPrefetch  int
	msgCount        int
	rate            float64
	latencyMicros   int
	nack, requeue   bool
	useMillis       bool
	dropZeroLatency bool
	args            amqp.Table // -ca: basic.consume's arguments
	txSize          int        // -n: commit every txSize acknowledgements
	exitWhen        string     // -ew: "", "idle" or "empty"
	index           int        // numbers the consumer channel in --verbose lines
	latencies       *schedule
	// polling is -po: basic.get in a loop, pollInterval (-pi) after each.
	polling      bool
	pollInterval time.Duration
	// timestampInHeader: with -B or -jb the timestamp is in a header.
	timestampInHeader bool
	verbose           verbosity
}

func buildPlan(rel *diff, o *options, id string) *plan {
	p := &plan{
		id: id, rel: rel, uris: o.uris,
		exchange: o.exchangeName, exchangeType: o.exchangeType,
		declareExchange: o.exchangeName != "" && !strings.HasPrefix(o.exchangeName, "amq."),
		exchangeDurable: rel.metricsRefactor,
		predeclared:     o.predeclared,
		skipBinding:     o.skipBinding || o.exchangeName == "",
		timeLimit:       time.Duration(o.timeLimit) * time.Second,
		interval:        time.Duration(max(o.interval, 1)) * time.Second,
		useMillis:       o.useMillis,
		slowStart:       o.slowStart,
		shutdown:        time.Duration(o.shutdownTimeout) * time.Second,
		heartbeat:       time.Duration(o.heartbeat) * time.Second,
		frameMax:        o.frameMax,
		consumerCount:   int(int32(o.consumers * o.consumerChannels)),
		producerCount:   int(int32(o.producers * o.producerChannels)),
		minMsgSize:      o.minMsgSize,
		intervalSecs:    o.interval,
		compact:         o.metricsFormat == "compact",
		csvPath:         o.outputFile,
		recovery:        !o.disableRecovery,
		recoveryDelay:   o.recoveryDelay,
		consumerConns:   max(o.consumers, 0),
		producerConns:   max(o.producers, 0),
	}
	p.sh = shown{
		sent: o.producers > 0, received: o.consumers > 0,
		returned:  contains(o.flags, "mandatory") || contains(o.flags, "immediate"),
		confirmed: o.confirm != -1, millis: o.useMillis, legacy: o.legacyMetrics,
	}
	p.queue = queueSettings{
		durable: contains(o.flags, "persistent"), autoDelete: o.autoDelete, exclusive: o.exclusive,
		args: amqp.Table(o.queueArgs),
	}
	p.verifyBroker = o.useDefaultSSLContext
	p.saslExternal = o.saslExternal
	p.instances = instanceSync{expected: o.expectedInstances, testID: id, namespace: o.syncNamespace,
		timeout: time.Duration(o.syncTimeout) * time.Second, tick: 5 * time.Second}
	p.serverNames = o.serverNames
	p.sendBuffer, p.receiveBuffer, p.noDelay = o.sendBuffer, o.receiveBuffer, o.tcpNoDelay
	verbose := quietMessages
	switch {
	case o.verboseFull:
		verbose = verboseFullMessages
	case o.verbose:
		verbose = verboseMessages
	}
	bodies := bodySettings{kind: timeSequenceBodies}
	switch {
	case len(o.bodyFiles) > 0:
		bodies = bodySettings{kind: fileBodies, files: o.bodyFiles, contentType: o.bodyContentType}
	case o.jsonBody:
		bodies = bodySettings{kind: jsonBodies, fieldCount: o.bodyFieldCount, count: o.bodyCount}
	}
	runKey := o.routingKey
	if runKey == "" {
		runKey = randomUUID()
	}
	// The queues clients are spread over: a pattern or a file (client i
	// uses queue i mod n, keyed by its name), else -u (every consumer
	// channel uses all of them), else one server-named queue per consumer.
	var sequence []string
	if o.queuePattern != "" {
		for i := o.patternFrom; i <= o.patternTo; i++ {
			name, _ := javaFormatInt(o.queuePattern, i)
			sequence = append(sequence, name)
		}
	}
	if sequence != nil {
		for _, q := range sequence {
			key := q
			if o.routingKey != "" {
				key = o.routingKey
			}
			p.upfront = append(p.upfront, queueBinding{queue: q, key: key})
		}
	} else if o.queues != nil && o.consumers <= 0 {
		for _, q := range o.queues {
			p.upfront = append(p.upfront, queueBinding{queue: q, key: runKey})
		}
	}
	keyOf := func(i int) string {
		if sequence != nil && o.routingKey == "" {
			return sequence[i%len(sequence)]
		}
		return runKey
	}
	n := 0
	for c := 0; c < o.consumers; c++ {
		for ch := 0; ch < o.consumerChannels; ch++ {
			cp := consumerPlan{
				conn: c, channel: ch, autoAck: o.autoAck, multiAckEvery: o.multiAckEvery,
				prefetch: o.consumerPrefetch, globalPrefetch: o.channelPrefetch,
				msgCount: o.consumerMsgCount, rate: o.consumerRate, latencyMicros: o.consumerLatencyMicros,
				nack: o.nack, requeue: o.requeue, useMillis: o.useMillis, dropZeroLatency: rel.dropZeroLatency,
				routingKey: keyOf(n), txSize: o.consumerTx, exitWhen: o.exitWhen, args: amqp.Table(o.consumerArgs),
				index: n, latencies: newSchedule(o.variableLatencies), polling: o.polling,
				pollInterval:      time.Duration(max(o.pollingInterval, 0)) * time.Millisecond,
				timestampInHeader: bodies.kind != timeSequenceBodies, verbose: verbose,
			}
			switch {
			case sequence != nil:
				cp.queues = []string{sequence[n%len(sequence)]}
			case o.queues != nil:
				cp.queues = o.queues
				for _, q := range o.queues {
					cp.declare = append(cp.declare, queueBinding{queue: q, key: runKey})
				}
			default:
				cp.declareOwn = !o.predeclared
				cp.bindKey = runKey
			}
			p.consumers = append(p.consumers, cp)
			n++
		}
	}
	rate := o.producerRate
	if len(o.variableRates) > 0 {
		// -vr replaces -r; the producer follows its schedule.
		rate = -1
	}
	n = 0
	for c := 0; c < o.producers; c++ {
		for ch := 0; ch < o.producerChannels; ch++ {
			p.producers = append(p.producers, producerPlan{
				conn: c, channel: ch, routingKey: keyOf(n), randomKey: o.randomRoutingKey,
				mandatory: contains(o.flags, "mandatory"), persistent: contains(o.flags, "persistent"),
				rate: rate, msgCount: o.producerMsgCount, confirm: o.confirm, txSize: o.producerTx,
				every:       time.Duration(o.publishingInterval * float64(time.Second)),
				startDelay:  time.Duration(max(o.producerStartDelay, 0)) * time.Second,
				confirmWait: time.Duration(o.confirmTimeout) * time.Second,
				size:        o.minMsgSize, useMillis: o.useMillis, exchange: o.exchangeName,
				declareExchange: p.declareExchange,
				index:           n, keyCache: o.routingKeyCacheSize,
				rates: newSchedule(o.variableRates), sizes: newSchedule(o.variableSizes),
				bodies: bodies, properties: o.messageProperties, verbose: verbose,
			})
			n++
		}
	}
	if o.producerMsgCount > 0 {
		p.countLimits += len(p.producers)
	}
	if o.consumerMsgCount > 0 || o.exitWhen != "" {
		p.countLimits += len(p.consumers)
	}
	p.consumerStartDelay = time.Duration(max(o.consumerStartDelay, 0)) * time.Second
	p.procs = procsFor(p)
	return p
}

// streamsPerProc is how many message streams one thread of Go code
// serves. A RabbitMQ queue is one Erlang process, so one queue (or one
// producer channel) moves some tens of thousands of messages a second at
// most, while the client's work for a message is a few microseconds: one
// thread keeps up with several such streams. More threads than that cost
// more CPU per message than they add in rate: every hand-off between the
// reading, dispatching and sending goroutines of amqp091-go then wakes an
// idle thread (a futex call and a spin) instead of running next on the
// same one, which at GOMAXPROCS 2 was about a third of the client's CPU
// per message, flat out with one queue.
const streamsPerProc = 4

// procsFor is a plan's procs: at least 1, and a thread for each consumer
// that busy-waits (-L or -vl below a millisecond, as PerfTest's consumer
// threads spin) plus one for the rest.
func procsFor(p *plan) int {
	queues := map[string]bool{}
	own, spinning := 0, 0
	for _, cp := range p.consumers {
		if cp.declareOwn {
			own++
		}
		for _, q := range cp.queues {
			queues[q] = true
		}
		if busyWaits(cp) {
			spinning++
		}
	}
	streams := max(len(queues)+own, len(p.producers), 1)
	procs := (streams + streamsPerProc - 1) / streamsPerProc
	if spinning > 0 {
		procs = max(procs, spinning+1)
	}
	return procs
}

// busyWaits reports whether a consumer's simulated processing spins (a
// latency between 0 and 1 ms) rather than sleeps.
func busyWaits(cp consumerPlan) bool {
	spins := func(us int64) bool { return us > 0 && us < 1000 }
	if cp.latencies != nil {
		for _, v := range cp.latencies.values {
			if spins(v) {
				return true
			}
		}
		return false
	}
	return spins(int64(cp.latencyMicros))
}

// javaFormatInt is String.format(pattern, i) for the one-integer patterns
// queue patterns are ("queue-%d", "q-%03d"), with the exception Java's
// Formatter throws for a pattern it refuses (a second argument asked for,
// an unknown conversion, a conversion an Integer does not take).
func javaFormatInt(pattern string, i int) (string, *jvm.Exception) {
	var b strings.Builder
	next := 0 // the ordinary index of the next argument
	for pos := 0; pos < len(pattern); {
		pct := strings.IndexByte(pattern[pos:], '%')
		if pct < 0 {
			b.WriteString(pattern[pos:])
			break
		}
		b.WriteString(pattern[pos : pos+pct])
		pos += pct
		m := javaSpecifier.FindStringSubmatch(pattern[pos:])
		if m == nil {
			conv := "%"
			if pos+1 < len(pattern) {
				conv = pattern[pos+1 : pos+2]
			}
			return "", &jvm.Exception{Class: "java.util.UnknownFormatConversionException", Message: "Conversion = '" + conv + "'"}
		}
		pos += len(m[0])
		index, flags, width, prec, conv := m[1], m[2], m[3], m[4], m[6]
		switch conv {
		case "%":
			b.WriteString(pad("%", flags, width))
			continue
		case "n":
			b.WriteString("\n")
			continue
		}
		argIndex := next
		if index != "" {
			argIndex, _ = strconv.Atoi(strings.TrimSuffix(index, "$"))
			argIndex--
		} else {
			next++
		}
		if m[5] != "" || !strings.Contains("dxXosShHbBc", conv) {
			if strings.Contains("eEfgGaAtT", conv) || m[5] != "" {
				return "", &jvm.Exception{Class: "java.util.IllegalFormatConversionException", Message: strings.ToLower(m[5]) + conv + " != java.lang.Integer"}
			}
			return "", &jvm.Exception{Class: "java.util.UnknownFormatConversionException", Message: "Conversion = '" + conv + "'"}
		}
		if argIndex != 0 {
			return "", &jvm.Exception{Class: "java.util.MissingFormatArgumentException", Message: "Format specifier '" + m[0] + "'"}
		}
		var s string
		switch conv {
		case "d":
			s = strconv.Itoa(i)
			if strings.Contains(flags, "+") && i >= 0 {
				s = "+" + s
			} else if strings.Contains(flags, " ") && i >= 0 {
				s = " " + s
			}
			if strings.Contains(flags, "0") && width != "" && !strings.Contains(flags, "-") {
				w, _ := strconv.Atoi(width)
				neg := strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") || strings.HasPrefix(s, " ")
				sign := ""
				if neg {
					sign, s = s[:1], s[1:]
				}
				for len(sign)+len(s) < w {
					s = "0" + s
				}
				s = sign + s
			}
		case "x", "X", "h", "H":
			s = strconv.FormatUint(uint64(uint32(int32(i))), 16)
			if strings.Contains(flags, "#") && (conv == "x" || conv == "X") {
				s = "0x" + s
			}
			if conv == "X" || conv == "H" {
				s = strings.ToUpper(s)
			}
		case "o":
			s = strconv.FormatUint(uint64(uint32(int32(i))), 8)
		case "s", "S":
			s = strconv.Itoa(i)
		case "b", "B":
			s = "true"
		case "c":
			s = string(rune(i))
		}
		if prec != "" && strings.Contains("sShHbB", conv) {
			if n, _ := strconv.Atoi(prec[1:]); n < len(s) {
				s = s[:n]
			}
		}
		if conv == "S" || conv == "B" {
			s = strings.ToUpper(s)
		}
		b.WriteString(pad(s, flags, width))
	}
	return b.String(), nil
}

// javaSpecifier is java.util.Formatter's format specifier.
var javaSpecifier = regexp.MustCompile(`^%(\d+\$)?([-#+ 0,(<]*)?(\d+)?(\.\d+)?([tT])?([a-zA-Z%])`)

// pad pads s to width, on the left unless flags has '-'.
func pad(s, flags, width string) string {
	w, _ := strconv.Atoi(width)
	for len(s) < w {
		if strings.Contains(flags, "-") {
			s += " "
		} else {
			s = " " + s
		}
	}
	return s
}

// shown says which parts of a report line a run has, fixed for the run
// as PerfTest fixes them when it creates its stats.
type shown struct {
	sent, returned, confirmed, received bool
	// millis: latencies are ms ("-ms"), else µs.
	millis bool
	// legacy: 2.18's -l (min/avg/max instead of percentiles).
	legacy bool
}

func (s shown) consumerLatency() bool { return s.received }
func (s shown) confirmLatency() bool  { return s.sent && s.confirmed }

func (s shown) unit() string {
	if s.millis {
		return "ms"
	}
	return "µs"
}
