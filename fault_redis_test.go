package perfclones_test

// The fault suite for redis-benchmark, each case against a redis-server
// of its own (testenv.StartPrivateRedis, with an append-only file so that
// a killed server comes back with what it had executed), directly or
// through a Toxiproxy proxy.
//
// Every case runs `-t incr` (INCR of the one key counter:__rand_int__, -r
// being unset), so the server's own count is exact twice over: INFO
// commandstats' cmdstat_incr calls, and the key's value (the only count
// that survives a kill, replayed from the AOF). Ours writes the result
// file: operations are the replies read, and "unanswered" the requests of
// the pipelines written whose replies never came, so sent = operations +
// unanswered; the server ran at least the acknowledged ones and at most
// all that were sent (a request may reach the server and lose its reply).
// In flight at a fault there are at most -c x -P requests.
//
// The C tool exits 1 with one "Error: ..." line when a connection breaks,
// and prints no summary; it has no timeout, so a paused server makes it
// wait, and it finishes once the server goes on; ours does the same.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/perfclones/perfclones/internal/testenv"
)

const redisCounterKey = "counter:__rand_int__"

// redisIncrCalls is INFO commandstats' count of INCR calls and the
// counter's value.
func redisIncrCalls(t *testing.T, srv *testenv.PrivateRedis) (calls, value int64) {
	t.Helper()
	c := srv.Client(t)
	info, err := c.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	for _, l := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(l, "cmdstat_incr:calls="); ok {
			calls, _ = strconv.ParseInt(strings.SplitN(rest, ",", 2)[0], 10, 64)
		}
	}
	return calls, redisCounter(t, srv)
}

func redisCounter(t *testing.T, srv *testenv.PrivateRedis) int64 {
	t.Helper()
	v, err := srv.Client(t).Get(t.Context(), redisCounterKey).Int64()
	if err != nil && err.Error() != "redis: nil" {
		t.Fatalf("GET %s: %v", redisCounterKey, err)
	}
	return v
}

