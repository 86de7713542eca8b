package perftest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/perfclones/perfclones/internal/javaopts"
	"github.com/perfclones/perfclones/internal/jvm"
	"github.com/perfclones/perfclones/internal/latency"
)

// PerfTest's metrics options (-mt, -mpx, -mc, -mjp, -mpr, -mda, -mcla and
// 2.19+'s -em) publish the run's meters as its Micrometer registries do:
// a Prometheus scrape endpoint and a Datadog push every step, with the
// same meter names, types, tags and units. The meters read the run's
// counters and each interval's histograms; nothing here counts.

// metricsSettings are the metrics options as PerfTest's metrics set-up
// reads them.
type metricsSettings struct {
	tags      []metricTag // -mt, in the order given
	prefix    string      // -mpx
	client    bool        // -mc: the AMQP client's counters
	processor bool        // -mjp: CPU counts and usage
	// prometheus is -mpr, served on promPort at promPath.
	prometheus bool
	promPort   int
	promPath   string
	// datadog is -mda: a push to ddURI every ddStep.
	datadog                      bool
	ddKey, ddAppKey, ddHostTag   string
	ddURI                        string
	ddStep                       time.Duration
	ddDescriptions               bool
	commandLine                  string          // -mcla: the label's value; "" without
	exposed                      []exposedMetric // -em, in the order given
	expectedPublished            bool            // a perftest_expected_published gauge exists
	expectedPublishedFixed       float64         // its value when -em sets it
	expectedPublishedFromOptions bool            // else derived from the rate options
	expectedConsumed             bool
	expectedConsumedFixed        float64
	expectedConsumedFromOptions  bool
	// noEquivalent are the options given that only a JVM can act on.
	noEquivalent []string
	// mu guards the -em gauges, read once the registries serve.
	mu sync.Mutex
}

type metricTag struct{ key, value string }

type exposedMetric struct {
	name  string
	value float64
}

// jvmOnlyMetricsOptions: JMX, and the JVM's memory pools, garbage
// collectors, threads and class loader. Their meters are the JVM's own
// (pool ids such as "G1 Eden Space", gc="G1 Young Generation", Java thread
// states, loaded classes); a Go process has none of these things, and
// numbers of another kind under those names would mislead a dashboard.
var jvmOnlyMetricsOptions = []string{"mjx", "mjm", "mjgc", "mjt", "mcl"}

// readMetricsSettings reads the metrics options of line (args as given,
// for -mcla), in the order PerfTest's metrics set-up reads them; the
// exception is what it throws for a value it refuses.
func readMetricsSettings(c *commandLine, args []string) (*metricsSettings, *jvm.Exception) {
	m := &metricsSettings{prefix: c.str("mpx", "perftest_")}
	if t := c.str("mt", ""); strings.TrimSpace(t) != "" {
		for _, pair := range javaSplit(t, ",") {
			// split("=", 2) keeps an empty value; a pair without "="
			// has no element 1.
			kv := strings.SplitN(pair, "=", 2)
			if len(kv) < 2 {
				return nil, &jvm.Exception{Class: "java.lang.ArrayIndexOutOfBoundsException", Message: "Index 1 out of bounds for length 1"}
			}
			m.tags = append(m.tags, metricTag{key: kv[0], value: kv[1]})
		}
	}
	m.client, m.processor = c.has("mc"), c.has("mjp")
	for _, key := range jvmOnlyMetricsOptions {
		if c.has(key) {
			m.noEquivalent = append(m.noEquivalent, "-"+key)
		}
	}
	if c.has("mpr") {
		m.prometheus = true
		port, err := javaopts.ParseJavaInt(c.str("mpp", "8080"))
		if err != nil {
			return nil, &jvm.Exception{Class: "java.lang.NumberFormatException", Message: err.Error()}
		}
		m.promPort = int(port)
		m.promPath = c.str("mpe", "metrics")
		if !strings.HasPrefix(m.promPath, "/") {
			m.promPath = "/" + m.promPath
		}
	}
	if c.has("mda") {
		if e := m.readDatadog(c); e != nil {
			return nil, e
		}
	}
	if c.has("mcla") {
		m.commandLine = commandLineLabel(args)
	}
	return m, nil
}

