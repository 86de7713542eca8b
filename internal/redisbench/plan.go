package redisbench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// plan is everything one invocation needs, built once from its Options.
// Connections and workers get the parts they use, never the options.
type plan struct {
	target endpoint
	dialer *dialer
	// auth is the AUTH command of the set-up connections (CONFIG GET,
	// CLUSTER NODES/SLOTS), nil without -a.
	auth []string
	// conn is what every benchmark connection sends first, and how it
	// behaves between batches.
	conn        connPlan
	clusterConn connPlan // the same for cluster nodes: never SELECT

	connections int   // connections to open: -c, at least 1 (the C tool's first client exists even with -c 0)
	requests    int64 // -n per test
	pipeline    int64 // -P
	keyspace    int   // -r; the keys are random when randomKeys
	randomKeys  bool
	precision   int // HdrHistogram significant figures
	threads     int // --threads; 0 is one event loop
	cluster     bool
	idle        bool
	loop        bool
	seed        uint32

	// The tests: a custom command, or the default suite's entries that -t
	// selects, built for a new payload on every -l pass.
	command   []string // custom command arguments, nil for the suite
	stdinLast bool     // -x: the custom command's last argument is stdin
	suite     []suiteEntry
	tag       string // "" or ":{tag}" (cluster mode) in the suite's keys
	dataSize  int
	payload   *payloadGenerator

	// Warnings the C tool prints once connected.
	warnKeepAliveOff bool
	warnTestsIgnored bool

	report reportConfig
}

// connPlan is what one benchmark connection needs besides its endpoint.
type connPlan struct {
	// prefix holds the commands sent before the first batch (AUTH, CLIENT
	// TRACKING, SELECT, HELLO 3, in the C tool's order); prefixReplies is
	// how many replies they produce.
	prefix        []byte
	prefixReplies int
	// reconnect is -k 0: a new connection after every batch.
	reconnect bool
}

// buildPlan turns parsed options into a plan. It reads no file but the
// TLS ones, and connects nowhere; a failure is the C tool's message.
func buildPlan(o *Options) (*plan, error) {
	// A TLS set-up that fails is no error yet: the C tool finds out on its
	// first connection, after the TCP connect (see dialer.tlsErr).
	tlsConfig, tlsErr := buildTLSConfig(o.TLS)
	seed := uint32(time.Now().Unix()) ^ uint32(os.Getpid())
	if o.HasSeed {
		seed = uint32(o.Seed)
	}
	p := &plan{
		target:      endpoint{host: o.Host, port: o.Port, unix: o.HasSocket, socket: o.Socket},
		dialer:      &dialer{tls: tlsConfig, tlsErr: tlsErr},
		conn:        newConnPlan(o, false),
		clusterConn: newConnPlan(o, true),
		connections: max(o.Clients, 1),
		requests:    int64(o.Requests),
		pipeline:    int64(o.Pipeline),
		keyspace:    o.KeyspaceLen,
		randomKeys:  o.RandomKeys,
		precision:   o.Precision,
		threads:     o.Threads,
		cluster:     o.Cluster,
		idle:        o.Idle,
		loop:        o.Loop,
		seed:        seed,
		stdinLast:   o.StdinLast,
		dataSize:    o.DataSize,
		payload:     newPayloadGenerator(),

		warnKeepAliveOff: o.KeepAlive == 0,
		warnTestsIgnored: len(o.Command) > 0 && o.HasTests,

		report: newReportConfig(o),
	}
	if o.HasPassword {
		p.auth = []string{"AUTH", o.Password}
		if o.User != "" {
			p.auth = []string{"AUTH", o.User, o.Password}
		}
	}
	if len(o.Command) > 0 {
		p.command = append([]string(nil), o.Command...)
	} else {
		p.suite = selectedEntries(o)
		if o.Cluster {
			p.tag = ":" + tagPlaceholder
		}
	}
	return p, nil
}

// reportConfig is what the reports print of the command line.
type reportConfig struct {
	quiet, csv bool
	clients    int // -c as given (the report prints 0 for -c 0)
	keepAlive  int // -k as given
	cluster    bool
}

// newReportConfig is what the reports print of the options.
func newReportConfig(o *Options) reportConfig {
	return reportConfig{quiet: o.Quiet, csv: o.CSV, clients: o.Clients, keepAlive: o.KeepAlive, cluster: o.Cluster}
}

// newConnPlan builds the per-connection prefix. SELECT is never sent to a
// cluster node.
func newConnPlan(o *Options, forCluster bool) connPlan {
	c := connPlan{reconnect: o.KeepAlive == 0}
	add := func(args ...string) {
		c.prefix = append(c.prefix, encodeCommand(args)...)
		c.prefixReplies++
	}
	if o.HasPassword {
		if o.User != "" {
			add("AUTH", o.User, o.Password)
		} else {
			add("AUTH", o.Password)
		}
	}
	if o.EnableTracking {
		add("CLIENT", "TRACKING", "on")
	}
	if o.DBNum != 0 && !forCluster {
		add("SELECT", fmt.Sprint(o.DBNum))
	}
	if o.RESP3 {
		add("HELLO", "3")
	}
	return c
}

