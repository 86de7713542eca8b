package redisbench

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/result"
	"github.com/perfclones/perfclones/internal/result/resulttest"
	"github.com/perfclones/perfclones/internal/testenv"
)

// mainRun is one in-process run of Main.
type mainRun struct {
	rc             int
	stdout, stderr string
	elapsed        time.Duration
	result         *result.Run // the result file, nil when none was written
	resultErr      error       // what Validate said of it
}

// runMainWith runs Main with args and the environment vars (plus a result
// file in a temporary directory); cancel, when positive, cancels ctx after
// that long with the cause SIGINT gives.
func runMainWith(t *testing.T, args []string, vars map[string]string, stdin string, cancel time.Duration) mainRun {
	t.Helper()
	path := filepath.Join(t.TempDir(), "result.json")
	env := map[string]string{result.Env: path}
	for k, v := range vars {
		env[k] = v
	}
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	if cancel > 0 {
		timer := time.AfterFunc(cancel, func() { stop(cli.Signal{Sig: syscall.SIGINT}) })
		defer timer.Stop()
	}
	var stdout, stderr bytes.Buffer
	start := time.Now()
	rc := Main(ctx, args, cli.IO{Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr, Getenv: cli.Env(env)})
	r := mainRun{rc: rc, stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	if b, err := os.ReadFile(path); err == nil {
		r.result, r.resultErr = resulttest.Validate(b)
		if r.resultErr != nil {
			t.Errorf("result file does not validate: %v\n%s", r.resultErr, b)
		}
	}
	return r
}

func TestMainReleases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		version string
		args    string
		rc      int
		stdout  string
		stderr  string
	}{
		{name: "default version", args: "--version", stdout: "redis-benchmark 7.4.1\n"},
		{name: "7.4 by name", version: "7.4", args: "-v", stdout: "redis-benchmark 7.4.1\n"},
		{name: "7.4 by full version", version: "7.4.1", args: "-v", stdout: "redis-benchmark 7.4.1\n"},
		{name: "help is the release's", version: "7.4", args: "--help", stdout: usage74},
		{name: "invalid option prints the release's usage", args: "-y", rc: 1, stdout: "Invalid option \"-y\" or option argument missing\n\n" + usage74},
		{name: "unknown release", version: "bogus", args: "--version", rc: 2,
			stderr: "perfclones: PERFCLONES_REDIS_VERSION=bogus is not a release this tool emulates (known: 7.4)\n"},
		// The release is checked before the options, and before connecting.
		{name: "unknown release before bad options", version: "6.0", args: "-y -p 70000", rc: 2,
			stderr: "perfclones: PERFCLONES_REDIS_VERSION=6.0 is not a release this tool emulates (known: 7.4)\n"},
		{name: "unknown release before connecting", version: "bogus", args: "-p 1 -n 10", rc: 2,
			stderr: "perfclones: PERFCLONES_REDIS_VERSION=bogus is not a release this tool emulates (known: 7.4)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			vars := map[string]string{}
			if tt.version != "" {
				vars[releases.Env] = tt.version
			}
			r := runMainWith(t, strings.Fields(tt.args), vars, "", 0)
			if r.rc != tt.rc || r.stdout != tt.stdout || r.stderr != tt.stderr {
				t.Errorf("rc %d stdout %q stderr %q\nwant rc %d stdout %q stderr %q", r.rc, r.stdout, r.stderr, tt.rc, tt.stdout, tt.stderr)
			}
			if r.result != nil {
				t.Errorf("a result file was written for a run that never started: %+v", r.result)
			}
		})
	}
}

// reportTitleRe finds each test's title in any output mode.
var (
	reportTitleRe = regexp.MustCompile(`(?m)(?:^|\r)====== (.*) ======$`)
	quietTitleRe  = regexp.MustCompile(`(?m)(?:^|\r)([^\r\n]*): [^\r\n ]+ requests per second, p50=`)
	csvTitleRe    = regexp.MustCompile(`(?m)^"(.*?)","[-0-9.infa]+","`)
	completedNRe  = regexp.MustCompile(`(?m)^  (\d+) requests completed in `)
)