// readDatadog checks the Datadog settings as Micrometer's Datadog
// registry does when it is created: the step is read first, then the API
// key and URI are validated together, then the step is used.
func (m *metricsSettings) readDatadog(c *commandLine) *jvm.Exception {
	m.datadog = true
	step, err := javaopts.ParseJavaInt(c.str("mds", "10"))
	if err != nil {
		return &jvm.Exception{Class: "java.lang.NumberFormatException", Message: err.Error()}
	}
	key, hasKey := c.lookupValue("mdk")
	m.ddKey, m.ddAppKey, m.ddHostTag = key, c.str("mdak", ""), c.str("mdh", "")
	m.ddDescriptions = c.has("mdd")
	m.ddURI = c.str("mdu", "https://app.datadoghq.com")
	var failures []string
	if !hasKey {
		failures = append(failures, "datadog.apiKey was 'null' but it is required")
	}
	if !javaURL(m.ddURI) {
		failures = append(failures, "datadog.uri was '"+m.ddURI+"' but it must be a valid URL")
	}
	switch {
	case len(failures) == 1:
		return &jvm.Exception{Class: "io.micrometer.core.instrument.config.validate.ValidationException", Message: failures[0]}
	case len(failures) > 1:
		return &jvm.Exception{Class: "io.micrometer.core.instrument.config.validate.ValidationException",
			Message: "Multiple validation failures:\n" + strings.Join(failures, "\n")}
	case step == 0:
		// The push schedule's start is the time modulo the step.
		return &jvm.Exception{Class: "java.lang.ArithmeticException", Message: "/ by zero"}
	case step < 0:
		return &jvm.Exception{Class: "java.lang.IllegalArgumentException"}
	}
	m.ddStep = time.Duration(step) * time.Second
	return nil
}

// javaURL: new java.net.URL(s) accepts s, that is s has a scheme the JDK
// has a handler for.
func javaURL(s string) bool {
	scheme, _, ok := strings.Cut(s, ":")
	if !ok {
		return false
	}
	switch strings.ToLower(scheme) {
	case "http", "https", "ftp", "file", "jar", "jrt", "mailto":
		return true
	}
	return false
}

// readExpected reads -em (2.19+), once the registries have started: each
// key=value pair a fixed gauge prefix+key, where expected_published and
// expected_consumed replace the gauges PerfTest otherwise derives from the
// rate options.
func (m *metricsSettings) readExpected(d *diff, c *commandLine, o *options) *jvm.Exception {
	if !ownOption(d, "em") {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var pairs [][2]string
	if v := c.str("em", ""); strings.TrimSpace(v) != "" {
		for _, entry := range javaSplit(v, ",") {
			kv := javaSplit(entry, "=")
			if len(kv) == 0 {
				return &jvm.Exception{Class: "java.lang.ArrayIndexOutOfBoundsException", Message: "Index 1 out of bounds for length 0"}
			}
			value := ""
			if len(kv) > 1 {
				value = kv[1]
			}
			// A key given twice keeps its first place and its last value.
			seen := false
			for i := range pairs {
				if pairs[i][0] == kv[0] {
					pairs[i][1], seen = value, true
				}
			}
			if !seen {
				pairs = append(pairs, [2]string{kv[0], value})
			}
		}
	}
	for _, kv := range pairs {
		f, err := javaopts.ParseJavaDouble(kv[1])
		if err != nil {
			return &jvm.Exception{Class: "java.lang.NumberFormatException", Message: err.Error()}
		}
		switch kv[0] {
		case "expected_published":
			m.expectedPublished, m.expectedPublishedFixed = true, f
		case "expected_consumed":
			m.expectedConsumed, m.expectedConsumedFixed = true, f
		default:
			m.exposed = append(m.exposed, exposedMetric{name: kv[0], value: f})
		}
	}
	if !m.expectedPublished && (o.producerRate >= 0 || len(o.variableRates) > 0 || o.publishingInterval > 0) {
		m.expectedPublished, m.expectedPublishedFromOptions = true, true
	}
	if !m.expectedConsumed && o.consumerRate > 0 {
		m.expectedConsumed, m.expectedConsumedFromOptions = true, true
	}
	return nil
}

// commandLineLabel is -mcla's label: the arguments as given, without the
// metrics options (each written exactly as -short or --long, with the
// argument after it) and without -h or --uri, which may carry credentials.
func commandLineLabel(args []string) string {
	var kept []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch hasArg, filtered := filteredFromLabel(a); {
		case !filtered:
			kept = append(kept, a)
		case hasArg:
			i++
		}
	}
	return strings.Join(kept, " ")
}

