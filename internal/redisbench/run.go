package redisbench

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/perfclones/perfclones/internal/clock"
	"github.com/perfclones/perfclones/internal/latency"
)

// Histogram bounds of the C tool: 10 us to 3 s, values in microseconds.
const (
	histogramLowest  = 10
	histogramHighest = 3_000_000
)

// connectBurst and connectPause copy the C tool's pacing of new connections:
// after every 64 connects it sleeps 50 ms, because listen backlogs are short.
const (
	connectBurst = 64
	connectPause = 50 * time.Millisecond
)

// failure is something that went wrong in a run, as data: report.go words
// it as the C tool does and counts it for the result file, so that a
// worker never formats. The first failure of a test ends the program
// (stderr, exit code 1); notices only print.
type requestFailure struct {
	what  failureKind
	ep    endpoint // the cluster node, for nodeReply and clusterDown
	reply string   // the server's error reply
	err   error    // the connection or set-up error
}

type failureKind int

const (
	serverReply     failureKind = iota // an error reply
	nodeReply                          // an error reply from a cluster node
	serverClosed                       // the server closed a connection
	protocolError                      // a reply that is not RESP
	connectionError                    // a read failed
	allDisconnected                    // every client's write failed
	setupFailed                        // a connect or a slot map refresh failed (err's own text)

	// Notices: printed, and the run goes on.
	clusterDown  // CLUSTERDOWN from a node: retried after a second
	writeError   // one client's write failed; the client is dropped
	slotsChanged // a MOVED or ASK: the slot map is fetched again
)

// session is what the tests of one invocation share once connected: the
// plan, what discovery found, the shared random generator and the clock.
type session struct {
	plan    *plan
	cluster *clusterConfig // nil unless --cluster
	config  *serverConfig  // the server's CONFIG for the report, nil when unavailable
	threads int            // --threads, or the master count in cluster mode
	random  *sharedRandom
	clock   clock.Wall
	// notify prints a notice (a failed write, CLUSTERDOWN, a slot map
	// refresh), the only things the C tool reports mid-run.
	notify func(*requestFailure)
}

// benchmarkResult is what a finished (or stopped) benchmark hands to the reporter.
type benchmarkResult struct {
	spec      benchmarkSpec
	finished  int64 // replies received when the run stopped; what the report prints, may exceed -n with -P
	elapsedMs int64 // wall time from the last client connected to the stop, in whole ms
	latency   *latency.Snapshot
	start     time.Time
	end       time.Time
	// replies is every reply counted once all clients stopped; it differs
	// from finished only when the run was interrupted or failed, while
	// batches were in flight.
	replies  int64
	failures []*requestFailure // the failed requests, in order; the first ended the run
	// unanswered are the requests of pipelines written whose replies had
	// not all been read when the run stopped (only a run that failed or
	// was interrupted has any): the server may or may not have run them.
	unanswered int64
	fatal      *requestFailure // what ended the run early, nil when it completed
}

// benchmarkRun is one benchmark (one title) in progress: what its clients
// need, the shared counters they update and the histogram they record into.
type benchmarkRun struct {
	spec       benchmarkSpec
	requests   int64
	pipeline   int64
	keyspace   int
	randomKeys bool
	conn       connPlan
	dialer     *dialer
	target     endpoint
	cluster    *clusterConfig
	auth       []string
	threads    int
	random     *sharedRandom
	notify     func(*requestFailure)
	clock      clock.Wall
	ctx        context.Context

	issued   atomic.Int64 // commands handed to connections, in steps of -P
	finished atomic.Int64 // replies received
	live     atomic.Int64 // connected clients

	hist *latency.Histogram
	// tickSum and tickCount feed the progress line's average for the current tick.
	tickSum, tickCount atomic.Int64

	done     chan struct{} // closed when the run stops, normally or not
	stopOnce sync.Once
	stopping atomic.Bool
	fatal    atomic.Pointer[requestFailure]

	startMs   int64
	startTime time.Time

	mu       sync.Mutex // guards clients' connections and failures
	clients  []*benchClient
	failures []*requestFailure
	wg       sync.WaitGroup
}

