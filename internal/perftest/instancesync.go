package perftest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/perfclones/perfclones/internal/jvm"
)

// instanceSync is -ei (2.20+): that many instances of the same test ID
// wait for one another after their start-up lines and start together.
// PerfTest finds its peers with JGroups (UDP multicast, or Kubernetes'
// pod list with -isn); a Go binary cannot join a JGroups cluster, so ours
// meet on the broker they test instead: a fanout exchange named after the
// namespace and test ID, one exclusive queue per instance. Instances of
// this clone therefore synchronise with one another, not with Java ones.
type instanceSync struct {
	expected  int
	testID    string
	namespace string // -isn; only changes the exchange and the timeout text
	timeout   time.Duration
	// tick is how often a waiting instance prints a dot and announces
	// itself again (PerfTest polls its view every few seconds).
	tick time.Duration
}

// exchangeName is where the instances of one test meet.
func (s instanceSync) exchangeName() string {
	if s.namespace != "" {
		return "perf-test-instance-sync." + s.namespace + "." + s.testID
	}
	return "perf-test-instance-sync." + s.testID
}

// syncTimeoutError is what PerfTest's main thread catches when the peers
// did not all arrive within -ist: its exception and the cause under it.
type syncTimeoutError struct{ sync instanceSync }

func (e *syncTimeoutError) Error() string { return e.causes()[0].Message }

func (e *syncTimeoutError) exception() jvm.Exception {
	return jvm.Exception{Class: "com.rabbitmq.perf.PerfTestException", Message: "Error while waiting for instance synchronization"}
}

func (e *syncTimeoutError) causes() []jvm.Exception {
	hint := "Make sure multicast is available."
	if e.sync.namespace != "" {
		hint = "Make sure PerfTest can ask Kubernetes for a list of pod IPs, see https://github.com/jgroups-extras/jgroups-kubernetes."
	}
	return []jvm.Exception{{Class: "java.lang.IllegalStateException",
		Message: fmt.Sprintf("Waited %d second(s) and expected number of PerfTest instances did not join. %s", int64(e.sync.timeout/time.Second), hint)}}
}

// wait announces this instance on conn and returns once it has heard of
// expected-1 others, printing PerfTest's progress text with write (which
// takes partial lines): the waiting line, a dot per round and the count
// when it changes short of the goal. ctx ending returns ctx's error.
func (s instanceSync) wait(ctx context.Context, conn *amqp.Connection, write func(string)) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	exchange := s.exchangeName()
	if err := ch.ExchangeDeclare(exchange, amqp.ExchangeFanout, false, true, false, false, nil); err != nil {
		return err
	}
	q, err := ch.QueueDeclare("", false, true, true, false, nil)
	if err != nil {
		return err
	}
	if err := ch.QueueBind(q.Name, "", exchange, false, nil); err != nil {
		return err
	}
	announcements, err := ch.Consume(q.Name, "", true, true, false, false, nil)
	if err != nil {
		return err
	}
	var raw [8]byte
	_, _ = rand.Read(raw[:])
	self := hex.EncodeToString(raw[:])
	announce := func() error {
		return ch.PublishWithContext(ctx, exchange, "", false, false, amqp.Publishing{Body: []byte(self)})
	}
	// A newcomer is bound before it announces itself, so answering each
	// new announcement tells every later instance about this one.
	if err := announce(); err != nil {
		return err
	}
	write(fmt.Sprintf("Waiting for %d other instance(s) to join...\n", s.expected-1))
	seen := map[string]bool{self: true}
	deadline := time.NewTimer(s.timeout)
	defer deadline.Stop()
	// The first round gathers what is already there, so the last one to
	// arrive reports no partial count, as a JGroups member joining a full
	// view does not.
	settle := time.NewTimer(200 * time.Millisecond)
	defer settle.Stop()
	ticker := time.NewTicker(s.tick)
	defer ticker.Stop()
	reported := 0
	report := func() {
		if len(seen) >= s.expected {
			write("\n")
			return
		}
		if len(seen) != reported {
			write(fmt.Sprintf(" %d/%d instance(s) joined", len(seen), s.expected))
			reported = len(seen)
		}
	}
	write(".")
	settling := true
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return &syncTimeoutError{sync: s}
		case d, ok := <-announcements:
			if !ok {
				return amqp.ErrClosed
			}
			peer := string(d.Body)
			if seen[peer] {
				continue
			}
			seen[peer] = true
			if err := announce(); err != nil {
				return err
			}
			if !settling {
				report()
			}
		case <-settle.C:
			settling = false
			report()
		case <-ticker.C:
			if len(seen) < s.expected {
				write(".")
			}
			if err := announce(); err != nil {
				return err
			}
		}
		if len(seen) >= s.expected && !settling {
			// Late announcements still reach the ones that have not
			// finished, from the answers already sent.
			write("All expected instances are ready, starting.\n")
			return nil
		}
	}
}
