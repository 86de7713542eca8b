package redisbench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

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

// fatalError ends the whole program: its message goes to stderr and the exit code is 1.
type fatalError struct{ msg string }

func (e *fatalError) Error() string { return e.msg }

// benchmarkResult is what a finished benchmark hands to the reporter.
type benchmarkResult struct {
	title     string
	finished  int64 // replies received, may exceed -n with -P
	elapsedMs int64 // wall time from the last client connected to the stop, in whole ms
	latency   *latency.Snapshot
}

// benchmarkRun is one benchmark (one title) in progress: the shared counters
// its clients update and the histogram they record into.
type benchmarkRun struct {
	env      *runEnv
	spec     benchmarkSpec
	requests int64
	pipeline int64

	issued   atomic.Int64 // commands handed to connections, in steps of -P
	finished atomic.Int64 // replies received
	live     atomic.Int64 // connected clients

	hist *latency.Histogram
	// tickSum and tickCount feed the progress line's average for the current tick.
	tickSum, tickCount atomic.Int64

	done     chan struct{} // closed when the run stops, normally or not
	stopOnce sync.Once
	stopping atomic.Bool
	fatal    atomic.Pointer[fatalError]

	mu      sync.Mutex
	clients []*client
	wg      sync.WaitGroup
}

// client is one benchmark connection. Its buffer holds the per-connection
// prefix commands followed by -P copies of the command; placeholders are
// overwritten in place before each batch.
type client struct {
	run     *benchmarkRun
	index   int
	ep      endpoint
	node    *clusterNode
	conn    net.Conn
	rd      *replyReader
	buf     []byte
	cmdOff  int // where the -P commands start in buf
	pending int // prefix replies still to come on this connection
	randOff []int
	tagOff  []int
	rec     *latency.Recorder
}

func (r *benchmarkRun) stop() {
	r.stopOnce.Do(func() {
		r.stopping.Store(true)
		close(r.done)
	})
}

// fail records the first fatal error and stops the run.
func (r *benchmarkRun) fail(msg string) {
	r.fatal.CompareAndSwap(nil, &fatalError{msg: msg})
	r.stop()
}

// newClient connects client number index and builds its buffer.
func (r *benchmarkRun) newClient(index int) (*client, error) {
	env := r.env
	c := &client{run: r, index: index, ep: env.target}
	if env.cluster != nil {
		c.node = env.cluster.nodeForClient(index, env.threads)
		c.ep = c.node.ep
	}
	if err := c.connect(); err != nil {
		return nil, err
	}
	c.rec = r.hist.NewRecorder()
	return c, nil
}

