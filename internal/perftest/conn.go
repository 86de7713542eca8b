package perftest

import (
	"net"
	"sync"
	"time"
)

// coalescingConn batches a connection's writes: amqp091-go writes and
// flushes every publish and every ack on its own, one system call each,
// which is most of a client's CPU at tens of thousands of messages a
// second. Write copies into a buffer and one writer goroutine sends
// whatever has accumulated while its previous write was in progress, so
// an idle connection sends at once (no added latency) and a busy one
// sends many frames per system call.
type coalescingConn struct {
	net.Conn
	mu      sync.Mutex
	ready   *sync.Cond // data to send, or closing
	room    *sync.Cond // the buffer has room again
	pending []byte
	spare   []byte
	err     error
	closing bool
	done    chan struct{}
}

// maxPending bounds what a writer may queue before Write blocks, as a
// socket buffer would.
const maxPending = 1 << 20

func newCoalescingConn(c net.Conn) *coalescingConn {
	cc := &coalescingConn{Conn: c, done: make(chan struct{})}
	cc.ready = sync.NewCond(&cc.mu)
	cc.room = sync.NewCond(&cc.mu)
	go cc.flushLoop()
	return cc
}

func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.pending) >= maxPending && c.err == nil && !c.closing {
		c.room.Wait()
	}
	if c.err != nil {
		return 0, c.err
	}
	if c.closing {
		return 0, net.ErrClosed
	}
	c.pending = append(c.pending, p...)
	c.ready.Signal()
	return len(p), nil
}

func (c *coalescingConn) flushLoop() {
	defer close(c.done)
	for {
		c.mu.Lock()
		for len(c.pending) == 0 && !c.closing {
			c.ready.Wait()
		}
		if len(c.pending) == 0 && c.closing {
			c.mu.Unlock()
			return
		}
		buf := c.pending
		c.pending = c.spare[:0]
		c.room.Broadcast()
		c.mu.Unlock()
		_, err := c.Conn.Write(buf)
		c.mu.Lock()
		c.spare = buf[:0]
		if err != nil {
			c.err = err
			c.pending = nil
			c.room.Broadcast()
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// Close sends what is queued (for at most a second), then closes.
func (c *coalescingConn) Close() error {
	c.mu.Lock()
	c.closing = true
	c.ready.Signal()
	c.room.Broadcast()
	c.mu.Unlock()
	select {
	case <-c.done:
	case <-time.After(time.Second):
	}
	return c.Conn.Close()
}