func TestFaultRedis(t *testing.T) {
	t.Parallel()
	bin := ourTool(t, "redis-benchmark")
	testenv.Toxiproxy(t)
	const clients, pipeline = 4, 8
	const inFlight = clients * pipeline

	type outcome struct {
		acked, unanswered int64
	}
	// counts checks the result file: one INCR test, sent = acked +
	// unanswered, at most -c x -P unanswered.
	counts := func(t *testing.T, r faultRun, wantFailed bool) outcome {
		t.Helper()
		if r.result == nil || len(r.result.Tests) != 1 {
			t.Fatalf("no result file with one test (exit %d)\nstderr:\n%s", r.rc, r.stderr)
		}
		c := r.result.Tests[0].Counts
		o := outcome{acked: c.Operations, unanswered: c.Errors["unanswered"]}
		if o.unanswered > inFlight {
			t.Errorf("%d unanswered requests, more than the %d that can be in flight", o.unanswered, inFlight)
		}
		if wantFailed && (r.result.Ending != "failed" || r.result.ExitCode != 1) {
			t.Errorf("result ending %q exit %d, want failed and 1", r.result.Ending, r.result.ExitCode)
		}
		return o
	}
	// broken checks a run that a broken connection ended: exit 1, one
	// "Error: ..." line last on stderr, no summary on stdout, within bound
	// of the fault.
	broken := func(t *testing.T, r faultRun, faultAt, bound time.Duration, errs ...string) {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		last := lines[len(lines)-1]
		known := false
		for _, e := range errs {
			known = known || last == e
		}
		if r.rc != 1 || !known {
			t.Errorf("exit %d, last stderr line %q, want 1 and one of %q", r.rc, last, errs)
		}
		if strings.Contains(r.stdout, "requests per second") {
			t.Errorf("a summary after a failure (the C tool prints none):\n%s", r.stdout)
		}
		if r.elapsed > faultAt+bound {
			t.Errorf("ended %s after the start, the fault came at %s: want within %s of it", r.elapsed, faultAt, bound)
		}
	}
	args := func(addr string, n int) []string {
		host, port, _ := strings.Cut(addr, ":")
		return []string{bin, "-h", host, "-p", port, "-c", strconv.Itoa(clients), "-P", strconv.Itoa(pipeline),
			"-n", strconv.Itoa(n), "-t", "incr", "-q"}
	}
	// bounded checks acked <= server <= acked + unanswered and returns
	// the table's server column.
	bounded := func(t *testing.T, server int64, o outcome) string {
		t.Helper()
		if server < o.acked || server > o.acked+o.unanswered {
			t.Errorf("the server ran %d INCRs: want %d acknowledged to %d (+%d unanswered)", server, o.acked, o.acked+o.unanswered, o.unanswered)
		}
		return fmt.Sprintf("%d (bound %d..%d)", server, o.acked, o.acked+o.unanswered)
	}
	aof := []string{"--appendonly", "yes", "--appendfsync", "no"}

	t.Run("unreachable from the start", func(t *testing.T) {
		t.Parallel()
		addr := testenv.ClosedLoopbackAddr(t)
		r := runFault(t, args(addr, 1000), nil, 20*time.Second, nil)
		want := fmt.Sprintf("Could not connect to Redis at %s: Connection refused\n", addr)
		if r.rc != 1 || r.stderr != want || r.stdout != "" || r.elapsed > 3*time.Second {
			t.Errorf("exit %d after %s, stdout %q, stderr %q; want 1 within 3 s and %q", r.rc, r.elapsed, r.stdout, r.stderr, want)
		}
		faultRow(t, "redis-benchmark", "server unreachable", r, faultCounts{server: "-"})
	})

	t.Run("killed and restarted", func(t *testing.T) {
		t.Parallel()
		srv := testenv.StartPrivateRedis(t, aof...)
		const at = time.Second
		r := runFault(t, args(srv.Addr, 50_000_000), nil, 30*time.Second, func(start time.Time) {
			sleepUntil(start, at)
			srv.Kill()
		})
		broken(t, r, at, 5*time.Second, "Error: Server closed the connection", "Error: Connection reset by peer")
		o := counts(t, r, true)
		srv.Restart(t, 10*time.Second)
		server := redisCounter(t, srv)
		faultRow(t, "redis-benchmark", "server killed (SIGKILL), restarted", r,
			faultCounts{sent: o.acked + o.unanswered, acked: o.acked, failed: o.unanswered, server: bounded(t, server, o) + " after AOF replay"})
	})

	t.Run("paused", func(t *testing.T) {
		t.Parallel()
		srv := testenv.StartPrivateRedis(t, aof...)
		const n = 1_000_000
		const pause = 4 * time.Second
		r := runFault(t, args(srv.Addr, n), nil, 60*time.Second, func(start time.Time) {
			sleepUntil(start, 500*time.Millisecond)
			srv.Pause()
			time.Sleep(pause)
			srv.Resume()
		})
		if r.rc != 0 || !strings.Contains(r.stdout, "INCR: ") || !strings.Contains(r.stdout, "requests per second") {
			t.Errorf("exit %d, want 0 and the summary after the server went on:\n%s\nstderr:\n%s", r.rc, r.stdout, r.stderr)
		}
		if r.elapsed < pause {
			t.Errorf("ended after %s, before the server was resumed: the run was over before the pause", r.elapsed)
		}
		o := counts(t, r, false)
		calls, value := redisIncrCalls(t, srv)
		if o.acked != n || o.unanswered != 0 || calls != n || value != n {
			t.Errorf("acknowledged %d, unanswered %d; the server ran %d INCRs, counter %d; want %d each and 0", o.acked, o.unanswered, calls, value, n)
		}
		faultRow(t, "redis-benchmark", "server paused 4 s (SIGSTOP; no client timeout)", r,
			faultCounts{sent: o.acked, acked: o.acked, server: fmt.Sprintf("%d calls, counter %d", calls, value)})
	})

	for _, tc := range []struct {
		name, fault, toxic string
		attrs              toxiproxy.Attributes
		errs               []string
	}{
		{"connections reset", "connections reset (reset_peer)", "reset_peer", toxiproxy.Attributes{"timeout": 0},
			[]string{"Error: Connection reset by peer", "Error: Server closed the connection"}},
		{"network stalled", "network stalled (timeout toxic, closed after 2 s)", "timeout", toxiproxy.Attributes{"timeout": 2000},
			[]string{"Error: Server closed the connection", "Error: Connection reset by peer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := testenv.StartPrivateRedis(t)
			proxy, addr := testenv.Toxiproxy(t).Proxy(t, srv.Addr)
			const at = time.Second
			r := runFault(t, args(addr, 50_000_000), nil, 30*time.Second, func(start time.Time) {
				sleepUntil(start, at)
				if _, err := proxy.AddToxic("fault", tc.toxic, "downstream", 1, tc.attrs); err != nil {
					t.Error(err)
				}
			})
			broken(t, r, at, 5*time.Second, tc.errs...)
			o := counts(t, r, true)
			calls, value := redisIncrCalls(t, srv)
			if calls != value {
				t.Errorf("cmdstat_incr calls %d, counter %d", calls, value)
			}
			faultRow(t, "redis-benchmark", tc.fault, r,
				faultCounts{sent: o.acked + o.unanswered, acked: o.acked, failed: o.unanswered, server: bounded(t, calls, o)})
		})
	}
}