func printedTitles(stdout string) []string {
	var titles []string
	for _, re := range []*regexp.Regexp{reportTitleRe, quietTitleRe, csvTitleRe} {
		for _, m := range re.FindAllStringSubmatch(stdout, -1) {
			titles = append(titles, m[1])
		}
	}
	return titles
}

func TestMainResultFile(t *testing.T) {
	e := testenv.Redis(t)
	host, port, err := net.SplitHostPort(e.Addr)
	if err != nil {
		t.Fatal(err)
	}
	_, authPort, _ := net.SplitHostPort(e.AuthAddr)
	cHost, cPort, _ := net.SplitHostPort(e.ClusterAddrs[0])
	std := "-h " + host + " -p " + port + " "
	tests := []struct {
		name  string
		args  string
		stdin string
		// requests is -n; pipeline -P when not 1.
		requests, pipeline int64
		// bytesPerRequest is the payload of one request.
		bytesPerRequest int64
	}{
		{name: "seed 000", args: "-h " + host + " -p " + authPort + " -a " + e.AuthPassword + " -c 200 -n 4000 -r 1000000 -d 32 -t set,get",
			requests: 4000, bytesPerRequest: -32},
		{name: "seed 000 threads", args: std + "--threads 4 -c 20 -n 4000 -r 1000000 -d 32 -t set,get", requests: 4000, bytesPerRequest: -32},
		{name: "seed 000 short connections", args: std + "-k 0 -c 10 -n 500 -r 1000 -d 32 -t set", requests: 500, bytesPerRequest: 32},
		{name: "seed 000 cluster", args: "-h " + cHost + " -p " + cPort + " --cluster -n 3000 -t set,get", requests: 3000, bytesPerRequest: -3},
		{name: "seed 003 quiet", args: std + "-q -t set,get -r 1000000 -n 3000 -c 100", requests: 3000, bytesPerRequest: -3},
		{name: "csv", args: std + "--csv -n 2000 -t ping,set,mset", requests: 2000, bytesPerRequest: -3},
		{name: "pipeline dividing n", args: std + "-q -P 16 -n 3200 -t set", requests: 3200, pipeline: 16, bytesPerRequest: 3},
		{name: "pipeline not dividing n", args: std + "-P 16 -c 5 -n 100 -t get", requests: 100, pipeline: 16},
		{name: "custom command", args: std + "-q -r 100 -n 1000 set k:__rand_int__ v", requests: 1000,
			bytesPerRequest: int64(len(encodeCommand([]string{"set", "k:__rand_int__", "v"})))},
		{name: "stdin argument", args: std + "-x -n 500 set stdin:key", stdin: "abc", requests: 500,
			bytesPerRequest: int64(len(encodeCommand([]string{"set", "stdin:key", "abc"})))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runMainWith(t, strings.Fields(tt.args), nil, tt.stdin, 0)
			if r.rc != 0 {
				t.Fatalf("rc %d\nstdout %q\nstderr %q", r.rc, r.stdout, r.stderr)
			}
			if r.result == nil {
				t.Fatal("no result file")
			}
			res := r.result
			if res.Tool != "redis-benchmark" || res.Release != "7.4" || res.Ending != "completed" || res.ExitCode != 0 ||
				strings.Join(res.Args, " ") != strings.Join(strings.Fields(tt.args), " ") {
				t.Errorf("run = tool %q release %q ending %q exit %d args %q", res.Tool, res.Release, res.Ending, res.ExitCode, res.Args)
			}
			titles := printedTitles(r.stdout)
			if len(res.Tests) != len(titles) || len(titles) == 0 {
				t.Fatalf("%d tests in the file, %d printed (%q)", len(res.Tests), len(titles), titles)
			}
			completed := completedNRe.FindAllStringSubmatch(r.stdout, -1)
			for i, test := range res.Tests {
				if test.Name != titles[i] {
					t.Errorf("test %d is %q, printed %q", i, test.Name, titles[i])
				}
				ops := test.Counts.Operations
				p := max(tt.pipeline, 1)
				if want := (tt.requests + p - 1) / p * p; ops != want {
					t.Errorf("%s: %d operations, want %d", test.Name, ops, want)
				}
				if completed != nil {
					if n, _ := strconv.ParseInt(completed[i][1], 10, 64); n != ops {
						t.Errorf("%s: %d operations, printed %d requests completed", test.Name, ops, n)
					}
				}
				// The C tool records at most -n latencies.
				if l := test.Latency["request"]; l == nil || l.Count != min(ops, tt.requests) {
					t.Errorf("%s: latency %+v, want %d values", test.Name, l, min(ops, tt.requests))
				}
				var sum int64
				for _, iv := range test.Intervals {
					sum += iv.Operations
				}
				if sum != ops || len(test.Intervals) == 0 {
					t.Errorf("%s: %d intervals hold %d operations, want %d", test.Name, len(test.Intervals), sum, ops)
				}
				if test.Counts.Errors != nil {
					t.Errorf("%s: errors %v", test.Name, test.Counts.Errors)
				}
				wantBytes := tt.bytesPerRequest * ops
				if tt.bytesPerRequest < 0 { // -d bytes per value; GET and PING carry none, MSET ten
					wantBytes = 0
					switch {
					case test.Name == "SET":
						wantBytes = -tt.bytesPerRequest * ops
					case strings.HasPrefix(test.Name, "MSET"):
						wantBytes = -10 * tt.bytesPerRequest * ops
					}
				}
				if test.Counts.Bytes != wantBytes {
					t.Errorf("%s: %d bytes, want %d", test.Name, test.Counts.Bytes, wantBytes)
				}
				if test.ElapsedSeconds < 0 || test.End.Before(test.Start) {
					t.Errorf("%s: elapsed %v from %v to %v", test.Name, test.ElapsedSeconds, test.Start, test.End)
				}
			}
		})
	}
}