// client is one benchmark connection. Its buffer holds the per-connection
// prefix commands followed by -P copies of the command; placeholders are
// overwritten in place before each batch.
type benchClient struct {
	run     *benchmarkRun
	index   int
	ep      endpoint
	node    *clusterNode
	conn    net.Conn
	rd      *replyReader
	buf     []byte
	cmdOff  int // where the -P commands start in buf
	pending int // prefix replies still to come on this connection
	// inflight are the requests of the batch written and not yet counted
	// (the run sums them once its clients have stopped).
	inflight int64
	randOff  []int
	tagOff   []int
	rec      *latency.Recorder
}

// progressSnapshot is what a progress tick reads of a running benchmark.
type progressSnapshot struct {
	finished int64
	// tickSum and tickCount are the latencies recorded since the previous
	// snapshot (their sum in microseconds, and how many).
	tickSum, tickCount int64
}

// snapshot reads the counters for one progress tick.
func (r *benchmarkRun) snapshot() progressSnapshot {
	return progressSnapshot{finished: r.finished.Load(), tickSum: r.tickSum.Swap(0), tickCount: r.tickCount.Swap(0)}
}

func (r *benchmarkRun) stop() {
	r.stopOnce.Do(func() {
		r.stopping.Store(true)
		close(r.done)
	})
}

// fail records a failed request, keeps the first as what ended the run,
// and stops it.
func (r *benchmarkRun) fail(f *requestFailure) {
	r.mu.Lock()
	r.failures = append(r.failures, f)
	r.mu.Unlock()
	r.fatal.CompareAndSwap(nil, f)
	r.stop()
}

// newBenchmark prepares the run of one test; connect opens its clients.
func (s *session) newBenchmark(ctx context.Context, spec benchmarkSpec) *benchmarkRun {
	p := s.plan
	conn := p.conn
	if s.cluster != nil {
		conn = p.clusterConn
	}
	return &benchmarkRun{
		spec:       spec,
		requests:   p.requests,
		pipeline:   p.pipeline,
		keyspace:   p.keyspace,
		randomKeys: p.randomKeys,
		conn:       conn,
		dialer:     p.dialer,
		target:     p.target,
		cluster:    s.cluster,
		auth:       p.auth,
		threads:    s.threads,
		random:     s.random,
		notify:     s.notify,
		clock:      s.clock,
		ctx:        ctx,
		hist:       latency.New(histogramLowest, histogramHighest, p.precision),
		done:       make(chan struct{}),
	}
}

// connect opens n clients, pacing them as the C tool does. A failed
// connect is fatal; a cancelled ctx ends it with ctx's error.
func (r *benchmarkRun) openClients(n int) error {
	for i := range n {
		c, err := r.newClient(i)
		if err != nil {
			r.stop()
			r.closeAll()
			if r.ctx.Err() != nil {
				return r.ctx.Err()
			}
			return &requestFailure{what: setupFailed, err: err}
		}
		r.clients = append(r.clients, c)
		r.live.Add(1)
		if (i+1)%connectBurst == 0 && i+1 < n {
			if err := clock.Sleep(r.ctx, connectPause); err != nil {
				r.stop()
				r.closeAll()
				return err
			}
		}
	}
	return nil
}

// newClient connects client number index and builds its buffer.
func (r *benchmarkRun) newClient(index int) (*benchClient, error) {
	c := &benchClient{run: r, index: index, ep: r.target}
	if r.cluster != nil {
		c.node = r.cluster.nodeForClient(index, r.threads)
		c.ep = c.node.ep
	}
	if err := c.open(); err != nil {
		return nil, err
	}
	c.rec = r.hist.NewRecorder()
	return c, nil
}

// connect dials and lays out the buffer with the prefix commands in front.
func (c *benchClient) open() error {
	r := c.run
	conn, err := r.dialer.dial(r.ctx, c.ep)
	if err != nil {
		return err
	}
	// The run may be closing every connection; swap under its lock so the
	// new connection is either closed with the others or not seen at all.
	r.mu.Lock()
	c.conn = conn
	if r.stopping.Load() {
		conn.Close()
	}
	r.mu.Unlock()
	if c.rd == nil {
		c.rd = newReplyReader(conn)
	} else {
		c.rd.rd, c.rd.r, c.rd.w = conn, 0, 0
	}
	prefix := r.conn.prefix
	cmd := r.spec.command
	if c.buf == nil || c.cmdOff != len(prefix) {
		buf := make([]byte, 0, len(prefix)+len(cmd)*int(r.pipeline))
		buf = append(buf, prefix...)
		for range r.pipeline {
			buf = append(buf, cmd...)
		}
		c.buf, c.cmdOff = buf, len(prefix)
		cmds := buf[c.cmdOff:]
		if r.randomKeys {
			c.randOff = findAll(cmds, randPlaceholder)
		}
		if r.cluster != nil {
			c.tagOff = findAll(cmds, tagPlaceholder)
		}
	} else {
		copy(c.buf, prefix)
	}
	c.pending = r.conn.prefixReplies
	return nil
}