// filteredFromLabel: a is -h, --uri or a metrics option, and whether it
// takes an argument.
func filteredFromLabel(a string) (hasArg, filtered bool) {
	if a == "-h" || a == "--uri" {
		return true, true
	}
	for _, rel := range releases.List {
		for _, o := range rel.Diff.metricsTable {
			if a == "-"+o.Short || (o.Long != "" && a == "--"+o.Long) {
				return o.Arg != javaopts.CommonsNoArg, true
			}
		}
	}
	return false, false
}

// notice names, on stderr, the options given that have no equivalent.
func (m *metricsSettings) notice() string {
	if len(m.noEquivalent) == 0 {
		return ""
	}
	return "perfclones: perftest accepts " + strings.Join(m.noEquivalent, ", ") +
		" but has no equivalent (JVM-only metrics: JMX, memory pools, garbage collectors, threads, class loader); nothing is exposed for them\n"
}

// enabled: some registry publishes the meters.
func (m *metricsSettings) enabled() bool { return m.prometheus || m.datadog }

// metricsExport is the run's meters and the registries that publish them.
type metricsExport struct {
	s        *metricsSettings
	p        *plan
	o        *options
	started  time.Time
	listener net.Listener
	server   *http.Server
	stopPush chan struct{}
	pushDone chan struct{}
	client   *http.Client

	mu sync.Mutex
	r  *runner // nil until the run has its counters
	// rates are the last interval's published, confirmed, nacked,
	// returned and consumed rates (msg/s), PerfTest's gauges.
	rates            [5]float64
	consume, confirm timerMeter
	confirmSize      timerMeter // a distribution summary: confirms per frame
	cpu              cpuSampler
	ddCounters       map[string]float64 // counter values at the last push
	ddMetadataSent   bool
}

// timerMeter is a Micrometer timer fed one interval at a time: total count
// and sum, and the last interval's distribution (its percentiles and max);
// step* are what a Datadog step has seen.
type timerMeter struct {
	count             int64
	sumMicros         float64
	last              *latency.Snapshot
	stepCount         int64
	stepSum, stepMaxU float64
}

func (t *timerMeter) add(s *latency.Snapshot) {
	n := s.TotalCount()
	t.last = s
	if n == 0 {
		return
	}
	sum := s.Mean() * float64(n)
	t.count += n
	t.sumMicros += sum
	t.stepCount += n
	t.stepSum += sum
	t.stepMaxU = math.Max(t.stepMaxU, float64(s.Max()))
}

func (t *timerMeter) quantile(p float64) float64 {
	if t.last == nil || t.last.TotalCount() == 0 {
		return 0
	}
	return float64(t.last.ValueAtPercentile(p))
}

func (t *timerMeter) max() float64 {
	if t.last == nil || t.last.TotalCount() == 0 {
		return 0
	}
	return float64(t.last.Max())
}