// customTest is the test of a custom command; stdinArg is the -x argument.
func (p *plan) customTest(stdinArg []byte) benchmarkSpec {
	return customSpec(p.command, stdinArg, p.stdinLast)
}

// nextPass returns the suite's tests for one pass, with the next payload:
// the C tool makes new data for every -l pass.
func (p *plan) nextPass() []benchmarkSpec {
	data := p.payload.next(p.dataSize)
	specs := make([]benchmarkSpec, 0, len(p.suite))
	for _, e := range p.suite {
		specs = append(specs, e.spec(p.tag, data, p.randomKeys))
	}
	return specs
}

// randPlaceholder is replaced in place, per batch, by a 12-digit random number when -r is given.
const randPlaceholder = "__rand_int__"

// tagPlaceholder is replaced in place, per batch, by a hash tag routing the key to the client's node in --cluster mode.
const tagPlaceholder = "{tag}"

// benchmarkSpec is one test to run: the title printed in every report
// line and the bytes of one command, repeated -P times per batch.
type benchmarkSpec struct {
	title   string
	command []byte
	// payloadSize is what the report prints as "bytes payload": -d for the
	// suite, the encoded command's size for a custom command.
	payloadSize int
	// requestBytes is the payload one request carries, for the result
	// file's byte counts: -d times the values in the command (0 for GET),
	// the whole encoded command for a custom command.
	requestBytes int64
}

// suiteEntry is one test of the default suite.
type suiteEntry struct {
	title string
	// names are the -t names that select the test.
	names []string
	// args builds the command; tag is "" or ":{tag}", data the payload, rnd whether -r is on.
	args func(tag, data string, rnd bool) []string
	// inline marks PING_INLINE, which is sent as the inline "PING\r\n" rather than RESP.
	inline bool
	// values is how many copies of the payload the command carries.
	values int
}

var lrangeNames = []string{"lrange", "lrange_100", "lrange_300", "lrange_500", "lrange_600"}

// defaultSuite is redis-benchmark 7.4's default test list, in its order.
var defaultSuite = []suiteEntry{
	{title: "PING_INLINE", names: []string{"ping_inline", "ping"}, inline: true},
	{title: "PING_MBULK", names: []string{"ping_mbulk", "ping"}, args: fixed("PING")},
	{title: "SET", values: 1, names: []string{"set"}, args: func(tag, data string, _ bool) []string {
		return []string{"SET", "key" + tag + ":" + randPlaceholder, data}
	}},
	{title: "GET", names: []string{"get"}, args: func(tag, _ string, _ bool) []string {
		return []string{"GET", "key" + tag + ":" + randPlaceholder}
	}},
	{title: "INCR", names: []string{"incr"}, args: func(tag, _ string, _ bool) []string {
		return []string{"INCR", "counter" + tag + ":" + randPlaceholder}
	}},
	{title: "LPUSH", values: 1, names: []string{"lpush"}, args: func(tag, data string, _ bool) []string {
		return []string{"LPUSH", "mylist" + tag, data}
	}},
	{title: "RPUSH", values: 1, names: []string{"rpush"}, args: func(tag, data string, _ bool) []string {
		return []string{"RPUSH", "mylist" + tag, data}
	}},
	{title: "LPOP", names: []string{"lpop"}, args: keyOnly("LPOP", "mylist")},
	{title: "RPOP", names: []string{"rpop"}, args: keyOnly("RPOP", "mylist")},
	{title: "SADD", names: []string{"sadd"}, args: func(tag, _ string, _ bool) []string {
		return []string{"SADD", "myset" + tag, "element:" + randPlaceholder}
	}},
	{title: "HSET", values: 1, names: []string{"hset"}, args: func(tag, data string, _ bool) []string {
		return []string{"HSET", "myhash" + tag, "element:" + randPlaceholder, data}
	}},
	{title: "SPOP", names: []string{"spop"}, args: keyOnly("SPOP", "myset")},
	{title: "ZADD", names: []string{"zadd"}, args: func(tag, _ string, rnd bool) []string {
		score := "0"
		if rnd {
			score = randPlaceholder
		}
		return []string{"ZADD", "myzset" + tag, score, "element:" + randPlaceholder}
	}},
	{title: "ZPOPMIN", names: []string{"zpopmin"}, args: keyOnly("ZPOPMIN", "myzset")},
	{title: "LPUSH (needed to benchmark LRANGE)", values: 1, names: lrangeNames, args: func(tag, data string, _ bool) []string {
		return []string{"LPUSH", "mylist" + tag, data}
	}},
	{title: "LRANGE_100 (first 100 elements)", names: []string{"lrange", "lrange_100"}, args: lrange(99)},
	{title: "LRANGE_300 (first 300 elements)", names: []string{"lrange", "lrange_300"}, args: lrange(299)},
	{title: "LRANGE_500 (first 500 elements)", names: []string{"lrange", "lrange_500"}, args: lrange(499)},
	{title: "LRANGE_600 (first 600 elements)", names: []string{"lrange", "lrange_600"}, args: lrange(599)},
	{title: "MSET (10 keys)", values: 10, names: []string{"mset"}, args: func(tag, data string, _ bool) []string {
		args := []string{"MSET"}
		for range 10 {
			args = append(args, "key"+tag+":"+randPlaceholder, data)
		}
		return args
	}},
	{title: "XADD", values: 1, names: []string{"xadd"}, args: func(tag, data string, _ bool) []string {
		return []string{"XADD", "mystream" + tag, "*", "myfield", data}
	}},
}

