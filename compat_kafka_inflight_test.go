package perfclones_test

// max.in.flight.requests.per.connection with idempotence, end to end: our
// producer runs through the WAN rig (2 ms each way) with a counting proxy
// between Toxiproxy and the broker, which counts the produce requests sent
// and not yet answered on each connection. With acks=all and idempotence
// the Java client keeps at most that many in flight; so must ours, and
// idempotence must stay on (every record written once, counts exact).

import (
	"strconv"
	"testing"
	"time"
)

func TestCompatKafkaInflight(t *testing.T) {
	rig := startWANRig(t)
	producer := ourKafkaTools(t).producer
	addrs := []string{rig.bootstrap}

	upstream := rig.proxy.Upstream
	counter := startCountingProxy(t, upstream)
	rig.proxy.Upstream = counter.addr
	if err := rig.proxy.Save(); err != nil {
		t.Fatalf("proxy upstream -> %s: %v", counter.addr, err)
	}
	t.Cleanup(func() {
		rig.proxy.Upstream = upstream
		if err := rig.proxy.Save(); err != nil {
			t.Errorf("proxy upstream back to %s: %v", upstream, err)
		}
	})

	for _, tc := range []struct {
		name        string
		props       []string
		most, least int64 // in flight on one connection
	}{
		{"one", []string{"max.in.flight.requests.per.connection=1"}, 1, 1},
		{"three", []string{"max.in.flight.requests.per.connection=3"}, 3, 2},
		// The default, 5, which franz-go keeps itself: more than three.
		{"default", nil, 5, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic := createTopic(t, addrs, "waninflight", 3, 1, nil)
			const n = 40000
			// Earlier runs' connections are closed: they ended.
			counter.maxInFlight.Store(0)
			before := counter.produce.Load()
			args := []string{"--topic", topic, "--num-records", strconv.Itoa(n), "--payload-monotonic",
				"--throughput", "-1", "--bootstrap-server", rig.bootstrap,
				"--command-property", "acks=all", "enable.idempotence=true"}
			r := startProducer(t, producer, append(args, tc.props...))
			rc := r.wait(t, time.Minute)
			checkExact(t, addrs, topic, r, rc, n)
			produced, most := counter.produce.Load()-before, counter.maxInFlight.Load()
			t.Logf("%d produce requests, at most %d in flight on one connection", produced, most)
			if produced == 0 || most > tc.most || most < tc.least {
				t.Errorf("at most %d produce request(s) in flight on one connection (of %d); want %d..%d", most, produced, tc.least, tc.most)
			}
		})
	}
}