func findAll(b []byte, s string) []int {
	var offs []int
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(s))
		if j < 0 {
			return offs
		}
		offs = append(offs, i+j)
		i += j + len(s)
	}
}

// start starts the clients: the benchmark's clock runs from here.
func (r *benchmarkRun) start() {
	r.startMs = r.clock.Ms()
	r.startTime = r.clock.Time()
	if r.requests <= 0 {
		// The C tool never finishes a run of 0 requests; we end it at once.
		r.stop()
	}
	r.wg.Add(len(r.clients))
	for _, c := range r.clients {
		go c.loop()
	}
}

// wait waits until the run stops (all requests answered, a fatal error, or
// ctx cancelled), stops every client and returns what was measured.
func (r *benchmarkRun) wait() *benchmarkResult {
	select {
	case <-r.done:
	case <-r.ctx.Done():
		r.stop()
	}
	elapsed := r.clock.Ms() - r.startMs
	end := r.clock.Time()
	finished := r.finished.Load()
	r.closeAll()
	r.wg.Wait()
	res := &benchmarkResult{
		spec:      r.spec,
		finished:  finished,
		elapsedMs: elapsed,
		latency:   r.hist.Snapshot(),
		start:     r.startTime,
		end:       end,
		replies:   r.finished.Load(),
		fatal:     r.fatal.Load(),
	}
	r.mu.Lock()
	res.failures = r.failures
	for _, c := range r.clients {
		res.unanswered += c.inflight
	}
	r.mu.Unlock()
	return res
}

// loop is the client's life: issue a batch, read its replies, repeat until
// the run has issued -n requests; then stay connected and idle as the C
// tool's clients do, until the run ends.
func (c *benchClient) loop() {
	r := c.run
	defer r.wg.Done()
	defer c.rec.Flush()
	for !r.stopping.Load() {
		if r.issued.Add(r.pipeline)-r.pipeline >= r.requests {
			return
		}
		cmds := c.buf[c.cmdOff:]
		if len(c.randOff) > 0 {
			r.random.fillKeys(cmds, c.randOff, r.keyspace)
		}
		if len(c.tagOff) > 0 {
			c.node.writeTag(cmds, c.tagOff, r.random)
		}
		out := cmds
		if c.pending > 0 {
			out = c.buf
		}
		start := time.Now()
		c.inflight = r.pipeline
		if _, err := c.conn.Write(out); err != nil {
			c.writeFailed(err)
			return
		}
		// The latency is taken when the first bytes of the reply arrive, so
		// that parsing is not part of it, as in the C tool.
		if c.rd.r == c.rd.w {
			if err := c.rd.fill(); err != nil {
				c.readFailed(err)
				return
			}
		}
		lat := time.Since(start).Microseconds()
		for c.pending > 0 {
			msg, isErr, err := c.nextReply()
			if err != nil {
				c.readFailed(err)
				return
			}
			if isErr {
				r.fail(&requestFailure{what: serverReply, reply: msg})
				return
			}
			c.pending--
		}
		for range r.pipeline {
			msg, isErr, err := c.nextReply()
			if err != nil {
				c.readFailed(err)
				return
			}
			if isErr && !c.clusterError(msg) {
				return
			}
		}
		c.inflight = 0
		before := r.finished.Add(r.pipeline) - r.pipeline
		if recorded := min(r.pipeline, r.requests-before); recorded > 0 {
			for range recorded {
				c.rec.Record(lat)
			}
			r.tickSum.Add(lat * recorded)
			r.tickCount.Add(recorded)
		}
		if before+r.pipeline >= r.requests {
			r.stop()
			return
		}
		if r.conn.reconnect {
			c.conn.Close()
			if err := c.open(); err != nil {
				if r.ctx.Err() == nil {
					r.fail(&requestFailure{what: setupFailed, err: err})
				}
				return
			}
		}
	}
}