func fixed(args ...string) func(string, string, bool) []string {
	return func(string, string, bool) []string { return args }
}

func keyOnly(cmd, key string) func(string, string, bool) []string {
	return func(tag, _ string, _ bool) []string { return []string{cmd, key + tag} }
}

func lrange(stop int) func(string, string, bool) []string {
	return func(tag, _ string, _ bool) []string {
		return []string{"LRANGE", "mylist" + tag, "0", strconv.Itoa(stop)}
	}
}

// selectedEntries returns the default tests that o selects, in suite order.
func selectedEntries(o *Options) []suiteEntry {
	var entries []suiteEntry
	for _, e := range defaultSuite {
		for _, n := range e.names {
			if o.testSelected(n) {
				entries = append(entries, e)
				break
			}
		}
	}
	return entries
}

// spec builds the entry's test for one payload; tag is "" or ":{tag}".
func (e *suiteEntry) spec(tag, data string, randomKeys bool) benchmarkSpec {
	s := benchmarkSpec{title: e.title, payloadSize: len(data), requestBytes: int64(e.values * len(data))}
	if e.inline {
		s.command = []byte("PING\r\n")
	} else {
		s.command = encodeCommand(e.args(tag, data, randomKeys))
	}
	return s
}

// customSpec is the benchmark for a command given on the command line; its
// title is the arguments joined by spaces (without the -x stdin argument).
func customSpec(args []string, stdinArg []byte, hasStdin bool) benchmarkSpec {
	title := strings.Join(args, " ")
	all := make([][]byte, 0, len(args)+1)
	for _, a := range args {
		all = append(all, []byte(a))
	}
	if hasStdin {
		all = append(all, stdinArg)
	}
	cmd := encodeArgs(all)
	return benchmarkSpec{title: title, command: cmd, payloadSize: len(cmd), requestBytes: int64(len(cmd))}
}

// payloadGenerator produces -d payloads with redis-benchmark's 32-bit LCG.
// Its state starts at 1234 and carries on across -l passes, so the data
// changes from one pass to the next exactly as the C tool's does.
type payloadGenerator struct{ state uint32 }

func newPayloadGenerator() *payloadGenerator { return &payloadGenerator{state: 1234} }

func (g *payloadGenerator) next(n int) string {
	b := make([]byte, n)
	for i := range b {
		g.state = g.state*1103515245 + 12345
		b[i] = '0' + byte((g.state>>16)&63)
	}
	return string(b)
}

// commandOverhead bounds what a suite command carries besides its
// payloads: the command name, keys and RESP framing.
const commandOverhead = 256

// bufferBytes estimates the memory the run's buffers need at their
// largest: the payload, every test's encoded command (made for a pass at
// once), and each connection's batch of -P commands of the largest test.
// The C tool allocates the same and dies when it cannot (-P 2000000000
// or -d 1000000000 with the default suite); we refuse up front instead.
func (p *plan) bufferBytes(customCommand []string) float64 {
	largest := 0.0
	total := float64(p.dataSize)
	if customCommand != nil {
		for _, a := range customCommand {
			largest += float64(len(a)) + 16
		}
		total = largest
	}
	for _, e := range p.suite {
		cmd := float64(e.values)*float64(p.dataSize) + commandOverhead
		total += cmd
		largest = max(largest, cmd)
	}
	return total + float64(p.connections)*(float64(len(p.conn.prefix))+largest*float64(p.pipeline))
}

// availableMemory is the kernel's estimate of memory available to a new
// process (MemAvailable in /proc/meminfo), or 0 when it cannot be read.
func availableMemory() float64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// memoryRefusal is the one line a run too large for this host gets, or "".
func memoryRefusal(need, avail float64) string {
	if avail <= 0 || need <= avail {
		return ""
	}
	return fmt.Sprintf("Cannot run: -c, -P and -d ask for about %.0f MB of buffers, more than the %.0f MB of memory available here.",
		need/(1<<20), avail/(1<<20))
}