// TestMainInterrupted stops every mode that can run long with the cause
// SIGINT gives: each must return promptly with the signal's code, print
// nothing on stderr and leave a result file that ends "interrupted".
func TestMainInterrupted(t *testing.T) {
	e := testenv.Redis(t)
	host, port, err := net.SplitHostPort(e.Addr)
	if err != nil {
		t.Fatal(err)
	}
	cHost, cPort, _ := net.SplitHostPort(e.ClusterAddrs[0])
	std := "-h " + host + " -p " + port + " "
	tests := []struct {
		name  string
		args  string
		tests bool // whether a test was under way
	}{
		{name: "loop", args: std + "-l -q -c 5 -n 2000 -t set", tests: true},
		{name: "loop custom command", args: std + "-l -c 5 -n 2000 ping", tests: true},
		{name: "long run", args: std + "-q -c 10 -n 100000000 -t set", tests: true},
		{name: "long run pipelined", args: std + "--csv -c 10 -P 16 -n 1000000000 -t get", tests: true},
		{name: "threads", args: std + "--threads 3 -c 9 -n 100000000 -t set", tests: true},
		{name: "short connections", args: std + "-k 0 -c 5 -n 100000000 -t set", tests: true},
		{name: "cluster", args: "-h " + cHost + " -p " + cPort + " --cluster -q -n 100000000 -t set", tests: true},
		{name: "idle", args: std + "-c 5 -I"},
		{name: "stdin never ends", args: std + "-x -n 10 set k"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := strings.Fields(tt.args)
			var r mainRun
			if tt.name == "stdin never ends" {
				r = runBlockedStdin(t, args)
			} else {
				r = runMainWith(t, args, nil, "", 400*time.Millisecond)
			}
			if r.rc != 130 {
				t.Errorf("rc %d, want 130\nstdout %q\nstderr %q", r.rc, r.stdout, r.stderr)
			}
			if r.elapsed > 3*time.Second {
				t.Errorf("took %v to stop", r.elapsed)
			}
			if r.stderr != "" && !(strings.Contains(tt.args, "-k 0") && r.stderr == keepAliveOffWarning+"\n") {
				t.Errorf("stderr %q", r.stderr)
			}
			if r.result == nil {
				t.Fatal("no result file")
			}
			if r.result.Ending != "interrupted" || r.result.ExitCode != 130 {
				t.Errorf("ending %q exit code %d", r.result.Ending, r.result.ExitCode)
			}
			if tt.tests != (len(r.result.Tests) > 0) {
				t.Fatalf("%d tests in the file", len(r.result.Tests))
			}
			if !tt.tests {
				return
			}
			// The signal may come as a loop's next pass starts, so the last
			// test may be empty; what was measured must be there.
			var total int64
			for _, test := range r.result.Tests {
				total += test.Counts.Operations
				if l := test.Latency["request"]; l == nil || l.Count != test.Counts.Operations {
					t.Errorf("%s: latency %+v for %d operations", test.Name, l, test.Counts.Operations)
				}
			}
			if total == 0 {
				t.Errorf("the interrupted run recorded nothing: %+v", r.result.Tests)
			}
		})
	}
}

