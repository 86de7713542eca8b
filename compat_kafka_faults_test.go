package perfclones_test

// Fault tests of kafka-producer-perf-test on the WAN rig (scripts/kafka-tool
// wan: a private broker whose advertised listener is a Toxiproxy proxy, so
// every client connection crosses the proxy): the broker killed and
// restarted, paused, connections reset and stalled mid-run. Every run sends
// --payload-monotonic values (0, 1, ... N-1); afterwards the topic is read
// back. What must hold: the run ends with its final line, reported sent +
// failure lines = --num-records, and the topic holds exactly the reported
// successes, each value once (idempotence: no record written twice after a
// retry; exact counts: a record reported failed was not written). A last
// case counts the produce requests in flight per broker connection at a
// proxy between Toxiproxy and the broker: with acks=all and idempotence (the
// defaults) more than one.
//
// The test starts the rig (and stops it at the end); it takes about three
// minutes, most of it the broker's restarts and the 20 s pause.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/perfclones/perfclones/internal/shapes"
	"github.com/perfclones/perfclones/internal/testenv"
)

// wanRig is the WAN rig as the test drives it.
type wanRig struct {
	tool      string // scripts/kafka-tool
	bootstrap string // the proxy's address, which the broker advertises
	proxy     *toxiproxy.Proxy
}

// startWANRig starts the rig with 2 ms each way (scripts/kafka-tool wan
// start) and stops it when the test ends.
func startWANRig(t *testing.T) *wanRig {
	t.Helper()
	kenv := testenv.Kafka(t)
	tenv := testenv.Toxiproxy(t)
	rig := &wanRig{tool: kenv.ToolScript}
	rig.run(t, 3*time.Minute, "start", "2")
	t.Cleanup(func() { rig.run(t, 2*time.Minute, "stop") })
	out := rig.run(t, 30*time.Second, "env")
	vars := map[string]string{}
	for _, l := range shapes.Lines(out) {
		k, v, ok := strings.Cut(strings.TrimPrefix(l, "export "), "=")
		if ok {
			vars[k] = strings.Trim(v, `'"`)
		}
	}
	rig.bootstrap = vars["PERF_KAFKA_WAN_BOOTSTRAP"]
	p, err := toxiproxy.NewClient(tenv.API).Proxy(vars["PERF_KAFKA_WAN_PROXY"])
	if err != nil || rig.bootstrap == "" {
		t.Fatalf("WAN rig: proxy %q, bootstrap %q: %v\n%s", vars["PERF_KAFKA_WAN_PROXY"], rig.bootstrap, err, out)
	}
	rig.proxy = p
	return rig
}

// run runs scripts/kafka-tool wan ARGS and returns its stdout; a failure
// fails the test.
func (w *wanRig) run(t *testing.T, timeout time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.tool, append([]string{"wan"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kafka-tool wan %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// producerRun is one run of our producer in its own process.
type wanRun struct {
	stdout, stderr bytes.Buffer
	cmd            *exec.Cmd
	start          time.Time
}

func startProducer(t *testing.T, bin string, args []string) *wanRun {
	t.Helper()
	r := &wanRun{}
	r.cmd = exec.Command(bin, args...)
	r.cmd.Env = append(os.Environ(), "COLUMNS=80", "PERFCLONES_KAFKA_VERSION=4.4")
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	r.start = time.Now()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return r
}

// wait waits for the run's end, at most limit, and returns its exit code.
func (r *wanRun) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return exitErr.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		_ = r.cmd.Process.Kill()
		<-done
		t.Fatalf("no exit within %v\nstdout:\n%s\nstderr:\n%s", limit, r.stdout.String(), r.stderr.String())
		return -1
	}
}

// readMonotonic reads the whole topic from addrs and returns how many
// records it holds and how often each value appears.
func readMonotonic(t *testing.T, addrs []string, topic string, want int64) (int64, map[int64]int) {
	t.Helper()
	end := endOffsets(t, addrs, topic)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ClientID("perfclones-compat-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := map[int64]int{}
	var n int64
	deadline := time.Now().Add(60 * time.Second)
	for n < end && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			n++
			v, err := strconv.ParseInt(string(r.Value), 10, 64)
			if err != nil || v < 0 || v >= want {
				t.Errorf("record %s-%d@%d: value %q is not one of 0..%d", topic, r.Partition, r.Offset, r.Value, want-1)
				return
			}
			seen[v]++
		})
	}
	if n != end {
		t.Errorf("read %d records of the %d the end offsets count", n, end)
	}
	return n, seen
}