// startMetrics starts the registries: the Prometheus endpoint listens
// from here on, before the run connects, as PerfTest's does. The
// exception and its cause are what PerfTest throws when it cannot.
func startMetrics(s *metricsSettings, p *plan, o *options) (*metricsExport, *jvm.Exception, []jvm.Exception) {
	m := &metricsExport{s: s, p: p, o: o, started: time.Now(), client: &http.Client{Timeout: 10 * time.Second}}
	m.cpu.init()
	if s.prometheus {
		if s.promPort < 0 || s.promPort > 65535 {
			return nil, &jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: fmt.Sprintf("port out of range:%d", s.promPort)}, nil
		}
		ln, err := net.Listen("tcp", ":"+strconv.Itoa(s.promPort))
		if err != nil {
			cause := jvm.Exception{Class: "java.net.BindException", Message: "Address already in use"}
			var errno syscall.Errno
			if errors.As(err, &errno) && errno != syscall.EADDRINUSE {
				// The C library's text, as Java's message carries it.
				text := errno.Error()
				cause.Message = strings.ToUpper(text[:1]) + text[1:]
			}
			if !p.rel.metricsRefactor {
				// 2.18 serves with Jetty, whose connector reports the
				// address it could not bind.
				return nil, &jvm.Exception{Class: "java.io.IOException", Message: "Failed to bind to 0.0.0.0/0.0.0.0:" + strconv.Itoa(s.promPort)}, []jvm.Exception{cause}
			}
			return nil, &jvm.Exception{Class: "com.rabbitmq.perf.PerfTestException", Message: "Error while starting Prometheus HTTP server"}, []jvm.Exception{cause}
		}
		m.listener = ln
		mux := http.NewServeMux()
		mux.HandleFunc("/", m.serveScrape)
		m.server = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = m.server.Serve(ln) }()
	}
	if s.datadog {
		m.stopPush, m.pushDone = make(chan struct{}), make(chan struct{})
		go m.pushLoop()
	}
	return m, nil, nil
}

// attach gives the meters the run's counters.
func (m *metricsExport) attach(r *runner) {
	m.mu.Lock()
	m.r = r
	m.mu.Unlock()
}

// interval takes one report's rates and histograms.
func (m *metricsExport) interval(rates [5]float64, consume, confirm, confirmSizes *latency.Snapshot) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rates = rates
	m.consume.add(consume)
	m.confirm.add(confirm)
	m.confirmSize.add(confirmSizes)
}

// idle is an interval with no activity (2.19+): the publish and confirm
// rates go back to 0, as PerfTest resets those gauges.
func (m *metricsExport) idle() {
	m.mu.Lock()
	m.rates[0], m.rates[2] = 0, 0
	m.mu.Unlock()
}

// close ends the endpoint and sends the last Datadog step.
func (m *metricsExport) close() {
	if m.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = m.server.Shutdown(ctx)
		cancel()
	}
	if m.stopPush != nil {
		close(m.stopPush)
		<-m.pushDone
	}
}

func (m *metricsExport) serveScrape(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != m.s.promPath && !strings.HasPrefix(req.URL.Path, strings.TrimSuffix(m.s.promPath, "/")+"/") {
		http.NotFound(w, req)
		return
	}
	body := prometheusText(m.meters(), m.commonTags())
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write([]byte(body))
}

// meterKind is how a meter is published.
type meterKind int

const (
	gaugeMeter   meterKind = iota
	counterMeter           // cumulative
	timerKind              // a Micrometer timer, in seconds
	summaryKind            // a distribution summary, no unit
)

// meterValue is one Micrometer meter: its dotted name, description, tags
// beyond the common ones, and value (or timer).
type meterValue struct {
	name, help string
	kind       meterKind
	baseUnit   string // a counter's or gauge's unit suffix ("ns")
	tags       []metricTag
	value      float64
	timer      *timerMeter
}

// meters reads every meter now.
func (m *metricsExport) meters() []meterValue {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.metersLocked()
}

// metersLocked is meters with m.mu held.
func (m *metricsExport) metersLocked() []meterValue {
	px := m.s.prefix
	var out []meterValue
	for i, name := range []string{"published", "confirmed", "nacked", "returned", "consumed"} {
		out = append(out, meterValue{name: px + name, value: m.rates[i]})
	}
	consume, confirm, confirmSize := m.consume, m.confirm, m.confirmSize
	out = append(out,
		meterValue{name: px + "latency", help: "message latency", kind: timerKind, timer: &consume},
		meterValue{name: px + "confirm.latency", help: "confirm latency", kind: timerKind, timer: &confirm})
	if m.p.rel.metricsRefactor {
		// 2.22.1 has it (its scrape, testdata/prometheus-2.22.1.txt) and
		// 2.18 has not (the spec); 2.19's metrics rework stands for the
		// release between that added it.
		out = append(out, meterValue{name: px + "confirm.size", help: "number of confirms received per confirm frame", kind: summaryKind, timer: &confirmSize})
	}
	if m.s.commandLine != "" {
		out = append(out, meterValue{name: px + "args", tags: []metricTag{{"command_line", m.s.commandLine}}, value: 1})
	}
	m.s.mu.Lock()
	if m.s.expectedPublished {
		out = append(out, meterValue{name: px + "expected_published", value: m.expectedPublished()})
	}
	if m.s.expectedConsumed {
		v := m.s.expectedConsumedFixed
		if m.s.expectedConsumedFromOptions {
			v = float64(m.p.consumerCount) * m.o.consumerRate
		}
		out = append(out, meterValue{name: px + "expected_consumed", value: v})
	}
	for _, e := range m.s.exposed {
		out = append(out, meterValue{name: px + e.name, value: e.value})
	}
	m.s.mu.Unlock()
	if m.s.client {
		out = append(out, m.clientMeters()...)
	}
	if m.s.processor {
		out = append(out, m.cpu.meters()...)
	}
	return out
}