// runBlockedStdin runs -x with a stdin that never ends, and cancels.
func runBlockedStdin(t *testing.T, args []string) mainRun {
	t.Helper()
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer wr.Close()
	defer rd.Close()
	path := filepath.Join(t.TempDir(), "result.json")
	ctx, stop := context.WithCancelCause(context.Background())
	time.AfterFunc(300*time.Millisecond, func() { stop(cli.Signal{Sig: syscall.SIGINT}) })
	var stdout, stderr bytes.Buffer
	start := time.Now()
	rc := Main(ctx, args, cli.IO{Stdin: rd, Stdout: &stdout, Stderr: &stderr, Getenv: cli.Env(map[string]string{result.Env: path})})
	r := mainRun{rc: rc, stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.result, err = resulttest.Validate(b); err != nil {
		t.Errorf("result file: %v", err)
	}
	return r
}

// TestMainFailed checks the result file of runs that end in an error.
func TestMainFailed(t *testing.T) {
	e := testenv.Redis(t)
	host, port, err := net.SplitHostPort(e.Addr)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	tests := []struct {
		name   string
		args   string
		stderr string // how the first line of stderr starts
		kind   string // the error kind counted in the failed test, "" when no test ran
	}{
		{name: "unknown command", args: "-h " + host + " -p " + port + " -n 100 notacommand",
			stderr: "Error from server: ERR unknown command 'notacommand'", kind: "ERR"},
		{name: "connection refused", args: "-p " + closed + " -n 10",
			stderr: "Could not connect to Redis at 127.0.0.1:" + closed + ": Connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runMainWith(t, strings.Fields(tt.args), nil, "", 0)
			first, _, _ := strings.Cut(r.stderr, "\n")
			if r.rc != 1 || !strings.HasPrefix(first, tt.stderr) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("rc %d stderr %q, want 1 and %q", r.rc, r.stderr, tt.stderr)
			}
			if r.result == nil {
				t.Fatal("no result file")
			}
			if r.result.Ending != "failed" || r.result.ExitCode != 1 || r.result.Error != first {
				t.Errorf("ending %q exit %d error %q", r.result.Ending, r.result.ExitCode, r.result.Error)
			}
			if tt.kind == "" {
				if len(r.result.Tests) != 0 {
					t.Errorf("tests %+v", r.result.Tests)
				}
				return
			}
			if len(r.result.Tests) != 1 || r.result.Tests[0].Counts.Errors[tt.kind] < 1 {
				t.Fatalf("tests %+v, want one with %s errors", r.result.Tests, tt.kind)
			}
		})
	}
}

// TestMainInterruptedWhileDiscovering stops a run whose server accepts
// connections but never answers: the signal ends the wait for CONFIG GET
// (or CLUSTER NODES) at once, not after its timeout.
func TestMainInterruptedWhileDiscovering(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	for _, extra := range []string{"-q -t set", "--cluster -q -t set", "-I"} {
		t.Run(extra, func(t *testing.T) {
			r := runMainWith(t, append([]string{"-p", port, "-n", "10"}, strings.Fields(extra)...), nil, "", 300*time.Millisecond)
			if r.rc != 130 || r.elapsed > 2*time.Second || r.stderr != "" {
				t.Errorf("rc %d after %v, stderr %q; want 130 within 2 s and no message", r.rc, r.elapsed, r.stderr)
			}
			if r.result == nil || r.result.Ending != "interrupted" || len(r.result.Tests) != 0 {
				t.Errorf("result %+v", r.result)
			}
		})
	}
}
