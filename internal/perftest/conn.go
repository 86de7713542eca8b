package perftest

import (
	"context"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// recoveringConn is one of a run's connections with the Java client's
// automatic recovery: when the connection is lost (closed by anything but
// ourselves), it dials again after each delay until that succeeds or the
// run ends, redeclares on the new connection what was registered with
// redeclare (PerfTest's own topology recovery: the client's is off), and
// only then hands the new connection to the agents waiting for it.
type recoveringConn struct {
	name  string
	dial  func() (*amqp.Connection, error)
	delay recoveryDelay
	// notice writes our own line about a loss or a recovery (stderr).
	notice func(string)

	mu        sync.Mutex
	conn      *amqp.Connection
	replaced  chan struct{} // closed when conn is replaced or the run ends
	closing   bool
	redeclare []func(*amqp.Connection) error
	stop      chan struct{}
}

// newRecoveringConn wraps a run's first connection; without recover (-dcr)
// a loss is left to the agents, which end the run.
func newRecoveringConn(name string, first *amqp.Connection, recover bool, dial func() (*amqp.Connection, error), delay recoveryDelay, notice func(string)) *recoveringConn {
	rc := &recoveringConn{name: name, dial: dial, delay: delay, notice: notice,
		conn: first, replaced: make(chan struct{}), stop: make(chan struct{})}
	if recover {
		go rc.watch(first)
	}
	return rc
}

// onRecovery registers what to declare again on every new connection.
func (rc *recoveringConn) onRecovery(declare func(*amqp.Connection) error) {
	rc.mu.Lock()
	rc.redeclare = append(rc.redeclare, declare)
	rc.mu.Unlock()
}

// current is the connection now, and a channel closed once it has been
// replaced by a recovered one (or the run has ended).
func (rc *recoveringConn) current() (*amqp.Connection, <-chan struct{}) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.conn, rc.replaced
}

// recovered waits until the connection is no longer lost, returning the
// new one; nil when ctx ends or the run closes first. poll > 0 looks only
// every poll, as PerfTest's producers do (they sleep a second at a time
// while their connection recovers).
func (rc *recoveringConn) recovered(ctx context.Context, lost *amqp.Connection, poll time.Duration) *amqp.Connection {
	for {
		conn, replaced := rc.current()
		if conn != lost {
			return conn
		}
		if poll > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-rc.stop:
				return nil
			case <-time.After(poll):
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-rc.stop:
			return nil
		case <-replaced:
		}
	}
}

func (rc *recoveringConn) watch(conn *amqp.Connection) {
	err, ok := <-conn.NotifyClose(make(chan *amqp.Error, 1))
	if !ok || err == nil {
		return // closed by us
	}
	rc.mu.Lock()
	closing := rc.closing
	rc.mu.Unlock()
	if closing {
		return
	}
	go rc.reconnect(err)
}

func (rc *recoveringConn) delayText() string {
	if rc.delay.max <= rc.delay.min {
		return rc.delay.min.String()
	}
	return rc.delay.min.String() + " to " + (rc.delay.max - time.Second).String()
}

// reconnect is the Java client's recovery loop: wait, dial, repeat. The
// loss is named when the first attempt is due, not when it happens: a
// server's close that ends the run (a failed declaration in the main
// thread) then leaves stderr as PerfTest leaves it, its exception first.
func (rc *recoveringConn) reconnect(cause *amqp.Error) {
	for attempt := 1; ; attempt++ {
		select {
		case <-rc.stop:
			return
		case <-time.After(rc.delay.next()):
		}
		if attempt == 1 {
			rc.notice(fmt.Sprintf("perfclones: connection %s lost (%s); reconnecting every %s, as the Java client does", rc.name, cause.Error(), rc.delayText()))
		}
		conn, err := rc.dial()
		if err != nil {
			continue
		}
		rc.mu.Lock()
		redeclare := append([]func(*amqp.Connection) error(nil), rc.redeclare...)
		rc.mu.Unlock()
		for _, declare := range redeclare {
			// PerfTest logs a failed redeclaration and carries on.
			if err := declare(conn); err != nil {
				rc.notice(fmt.Sprintf("perfclones: connection %s: redeclaring after recovery: %v", rc.name, err))
			}
		}
		rc.mu.Lock()
		if rc.closing {
			rc.mu.Unlock()
			_ = conn.Close()
			return
		}
		rc.conn = conn
		close(rc.replaced)
		rc.replaced = make(chan struct{})
		rc.mu.Unlock()
		rc.notice(fmt.Sprintf("perfclones: connection %s recovered (attempt %d)", rc.name, attempt))
		go rc.watch(conn)
		return
	}
}

// shutDown ends recovery: the run is over.
func (rc *recoveringConn) shutDown() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !rc.closing {
		rc.closing = true
		close(rc.stop)
	}
}