// expectedPublished is the publishing rate the options ask of all the
// producers: -r each, or the -vr rate of the moment, or one message per
// publishing period. PerfTest publishes a fixed -r from 1 to 10 on a
// period of 1/r s too, and divides by the period's whole seconds
// (Duration.getSeconds), so that a period under a second gives +Inf.
func (m *metricsExport) expectedPublished() float64 {
	if !m.s.expectedPublishedFromOptions {
		return m.s.expectedPublishedFixed
	}
	producers := float64(m.p.producerCount)
	rate := m.o.producerRate
	switch {
	case m.o.publishingInterval > 0:
		return producers / math.Floor(m.o.publishingInterval)
	case len(m.o.variableRates) > 0:
		return producers * variableRateAt(m.o.variableRates, time.Since(m.started))
	case rate >= 1 && rate <= 10:
		periodMs := math.Trunc(1 / rate * 1000)
		return producers / math.Floor(periodMs/1000)
	}
	return producers * rate
}

// variableRateAt is the -vr rate in force after elapsed: the RATE:SECONDS
// steps in turn, over again after the last.
func variableRateAt(steps []string, elapsed time.Duration) float64 {
	var rates, secs []float64
	total := 0.0
	for _, s := range steps {
		r, d, _ := strings.Cut(s, ":")
		rv, _ := strconv.ParseFloat(r, 64)
		dv, _ := strconv.ParseFloat(d, 64)
		rates, secs = append(rates, rv), append(secs, dv)
		total += dv
	}
	if total <= 0 {
		return 0
	}
	at := math.Mod(elapsed.Seconds(), total)
	for i, d := range secs {
		if at < d {
			return rates[i]
		}
		at -= d
	}
	return rates[len(rates)-1]
}

// clientMeters are the Java client's metrics collector's meters, read
// from the run's counters: what it publishes and consumes, the broker's
// confirms, nacks and returns, the consumers' acks (or nacks), and the
// open connections and channels.
func (m *metricsExport) clientMeters() []meterValue {
	var published, failed, consumed, confirmed, nacked, returned float64
	connections := 0
	if m.r != nil {
		c := m.r.c
		published, failed, consumed = float64(c.published.Load()), float64(c.publishFailed.Load()), float64(c.received.Load())
		confirmed, nacked, returned = float64(c.confirmed.Load()), float64(c.nacked.Load()), float64(c.returned.Load())
		m.r.mu.Lock()
		for _, conn := range m.r.conns {
			if !conn.IsClosed() {
				connections++
			}
		}
		m.r.mu.Unlock()
	}
	var acked, rejected, requeued float64
	switch {
	case m.o.autoAck:
	case m.o.nack:
		rejected = consumed
		if m.o.requeue {
			requeued = consumed
		}
	default:
		acked = consumed
	}
	channels := 0.0
	if connections > 0 {
		channels = float64(m.p.producerCount + m.p.consumerCount)
	}
	return []meterValue{
		{name: "client.connections", value: float64(connections)},
		{name: "client.channels", value: channels},
		{name: "client.published", kind: counterMeter, value: published},
		{name: "client.failed_to_publish", kind: counterMeter, value: failed},
		{name: "client.consumed", kind: counterMeter, value: consumed},
		{name: "client.acknowledged", kind: counterMeter, value: acked},
		{name: "client.rejected", kind: counterMeter, value: rejected},
		{name: "client.requeued", kind: counterMeter, value: requeued},
		{name: "client.acknowledged_published", kind: counterMeter, value: confirmed},
		{name: "client.not_acknowledged_published", kind: counterMeter, value: nacked},
		{name: "client.unrouted_published", kind: counterMeter, value: returned},
	}
}