// nextReply reads one reply, passing over RESP3 push messages (client
// tracking invalidations), which hiredis drops before they reach the tool.
func (c *benchClient) nextReply() (msg string, isErr bool, err error) {
	for {
		msg, isErr, err = c.rd.skip()
		if err != nil || c.rd.lastType != '>' {
			return msg, isErr, err
		}
	}
}

// clusterError handles an error reply in the benchmark proper. In cluster
// mode, a MOVED, ASK or CLUSTERDOWN on a command that carries a hash tag
// refreshes the slot map and the reply still counts; anything else is fatal.
// It reports whether the run goes on.
func (c *benchClient) clusterError(msg string) bool {
	r := c.run
	if c.node == nil {
		r.fail(&requestFailure{what: serverReply, reply: msg})
		return false
	}
	if len(c.tagOff) == 0 {
		r.fail(&requestFailure{what: nodeReply, ep: c.ep, reply: msg})
		return false
	}
	switch {
	case hasPrefix(msg, "MOVED"), hasPrefix(msg, "ASK"):
	case hasPrefix(msg, "CLUSTERDOWN"):
		r.notify(&requestFailure{what: clusterDown, ep: c.ep, reply: msg})
		select {
		case <-r.done:
			return false
		case <-time.After(time.Second):
		}
	default:
		r.fail(&requestFailure{what: nodeReply, ep: c.ep, reply: msg})
		return false
	}
	refreshing := func() { r.notify(&requestFailure{what: slotsChanged}) }
	if err := r.cluster.refreshSlots(r.ctx, r.dialer, r.auth, refreshing); err != nil {
		r.fail(&requestFailure{what: setupFailed, err: err})
		return false
	}
	return true
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// readFailed ends the run when a connection breaks, unless the run is
// already stopping and closed it on purpose.
func (c *benchClient) readFailed(err error) {
	r := c.run
	if r.stopping.Load() {
		return
	}
	switch {
	case errors.Is(err, io.EOF):
		r.fail(&requestFailure{what: serverClosed})
	case errors.Is(err, errProtocol):
		r.fail(&requestFailure{what: protocolError})
	default:
		r.fail(&requestFailure{what: connectionError, err: err})
	}
}

// writeFailed drops the client as the C tool does; a broken pipe goes
// unreported. When no client is left the run is aborted.
func (c *benchClient) writeFailed(err error) {
	r := c.run
	if r.stopping.Load() {
		return
	}
	if !errors.Is(err, syscall.EPIPE) {
		r.notify(&requestFailure{what: writeError, err: err})
	}
	c.conn.Close()
	if r.live.Add(-1) == 0 && r.finished.Load() < r.requests {
		r.fail(&requestFailure{what: allDisconnected})
	}
}

// closeAll closes every connection so that blocked readers return.
func (r *benchmarkRun) closeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.clients {
		if c.conn != nil {
			c.conn.Close()
		}
	}
}

// idleConns are -I's connections: opened, sent nothing, and watched for
// the server closing or resetting them.
type idleConns struct {
	conns []net.Conn
	// failed gets the stderr line of the first connection that broke.
	failed chan string
}

func (ic *idleConns) close() {
	for _, c := range ic.conns {
		c.Close()
	}
}

// openIdle opens -I's connections. A connection that the server closes or
// resets ends the run with an error, as in the C tool since 7.0.
func (s *session) openIdle(ctx context.Context) (*idleConns, error) {
	p := s.plan
	ic := &idleConns{failed: make(chan string, 1)}
	for i := range p.connections {
		ep := p.target
		if s.cluster != nil {
			ep = s.cluster.nodeForClient(i, s.threads).ep
		}
		c, err := p.dialer.dial(ctx, ep)
		if err != nil {
			ic.close()
			return nil, err
		}
		ic.conns = append(ic.conns, c)
		go func() {
			// The clients send nothing, so anything but silence ends the run.
			_, err := c.Read(make([]byte, 512))
			msg := "Error: Server closed the connection"
			if err != nil && !errors.Is(err, io.EOF) {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				msg = "Error: " + strerror(err)
			}
			select {
			case ic.failed <- msg:
			default:
			}
		}()
		if (i+1)%connectBurst == 0 && i+1 < p.connections {
			if err := clock.Sleep(ctx, connectPause); err != nil {
				ic.close()
				return nil, err
			}
		}
	}
	return ic, nil
}
