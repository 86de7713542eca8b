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

	counter := rig.countProduceRequests(t)

	for _, tc := range []struct {
		name        string
		props       []string
		most, least int64 // in flight on one connection
	}{
		{"one", []string{"--command-property", "acks=all", "enable.idempotence=true", "max.in.flight.requests.per.connection=1"}, 1, 1},
		{"three", []string{"--command-property", "acks=all", "enable.idempotence=true", "max.in.flight.requests.per.connection=3"}, 3, 2},
		// No setting at all: 4.x's defaults, acks=all with idempotence and
		// 5 in flight, which franz-go keeps itself: more than three.
		{"defaults", nil, 5, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic := createTopic(t, addrs, "waninflight", 3, 1, nil)
			const n = 40000
			// Earlier runs' connections are closed: they ended.
			counter.maxInFlight.Store(0)
			before := counter.produce.Load()
			args := []string{"--topic", topic, "--num-records", strconv.Itoa(n), "--payload-monotonic",
				"--throughput", "-1", "--bootstrap-server", rig.bootstrap}
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