// connect dials and lays out the buffer with the prefix commands in front.
func (c *client) connect() error {
	env := c.run.env
	conn, err := env.dialer.dial(c.ep)
	if err != nil {
		return err
	}
	// The run may be closing every connection; swap under its lock so the
	// new connection is either closed with the others or not seen at all.
	c.run.mu.Lock()
	c.conn = conn
	if c.run.stopping.Load() {
		conn.Close()
	}
	c.run.mu.Unlock()
	if c.rd == nil {
		c.rd = newReplyReader(conn)
	} else {
		c.rd.rd, c.rd.r, c.rd.w = conn, 0, 0
	}
	prefix, n := env.prefix(c.node != nil)
	cmd := c.run.spec.command
	if c.buf == nil || c.cmdOff != len(prefix) {
		buf := make([]byte, 0, len(prefix)+len(cmd)*int(c.run.pipeline))
		buf = append(buf, prefix...)
		for range c.run.pipeline {
			buf = append(buf, cmd...)
		}
		c.buf, c.cmdOff = buf, len(prefix)
		cmds := buf[c.cmdOff:]
		if env.opts.RandomKeys {
			c.randOff = findAll(cmds, randPlaceholder)
		}
		if env.cluster != nil {
			c.tagOff = findAll(cmds, tagPlaceholder)
		}
	} else {
		copy(c.buf, prefix)
	}
	c.pending = n
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

// loop is the client's life: issue a batch, read its replies, repeat until
// the run has issued -n requests; then stay connected and idle as the C
// tool's clients do, until the run ends.
func (c *client) loop() {
	r := c.run
	env := r.env
	defer r.wg.Done()
	defer c.rec.Flush()
	for !r.stopping.Load() {
		if r.issued.Add(r.pipeline)-r.pipeline >= r.requests {
			return
		}
		cmds := c.buf[c.cmdOff:]
		if len(c.randOff) > 0 {
			env.random.fillKeys(cmds, c.randOff, env.opts.KeyspaceLen)
		}
		if len(c.tagOff) > 0 {
			c.node.writeTag(cmds, c.tagOff, env.random)
		}
		out := cmds
		if c.pending > 0 {
			out = c.buf
		}
		start := time.Now()
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
				r.fail("Error from server: " + msg)
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
		if env.opts.KeepAlive == 0 {
			c.conn.Close()
			if err := c.connect(); err != nil {
				r.fail(err.Error())
				return
			}
		}
	}
}

// nextReply reads one reply, passing over RESP3 push messages (client
// tracking invalidations), which hiredis drops before they reach the tool.
func (c *client) nextReply() (msg string, isErr bool, err error) {
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
func (c *client) clusterError(msg string) bool {
	r := c.run
	if c.node == nil {
		r.fail("Error from server: " + msg)
		return false
	}
	if len(c.tagOff) == 0 {
		r.fail(fmt.Sprintf("Error from server %s: %s", c.ep, msg))
		return false
	}
	switch {
	case hasPrefix(msg, "MOVED"), hasPrefix(msg, "ASK"):
	case hasPrefix(msg, "CLUSTERDOWN"):
		r.env.warn(fmt.Sprintf("Error from server %s: %s.", c.ep, msg))
		time.Sleep(time.Second)
	default:
		r.fail(fmt.Sprintf("Error from server %s: %s", c.ep, msg))
		return false
	}
	if err := r.env.cluster.refreshSlots(r.env); err != nil {
		r.fail(err.Error())
		return false
	}
	return true
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// readFailed ends the run when a connection breaks, unless the run is
// already stopping and closed it on purpose.
func (c *client) readFailed(err error) {
	r := c.run
	if r.stopping.Load() {
		return
	}
	switch {
	case errors.Is(err, io.EOF):
		r.fail("Error: Server closed the connection")
	case errors.Is(err, errProtocol):
		r.fail("Error: Protocol error")
	default:
		r.fail("Error: " + strerror(err))
	}
}

// writeFailed drops the client as the C tool does; a broken pipe goes
// unreported. When no client is left the run is aborted.
func (c *client) writeFailed(err error) {
	r := c.run
	if r.stopping.Load() {
		return
	}
	if !errors.Is(err, syscall.EPIPE) {
		r.env.warn("Error writing to the server: " + strerror(err))
	}
	c.conn.Close()
	if r.live.Add(-1) == 0 && r.finished.Load() < r.requests {
		r.fail("All clients disconnected... aborting.")
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

// runBenchmark runs one benchmark to completion and returns its result, or
// a fatal error that ends the program.
func (env *runEnv) runBenchmark(spec benchmarkSpec) (*benchmarkResult, error) {
	o := env.opts
	r := &benchmarkRun{
		env:      env,
		spec:     spec,
		requests: int64(o.Requests),
		pipeline: int64(o.Pipeline),
		hist:     latency.New(histogramLowest, histogramHighest, o.Precision),
		done:     make(chan struct{}),
	}
	n := max(o.Clients, 1) // the C tool creates its first client even with -c 0
	for i := range n {
		c, err := r.newClient(i)
		if err != nil {
			r.stop()
			r.closeAll()
			return nil, &fatalError{msg: err.Error()}
		}
		r.clients = append(r.clients, c)
		r.live.Add(1)
		if (i+1)%connectBurst == 0 && i+1 < n {
			time.Sleep(connectPause)
		}
	}
	env.progress.beginTest(spec.title, r)
	start := env.clock.nowMs()
	if r.requests <= 0 {
		// The C tool never finishes a run of 0 requests; we end it at once.
		r.stop()
	}
	r.wg.Add(len(r.clients))
	for _, c := range r.clients {
		go c.loop()
	}
	ticker := env.progress.run(r)
	<-r.done
	elapsed := env.clock.nowMs() - start
	finished := r.finished.Load()
	ticker.stop()
	r.closeAll()
	r.wg.Wait()
	if f := r.fatal.Load(); f != nil {
		return nil, f
	}
	return &benchmarkResult{
		title:     spec.title,
		finished:  finished,
		elapsedMs: elapsed,
		latency:   r.hist.Snapshot(),
	}, nil
}