// cpuSampler is Micrometer's processor metrics for this process: the CPU
// count, the load average, and the system's and the process's recent CPU
// usage (since the previous reading) and the process's CPU time.
type cpuSampler struct {
	lastWall          time.Time
	lastProc          time.Duration
	lastBusy, lastAll uint64
}

func (c *cpuSampler) init() {
	c.lastWall, c.lastProc = time.Now(), processCPU()
	c.lastBusy, c.lastAll = systemCPU()
}

func (c *cpuSampler) meters() []meterValue {
	now, proc := time.Now(), processCPU()
	busy, all := systemCPU()
	n := float64(runtime.NumCPU())
	procUsage := 0.0
	if wall := now.Sub(c.lastWall); wall > 0 {
		procUsage = float64(proc-c.lastProc) / float64(wall) / n
	}
	sysUsage := 0.0
	if all > c.lastAll {
		sysUsage = float64(busy-c.lastBusy) / float64(all-c.lastAll)
	}
	c.lastWall, c.lastProc, c.lastBusy, c.lastAll = now, proc, busy, all
	return []meterValue{
		{name: "system.cpu.count", help: "The number of processors available to the Java virtual machine", value: n},
		{name: "system.load.average.1m", help: "The sum of the number of runnable entities queued to available processors and the number of runnable entities running on the available processors averaged over a period of time", value: loadAverage()},
		{name: "system.cpu.usage", help: "The \"recent cpu usage\" of the system the application is running in", value: sysUsage},
		{name: "process.cpu.usage", help: "The \"recent cpu usage\" for the Java Virtual Machine process", value: procUsage},
		{name: "process.cpu.time", help: "The \"cpu time\" used by the Java Virtual Machine process", kind: counterMeter, baseUnit: "ns", value: float64(proc)},
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// systemCPU is /proc/stat's cpu line: busy and all jiffies.
func systemCPU() (busy, all uint64) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	for i, f := range fields[1:] {
		v, _ := strconv.ParseUint(f, 10, 64)
		all += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, all
}

func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
	return f
}

// prometheusName is a dotted meter name as Micrometer's Prometheus
// naming writes it.
func prometheusName(name string) string { return strings.ReplaceAll(name, ".", "_") }

// commonTags are -mt's tags, a key given twice with its last value.
func (m *metricsExport) commonTags() []metricTag {
	at := map[string]int{}
	var tags []metricTag
	for _, t := range m.s.tags {
		if i, ok := at[t.key]; ok {
			tags[i] = t
			continue
		}
		at[t.key] = len(tags)
		tags = append(tags, t)
	}
	return tags
}

// prometheusText is the registry's scrape, version 0.0.4 of the text
// format: families by name, each with its HELP (a blank one when the
// meter has no description) and TYPE, the common tags and the meter's
// own as labels in key order.
func prometheusText(meters []meterValue, common []metricTag) string {
	sort.SliceStable(meters, func(i, j int) bool { return prometheusName(meters[i].name) < prometheusName(meters[j].name) })
	var b strings.Builder
	family := func(name, typ, help string) {
		if help == "" {
			help = " "
		}
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	for _, mt := range meters {
		base := prometheusName(mt.name)
		labels := func(extra ...metricTag) string {
			return promLabels(append(append(append([]metricTag{}, common...), mt.tags...), extra...))
		}
		switch mt.kind {
		case gaugeMeter:
			family(base, "gauge", mt.help)
			fmt.Fprintf(&b, "%s%s %s\n", base, labels(), promValue(mt.value))
		case counterMeter:
			name := base
			if mt.baseUnit != "" {
				name += "_" + mt.baseUnit
			}
			name += "_total"
			family(name, "counter", mt.help)
			fmt.Fprintf(&b, "%s%s %s\n", name, labels(), promValue(mt.value))
		case timerKind, summaryKind:
			// Timers record µs and publish seconds (dividing, so that
			// 644 µs is 6.44E-4, not a rounding error of it).
			name, per := base, 1.0
			if mt.kind == timerKind {
				name, per = base+"_seconds", 1e6
			}
			t := mt.timer
			family(name, "summary", mt.help)
			for _, q := range [...]struct {
				label string
				p     float64
			}{{"0.5", 50}, {"0.75", 75}, {"0.95", 95}, {"0.99", 99}} {
				fmt.Fprintf(&b, "%s%s %s\n", name, labels(metricTag{"quantile", q.label}), promValue(t.quantile(q.p)/per))
			}
			fmt.Fprintf(&b, "%s_count%s %d\n", name, labels(), t.count)
			fmt.Fprintf(&b, "%s_sum%s %s\n", name, labels(), promValue(t.sumMicros/per))
			family(name+"_max", "gauge", mt.help)
			fmt.Fprintf(&b, "%s_max%s %s\n", name, labels(), promValue(t.max()/per))
		}
	}
	return b.String()
}

// promLabels writes labels sorted by key, but quantile last, as the
// Prometheus client does.
func promLabels(tags []metricTag) string {
	if len(tags) == 0 {
		return ""
	}
	sort.SliceStable(tags, func(i, j int) bool {
		if (tags[i].key == "quantile") != (tags[j].key == "quantile") {
			return tags[j].key == "quantile"
		}
		return tags[i].key < tags[j].key
	})
	parts := make([]string, len(tags))
	for i, t := range tags {
		v := strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(t.value)
		parts[i] = t.key + `="` + v + `"`
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// promValue is a sample value as the Prometheus Java client writes it:
// Java's Double.toString, with +Inf, -Inf and NaN.
func promValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return javaDoubleString(v)
}

// javaDoubleString is Double.toString: the shortest digits that read back
// as v, plain from 10^-3 up to 10^7, else d.dddE±n.
func javaDoubleString(v float64) string {
	if v == 0 {
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	e := strconv.FormatFloat(v, 'e', -1, 64) // d.ddde±XX
	mant, exps, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(exps)
	digits := strings.Replace(mant, ".", "", 1)
	if v >= 1e-3 && v < 1e7 {
		var s string
		if exp >= 0 {
			if len(digits) <= exp+1 {
				s = digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
			} else {
				s = digits[:exp+1] + "." + digits[exp+1:]
			}
		} else {
			s = "0." + strings.Repeat("0", -exp-1) + digits
		}
		return sign + s
	}
	frac := digits[1:]
	if frac == "" {
		frac = "0"
	}
	return sign + digits[:1] + "." + frac + "E" + strconv.Itoa(exp)
}

// pushLoop sends the Datadog series every step, and once more at the end.
func (m *metricsExport) pushLoop() {
	defer close(m.pushDone)
	t := time.NewTicker(m.s.ddStep)
	defer t.Stop()
	for {
		select {
		case <-m.stopPush:
			m.push()
			return
		case <-t.C:
			m.push()
		}
	}
}

// datadogSeries is one series of a POST to /api/v1/series.
type datadogSeries struct {
	Metric string          `json:"metric"`
	Points json.RawMessage `json:"points"`
	Type   string          `json:"type"`
	Host   string          `json:"host,omitempty"`
	Unit   string          `json:"unit,omitempty"`
	Tags   []string        `json:"tags,omitempty"`
}

// datadogSeriesOf is the step's series as Micrometer's Datadog registry
// writes them: gauges as they are, counters as the step's increase,
// timers (in ms) and summaries as their step's sum, count, average and
// max and their percentiles; metadata are the unit and description of
// the timers' and summaries' statistics, which it also sends when it has
// an application key.
func (m *metricsExport) datadogSeriesOf(meters []meterValue, now time.Time) (series []datadogSeries, metadata map[string][]byte) {
	ts := now.Unix()
	common := m.commonTags()
	metadata = map[string][]byte{}
	if m.ddCounters == nil {
		m.ddCounters = map[string]float64{}
	}
	add := func(mt meterValue, suffix, typ, unit string, value float64, statistic string, extra ...metricTag) {
		tags := append(append(append([]metricTag{}, common...), mt.tags...), extra...)
		if statistic != "" {
			tags = append(tags, metricTag{"statistic", statistic})
		}
		points := json.RawMessage(fmt.Sprintf("[[%d, %s]]", ts, datadogValue(value)))
		s := datadogSeries{Metric: mt.name + suffix, Points: points, Type: typ, Unit: unit}
		for _, t := range tags {
			if m.s.ddHostTag != "" && t.key == m.s.ddHostTag {
				s.Host = t.value
			}
			s.Tags = append(s.Tags, t.key+":"+t.value)
		}
		sort.Strings(s.Tags)
		series = append(series, s)
		if suffix != "" && suffix != ".percentile" && (unit != "" || m.s.ddDescriptions) {
			md, _ := json.Marshal(typ)
			body := `{"type":` + string(md)
			if unit != "" {
				md, _ = json.Marshal(unit)
				body += `,"unit":` + string(md)
			}
			if m.s.ddDescriptions && mt.help != "" {
				md, _ = json.Marshal(mt.help)
				body += `,"description":` + string(md)
			}
			metadata[mt.name+suffix] = []byte(body + "}")
		}
	}
	for _, mt := range meters {
		switch mt.kind {
		case gaugeMeter:
			add(mt, "", "gauge", "", mt.value, "value")
		case counterMeter:
			add(mt, "", "count", "", mt.value-m.ddCounters[mt.name], "count")
			m.ddCounters[mt.name] = mt.value
		case timerKind, summaryKind:
			unit, per := "", 1.0
			if mt.kind == timerKind {
				unit, per = "millisecond", 1e3
			}
			t := mt.timer
			for _, q := range [...]struct {
				phi string
				p   float64
			}{{"0.5", 50}, {"0.75", 75}, {"0.95", 95}, {"0.99", 99}} {
				add(mt, ".percentile", "gauge", unit, t.quantile(q.p)/per, "value", metricTag{"phi", q.phi})
			}
			avg := 0.0
			if t.stepCount > 0 {
				avg = t.stepSum / float64(t.stepCount) / per
			}
			add(mt, ".sum", "count", unit, t.stepSum/per, "")
			add(mt, ".count", "count", "occurrence", float64(t.stepCount), "")
			add(mt, ".avg", "gauge", unit, avg, "")
			add(mt, ".max", "gauge", unit, t.stepMaxU/per, "")
		}
	}
	return series, metadata
}

// push sends one step to <uri>/api/v1/series and, the first time, with
// an application key, the metadata of each statistic to
// <uri>/api/v1/metrics/<name>. Failures are not fatal, as there.
func (m *metricsExport) push() {
	// One reading, so that no interval lands between the series and the
	// reset of the step's counts.
	m.mu.Lock()
	series, metadata := m.datadogSeriesOf(m.metersLocked(), time.Now())
	for _, t := range []*timerMeter{&m.consume, &m.confirm, &m.confirmSize} {
		t.stepCount, t.stepSum, t.stepMaxU = 0, 0, 0
	}
	sendMetadata := m.s.ddAppKey != "" && !m.ddMetadataSent
	m.ddMetadataSent = m.ddMetadataSent || sendMetadata
	m.mu.Unlock()
	body, err := json.Marshal(map[string]any{"series": series})
	if err != nil {
		return
	}
	base := strings.TrimSuffix(m.s.ddURI, "/")
	m.send(http.MethodPost, base+"/api/v1/series?api_key="+url.QueryEscape(m.s.ddKey), body)
	if !sendMetadata {
		return
	}
	names := make([]string, 0, len(metadata))
	for n := range metadata {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		m.send(http.MethodPut, base+"/api/v1/metrics/"+url.PathEscape(n)+"?api_key="+url.QueryEscape(m.s.ddKey)+
			"&application_key="+url.QueryEscape(m.s.ddAppKey), metadata[n])
	}
}

func (m *metricsExport) send(method, target string, body []byte) {
	req, err := http.NewRequest(method, target, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := m.client.Do(req)
	if err != nil {
		return
	}
	_ = resp.Body.Close()
}

// datadogValue is a point's value as the Datadog registry writes it: the
// plain decimal digits (a whole number with ".0"), or Java's Infinity and
// NaN, which Datadog's JSON parser takes.
func datadogValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	case math.IsNaN(v):
		return "NaN"
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