// checkExact checks a finished monotonic run: its final line, sent +
// failures = n, and the topic holding exactly the sent records, each value
// once.
func checkExact(t *testing.T, addrs []string, topic string, r *wanRun, rc int, n int64) {
	t.Helper()
	out := shapes.Lines(r.stdout.String())
	t.Logf("ours: rc %d in %v, last line %q", rc, time.Since(r.start).Round(time.Millisecond), lastLine(out))
	failures := int64(0)
	kinds := map[string]int{}
	for _, l := range shapes.Lines(r.stderr.String()) {
		if exceptionLineRe.MatchString(l) {
			failures++
			kinds[kafkaMasker.Mask(l)]++
		} else {
			t.Logf("stderr: %s", l)
		}
	}
	for l, c := range kinds {
		t.Logf("stderr: %d x %s", c, l)
	}
	if rc != 0 {
		t.Errorf("exit code %d, want 0\nstderr:\n%s", rc, r.stderr.String())
	}
	sent, ok := finalSent(t, out)
	if !ok {
		t.Fatalf("the run did not end with its final line:\n%s", r.stdout.String())
	}
	if sent+failures != n {
		t.Errorf("sent %d + failures %d = %d, want --num-records %d", sent, failures, sent+failures, n)
	}
	held, seen := readMonotonic(t, addrs, topic, n)
	dups := 0
	for v, c := range seen {
		if c > 1 {
			dups++
			if dups <= 5 {
				t.Errorf("value %d written %d times", v, c)
			}
		}
	}
	if held != sent || int64(len(seen)) != sent {
		t.Errorf("the topic holds %d records (%d distinct values), ours reported %d sent and %d failed", held, len(seen), sent, failures)
	} else {
		t.Logf("the topic holds the %d reported successes, each once; %d failed", sent, failures)
	}
}

func TestCompatKafkaFaults(t *testing.T) {
	rig := startWANRig(t)
	producer := ourKafkaTools(t).producer
	addrs := []string{rig.bootstrap}

	// A monotonic run at --throughput rate with fault applied at 2 s into it.
	type faultCase struct {
		name  string
		n     int
		rate  int
		props []string
		fault func(t *testing.T)
		limit time.Duration // the run's end, at most
	}
	pause := func(d time.Duration) func(t *testing.T) {
		return func(t *testing.T) {
			rig.run(t, 30*time.Second, "pause")
			time.Sleep(d)
			rig.run(t, 30*time.Second, "resume")
		}
	}
	kill := func(t *testing.T) {
		rig.run(t, 30*time.Second, "kill")
		time.Sleep(3 * time.Second)
		rig.run(t, 3*time.Minute, "restart", "2")
	}
	toxic := func(kind string, attrs toxiproxy.Attributes, d time.Duration) func(t *testing.T) {
		return func(t *testing.T) {
			name := "fault-" + kind
			for _, stream := range []string{"upstream", "downstream"} {
				if _, err := rig.proxy.AddToxic(name+"-"+stream, kind, stream, 1, attrs); err != nil {
					t.Fatalf("toxic %s: %v", kind, err)
				}
			}
			time.Sleep(d)
			for _, stream := range []string{"upstream", "downstream"} {
				if err := rig.proxy.RemoveToxic(name + "-" + stream); err != nil {
					t.Errorf("remove toxic %s: %v", kind, err)
				}
			}
		}
	}
	short := []string{"request.timeout.ms=3000", "delivery.timeout.ms=8000"}
	for _, tc := range []faultCase{
		{name: "broker killed and restarted", n: 16000, rate: 2000, fault: kill, limit: 3 * time.Minute},
		{name: "broker killed and restarted short timeouts", n: 16000, rate: 2000, props: short, fault: kill, limit: 3 * time.Minute},
		{name: "broker paused 20 s", n: 12000, rate: 2000, fault: pause(20 * time.Second), limit: 2 * time.Minute},
		{name: "reset_peer", n: 12000, rate: 2000, fault: toxic("reset_peer", toxiproxy.Attributes{"timeout": 0}, time.Second), limit: time.Minute},
		{name: "timeout toxic 10 s", n: 12000, rate: 2000, fault: toxic("timeout", toxiproxy.Attributes{"timeout": 10000}, 10*time.Second), limit: 2 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic := createTopic(t, addrs, "wanfault", 3, 1, nil)
			args := []string{"--topic", topic, "--num-records", strconv.Itoa(tc.n), "--payload-monotonic",
				"--throughput", strconv.Itoa(tc.rate), "--bootstrap-server", rig.bootstrap}
			if len(tc.props) > 0 {
				args = append(append(args, "--command-property"), tc.props...)
			}
			r := startProducer(t, producer, args)
			time.Sleep(2 * time.Second)
			tc.fault(t)
			t.Logf("fault over %v into the run", time.Since(r.start).Round(time.Millisecond))
			rc := r.wait(t, tc.limit)
			checkExact(t, addrs, topic, r, rc, int64(tc.n))
		})
	}

	// Requests in flight: a counting proxy between Toxiproxy and the
	// broker, so every connection of the client is counted.
	t.Run("produce requests in flight per broker", func(t *testing.T) {
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
		topic := createTopic(t, addrs, "wanflight", 3, 1, nil)
		const n = 30000
		r := startProducer(t, producer, []string{"--topic", topic, "--num-records", strconv.Itoa(n), "--payload-monotonic",
			"--throughput", "-1", "--bootstrap-server", rig.bootstrap})
		rc := r.wait(t, 2*time.Minute)
		checkExact(t, addrs, topic, r, rc, n)
		produced, most := counter.produce.Load(), counter.maxInFlight.Load()
		t.Logf("%d produce requests, at most %d in flight on one connection", produced, most)
		if produced == 0 || most < 2 {
			t.Errorf("at most %d produce request(s) in flight per broker connection (of %d), want more than 1 with acks=all and idempotence", most, produced)
		}
	})
}

