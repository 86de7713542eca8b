package kafkaperf

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// maxIdempotentInflight is the most produce requests the idempotent
// producer may have unanswered on a connection: the broker remembers the
// last five batches of each producer and partition to recognise a retry.
// It is also what franz-go keeps in flight per broker when idempotent, and
// franz-go takes no lower bound then.
const maxIdempotentInflight = 5

// produceLimiter keeps at most limit produce requests unanswered on each
// connection it dials, which is how max.in.flight.requests.per.connection
// below 5 holds with idempotence on.
//
// It relies on how franz-go talks to a broker: produce requests (and only
// they, after the connection's ApiVersions and SASL exchange) go on a
// connection of their own; one goroutine writes each request whole with a
// single Write, under the write deadline it set, and another reads the
// answers, which the broker sends in request order. So a Write that begins
// a produce request can wait until the reader has seen an answer, and the
// wait ends like a write that timed out (franz-go then closes the
// connection and retries its requests, which idempotence makes safe) when
// the deadline passes first. Other requests are never held, and a Write
// holds before writing anything, so a request is never cut in two.
//
// Produce requests with acks=0 are never answered; the limiter is only
// installed with idempotence, which requires acks=all.
type produceLimiter struct {
	limit  int
	dialer net.Dialer
	tls    *tls.Config // SSL and SASL_SSL: the limiter reads the plaintext

	mostInFlight atomic.Int64 // the most produce requests unanswered on one connection
	held         atomic.Int64 // writes of a produce request that had to wait
}

func newProduceLimiter(limit int, dialTimeout time.Duration, tlsCfg *tls.Config) *produceLimiter {
	return &produceLimiter{limit: limit, dialer: net.Dialer{Timeout: dialTimeout}, tls: tlsCfg}
}

// dial opens a connection as franz-go itself would (its DialTLSConfig
// cannot be combined with a dialer of our own: the TLS client fills in the
// server name from the address when the configuration has none), and
// wraps it.
func (l *produceLimiter) dial(ctx context.Context, network, host string) (net.Conn, error) {
	var conn net.Conn
	var err error
	if l.tls != nil {
		cfg := l.tls.Clone()
		if cfg.ServerName == "" {
			server, _, err := net.SplitHostPort(host)
			if err != nil {
				return nil, fmt.Errorf("unable to split host:port for dialing: %w", err)
			}
			cfg.ServerName = server
		}
		conn, err = (&tls.Dialer{NetDialer: &l.dialer, Config: cfg}).DialContext(ctx, network, host)
	} else {
		conn, err = l.dialer.DialContext(ctx, network, host)
	}
	if err != nil {
		return nil, err
	}
	return &produceLimitedConn{Conn: conn, limiter: l}, nil
}

// Kafka's framing, as far as the limiter reads it.
const (
	requestHeaderLen  = 12 // int32 size, int16 API key, int16 version, int32 correlation id
	responseHeaderLen = 8  // int32 size, int32 correlation id
)

// produceLimitedConn is one connection under a produceLimiter.
type produceLimitedConn struct {
	net.Conn
	limiter *produceLimiter

	// The writer's place in the request stream; only Write uses them.
	requestLeft int  // bytes of the current request not yet passed on
	unframed    bool // a Write began a request without its whole header: stop reading the stream

	// The reader's place in the answer stream; only Read uses them.
	answerHeader  [responseHeaderLen]byte
	answerHeaderN int
	answerLeft    int

	mu            sync.Mutex
	unanswered    []int32 // correlation ids of the produce requests written and not answered
	writeDeadline time.Time
	closed        bool
	waiting       bool          // a Write waits for changed
	changed       chan struct{} // closed when an answer, a new deadline or Close may end the wait
}

// Write passes b on, first waiting for a free place for each produce
// request that begins in b.
func (c *produceLimitedConn) Write(b []byte) (int, error) {
	written := 0
	for i := 0; i < len(b); {
		if c.unframed {
			break
		}
		if c.requestLeft > 0 {
			step := min(c.requestLeft, len(b)-i)
			c.requestLeft -= step
			i += step
			continue
		}
		if len(b)-i < requestHeaderLen {
			c.unframed = true
			break
		}
		size := int(int32(binary.BigEndian.Uint32(b[i:])))
		key := int16(binary.BigEndian.Uint16(b[i+4:]))
		corr := int32(binary.BigEndian.Uint32(b[i+8:]))
		if size < requestHeaderLen-4 {
			c.unframed = true
			break
		}
		if key == produceKey {
			if i > written {
				n, err := c.Conn.Write(b[written:i])
				written += n
				if err != nil {
					return written, err
				}
			}
			if err := c.acquire(corr); err != nil {
				return written, err // the request is not begun: a new Write may try it again
			}
		}
		c.requestLeft = 4 + size
	}
	n, err := c.Conn.Write(b[written:])
	return written + n, err
}

// acquire waits until fewer than the limit of produce requests are
// unanswered, then counts corr among them. It fails as a write does when
// the write deadline passes or the connection is closed.
func (c *produceLimitedConn) acquire(corr int32) error {
	c.mu.Lock()
	if len(c.unanswered) >= c.limiter.limit {
		c.limiter.held.Add(1)
	}
	for len(c.unanswered) >= c.limiter.limit {
		if c.closed {
			c.mu.Unlock()
			return c.writeError(net.ErrClosed)
		}
		deadline := c.writeDeadline
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			c.mu.Unlock()
			return c.writeError(os.ErrDeadlineExceeded)
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		changed := c.changed
		c.waiting = true
		c.mu.Unlock()
		if deadline.IsZero() {
			<-changed
		} else {
			timer := time.NewTimer(time.Until(deadline))
			select {
			case <-changed:
			case <-timer.C:
			}
			timer.Stop()
		}
		c.mu.Lock()
	}
	c.unanswered = append(c.unanswered, corr)
	for n := int64(len(c.unanswered)); ; {
		most := c.limiter.mostInFlight.Load()
		if n <= most || c.limiter.mostInFlight.CompareAndSwap(most, n) {
			break
		}
	}
	c.mu.Unlock()
	return nil
}

// signal wakes a waiting Write; c.mu is held.
func (c *produceLimitedConn) signal() {
	if c.waiting {
		close(c.changed)
		c.changed, c.waiting = nil, false
	}
}

func (c *produceLimitedConn) writeError(err error) error {
	return &net.OpError{Op: "write", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// Read passes on what the connection read, and marks each produce request
// whose answer begins in it answered.
func (c *produceLimitedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	for rest := b[:n]; len(rest) > 0; {
		if c.answerLeft > 0 {
			step := min(c.answerLeft, len(rest))
			c.answerLeft -= step
			rest = rest[step:]
			continue
		}
		k := copy(c.answerHeader[c.answerHeaderN:], rest)
		c.answerHeaderN += k
		rest = rest[k:]
		if c.answerHeaderN < responseHeaderLen {
			break
		}
		c.answerHeaderN = 0
		size := int(int32(binary.BigEndian.Uint32(c.answerHeader[:4])))
		c.answerLeft = max(size-4, 0)
		c.answered(int32(binary.BigEndian.Uint32(c.answerHeader[4:])))
	}
	return n, err
}

func (c *produceLimitedConn) answered(corr int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, u := range c.unanswered {
		if u == corr {
			c.unanswered = append(c.unanswered[:i], c.unanswered[i+1:]...)
			c.signal()
			return
		}
	}
}

func (c *produceLimitedConn) SetWriteDeadline(t time.Time) error {
	err := c.Conn.SetWriteDeadline(t)
	c.mu.Lock()
	c.writeDeadline = t
	c.signal()
	c.mu.Unlock()
	return err
}

func (c *produceLimitedConn) SetDeadline(t time.Time) error {
	err := c.Conn.SetDeadline(t)
	c.mu.Lock()
	c.writeDeadline = t
	c.signal()
	c.mu.Unlock()
	return err
}

func (c *produceLimitedConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.signal()
	c.mu.Unlock()
	return c.Conn.Close()
}