// countingProxy forwards connections to a Kafka broker and counts the
// produce requests sent and not yet answered on each connection.
type countingProxy struct {
	addr                 string
	produce, maxInFlight atomic.Int64
}

func startCountingProxy(t *testing.T, upstream string) *countingProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{addr: l.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, u)
			mu.Unlock()
			st := &connState{pending: map[int32]bool{}}
			wg.Add(2)
			go func() { defer wg.Done(); p.requests(c, u, st) }()
			go func() { defer wg.Done(); p.answers(u, c, st) }()
		}
	}()
	return p
}

// connState is one connection's produce requests not yet answered, by
// correlation id.
type connState struct {
	mu       sync.Mutex
	pending  map[int32]bool
	inFlight int64
}

// requests copies the client's requests to the broker and counts the
// produce requests (API key 0) among them.
func (p *countingProxy) requests(client, broker net.Conn, st *connState) {
	defer broker.Close()
	r := bufio.NewReader(client)
	hdr := make([]byte, 12) // size, API key, version, correlation id
	for {
		if _, err := io.ReadFull(r, hdr); err != nil {
			return
		}
		size := int(binary.BigEndian.Uint32(hdr[:4]))
		key := int16(binary.BigEndian.Uint16(hdr[4:6]))
		corr := int32(binary.BigEndian.Uint32(hdr[8:12]))
		if size < 8 {
			return
		}
		body := make([]byte, size-8)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if key == 0 {
			p.produce.Add(1)
			st.mu.Lock()
			st.pending[corr] = true
			st.inFlight++
			if st.inFlight > p.maxInFlight.Load() {
				p.maxInFlight.Store(st.inFlight)
			}
			st.mu.Unlock()
		}
		if _, err := broker.Write(append(hdr[:12:12], body...)); err != nil {
			return
		}
	}
}

// answers copies the broker's answers to the client; an answer to a
// produce request ends it being in flight.
func (p *countingProxy) answers(broker, client net.Conn, st *connState) {
	defer client.Close()
	r := bufio.NewReader(broker)
	hdr := make([]byte, 8) // size, correlation id
	for {
		if _, err := io.ReadFull(r, hdr); err != nil {
			return
		}
		size := int(binary.BigEndian.Uint32(hdr[:4]))
		corr := int32(binary.BigEndian.Uint32(hdr[4:8]))
		if size < 4 {
			return
		}
		body := make([]byte, size-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		st.mu.Lock()
		if st.pending[corr] {
			delete(st.pending, corr)
			st.inFlight--
		}
		st.mu.Unlock()
		if _, err := client.Write(append(hdr[:8:8], body...)); err != nil {
			return
		}
	}
}
