package perfclones_test

// The dist archive as a user meets it: scripts/build makes it for this
// machine's architecture, tar unpacks it in a temporary directory, and the
// vendor docs' command lines (seeds 000, 001, 003, 004, scaled down) run from
// inside the unpacked tree through the names it ships, against the local
// servers, by a shell as the docs have users type them. Then the binary
// is run under a link and under a copied name, and perfclones' own
// commands (the tool list, run --result, install).

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/result/resulttest"
	"github.com/perfclones/perfclones/internal/shapes"
	"github.com/perfclones/perfclones/internal/testenv"
)

// distNames are the names the archive must hold under its top directory,
// besides perfclones itself: bin/ for PATH, and where the vendors'
// distributions keep them.
var distNames = []string{
	"bin/kafka-consumer-perf-test",
	"bin/kafka-producer-perf-test",
	"bin/redis-benchmark",
	"kafka/bin/kafka-consumer-perf-test.sh",
	"kafka/bin/kafka-producer-perf-test.sh",
	"rabbitmq-perf-test/bin/runjava",
	"redis/src/redis-benchmark",
	"rocketmq/benchmark/consumer.sh",
	"rocketmq/benchmark/producer.sh",
}

func TestCompatDist(t *testing.T) {
	redis := testenv.Redis(t)
	kafka := testenv.Kafka(t)
	archive := buildDist(t)
	entries := checkArchive(t, archive)
	top := unpack(t, archive)

	t.Run("redis seed lines", func(t *testing.T) {
		t.Parallel()
		host, port := splitAddr(t, redis.Addr)
		authHost, authPort := splitAddr(t, redis.AuthAddr)
		lines := []struct{ name, line string }{
			// Seed 000 (make install puts the binary on PATH): -h -p -a -n -r -c -d -t.
			{"on PATH", fmt.Sprintf("PATH=%q:$PATH; redis-benchmark -h %s -p %s -a %s -n 2000 -r 1000 -c 20 -d 32 -t set,get",
				filepath.Join(top, "bin"), authHost, authPort, redis.AuthPassword)},
			// Seed 000's ./redis-benchmark lines, from the source tree's src/.
			{"./ in src", fmt.Sprintf("cd %q/redis/src && ./redis-benchmark -h %s -p %s -a %s --threads 2 -n 2000 -r 1000 -c 20 -d 32 -t set,get",
				top, authHost, authPort, redis.AuthPassword)},
			// Seed 003: the full path of the built binary.
			{"full path", fmt.Sprintf("%q/redis/src/redis-benchmark -h %s -p %s -t set,get -r 1000 -n 2000 -c 50", top, host, port)},
		}
		for _, l := range lines {
			r := runShell(t, l.line, nil)
			checkRedisReport(t, l.name, r, 2000, "SET", "GET")
		}
	})

	t.Run("kafka seed lines", func(t *testing.T) {
		t.Parallel()
		b := kafka.Bootstrap
		group := fmt.Sprintf("group-1-dist-%d", time.Now().UnixNano())
		lines := []struct {
			name, line string
			consumer   bool
		}{
			// Seed 000: from the distribution's bin/.
			{name: "seed000 ./ in bin", line: fmt.Sprintf("cd %q/kafka/bin && ./kafka-producer-perf-test.sh --producer-props bootstrap.servers=%s acks=1 batch.size=1024 linger.ms=0 --topic %s --num-records 2000 --record-size 1024 --throughput 102400", top, b, kafka.Topic3x1)},
			// Seed 004: producer, then the consumer reading what it wrote.
			{name: "seed004 ./ in bin", line: fmt.Sprintf("cd %q/kafka/bin && ./kafka-producer-perf-test.sh --topic %s --num-records 2000 --throughput 20000 --record-size 1000 --producer-props bootstrap.servers=%s", top, kafka.SeedTopic, b)},
			{name: "seed004 consumer", consumer: true, line: fmt.Sprintf("cd %q/kafka/bin && ./kafka-consumer-perf-test.sh --topic %s --fetch-size 1048576 --messages 2000 --group %s --broker-list %s", top, kafka.SeedTopic, group, b)},
			// The same scripts run with sh, and as bin/... from the top of
			// the distribution, as other guides write them.
			{name: "sh script", line: fmt.Sprintf("cd %q/kafka/bin && sh kafka-producer-perf-test.sh --topic %s --num-records 500 --throughput -1 --record-size 100 --producer-props bootstrap.servers=%s", top, kafka.SeedTopic, b)},
			{name: "bin/ from the top", consumer: true, line: fmt.Sprintf("cd %q/kafka && bin/kafka-consumer-perf-test.sh --topic %s --fetch-size 1048576 --messages 500 --group %s-2 --broker-list %s", top, kafka.SeedTopic, group, b)},
		}
		for _, l := range lines {
			r := runShell(t, l.line, nil)
			if l.consumer {
				checkConsumerReport(t, l.name, r, countArg(t, l.line, "--messages"))
			} else {
				checkProducerReport(t, l.name, r, countArg(t, l.line, "--num-records"))
			}
		}
	})

	t.Run("rocketmq seed line", func(t *testing.T) {
		t.Parallel()
		rmq := testenv.RocketMQ(t)
		// Seed 001's producer line, bounded with -q. producer.sh starts the
		// producer in the background and returns, as the original does; the
		// pipe to cat is how the shell waits for the output that follows.
		line := fmt.Sprintf("cd %q/rocketmq/benchmark && sh producer.sh -n %q -t %s -s 3800 -w 256 -q 2000 | cat", top, rmq.Namesrv, rmq.Topic)
		r := runShell(t, line, nil)
		checkExit(t, "producer.sh", r, 0)
		lines := shapes.Lines(r.stdout)
		head := "topic: " + rmq.Topic + ", threadCount: 256, messageSize: 3800, "
		if len(lines) < 3 || !strings.HasPrefix(lines[0], head) || lines[1] != " compressEnable: false, reportInterval: 10000" ||
			!strings.HasPrefix(lines[len(lines)-1], "[Complete] Send Total: 2000 ") {
			t.Errorf("producer.sh: stdout %q, want the two header lines (%q...) and a [Complete] line for 2000 messages", lines, head)
		}
	})

	t.Run("perftest seed line", func(t *testing.T) {
		t.Parallel()
		rabbit := testenv.RabbitMQ(t)
		// Seed 000's PerfTest line with -z shortened, from the
		// distribution's bin/; its own exchange and queue names, so that it
		// meets none that a test declared with other arguments.
		n := time.Now().UnixNano()
		line := fmt.Sprintf("cd %q/rabbitmq-perf-test/bin && ./runjava com.rabbitmq.perf.PerfTest -h %s -e exchange-direct-dist-%d -s 1024 -u queue-1-dist-%d -x 3 -y 3 -z 3",
			top, rabbit.URI, n, n)
		r := runShell(t, line, nil)
		checkExit(t, "runjava", r, 0)
		lines := shapes.Lines(r.stdout)
		rate := regexp.MustCompile(`^id: test-\d{6}-\d{3}, (sending|receiving) rate avg: \d+ msg/s$`)
		if len(lines) < 3 || !slices.Contains(lines, "test stopped (Reached time limit)") ||
			!rate.MatchString(lines[len(lines)-2]) || !rate.MatchString(lines[len(lines)-1]) {
			t.Errorf("runjava: stdout %q, want test stopped (Reached time limit) and the two rate avg lines", lines)
		}
	})

	t.Run("multi-call binary", func(t *testing.T) {
		t.Parallel()
		host, port := splitAddr(t, redis.Addr)
		dir := t.TempDir()
		binary := filepath.Join(top, "perfclones")

		// Linked under a tool's name from elsewhere, as ln -s into
		// /usr/local/bin does.
		link := filepath.Join(dir, "links", "redis-benchmark")
		mustMkdir(t, filepath.Dir(link))
		if err := os.Symlink(binary, link); err != nil {
			t.Fatal(err)
		}
		r := runCommand(t, []string{link, "-h", host, "-p", port, "-n", "1000", "-t", "set,get", "-q"}, time.Minute, false, "", nil)
		checkExit(t, "symlink", r, 0)
		quiet := regexp.MustCompile(`^(SET|GET): \S+ requests per second, p50=\S+ msec$`)
		// -q ends with an empty line, as the C tool's does.
		got := slices.DeleteFunc(shapes.Lines(withoutProgress(r.stdout)), func(l string) bool { return l == "" })
		if len(got) != 2 || !quiet.MatchString(got[0]) || !quiet.MatchString(got[1]) {
			t.Errorf("symlink: stdout %q, want a SET and a GET line of -q", got)
		}

		// Copied under a tool's name (one file to copy).
		cp := filepath.Join(dir, "copy", "kafka-producer-perf-test")
		copyFile(t, binary, cp)
		r = runCommand(t, []string{cp, "--topic", kafka.SeedTopic, "--num-records", "500", "--throughput", "-1",
			"--record-size", "100", "--producer-props", "bootstrap.servers=" + kafka.Bootstrap}, 2*time.Minute, false, "", nil)
		checkProducerReport(t, "copied binary", r, 500)

		// perfclones itself: the tool list, and a run that writes a result
		// file.
		r = runCommand(t, []string{binary}, time.Minute, false, "", nil)
		checkExit(t, "perfclones", r, 0)
		for _, name := range []string{"redis-benchmark", "kafka-producer-perf-test", "kafka-consumer-perf-test", "kafka-producer-perf-test.sh"} {
			if !strings.Contains(r.stdout, " "+name) {
				t.Errorf("perfclones lists no %s:\n%s", name, r.stdout)
			}
		}
		resultFile := filepath.Join(dir, "result.json")
		r = runCommand(t, []string{binary, "run", "--result", resultFile, "--", "kafka-producer-perf-test", "--topic", kafka.SeedTopic,
			"--num-records", "300", "--throughput", "-1", "--record-size", "100", "--bootstrap-server", kafka.Bootstrap}, 2*time.Minute, false, "", nil)
		checkProducerReport(t, "perfclones run --result", r, 300)
		checkResultFile(t, "perfclones run --result", resultFile, "kafka-producer-perf-test", 300)
		redisFile := filepath.Join(dir, "redis-result.json")
		r = runCommand(t, []string{binary, "run", "--result=" + redisFile, "redis-benchmark", "-h", host, "-p", port, "-n", "1000", "-t", "set", "-q"}, time.Minute, false, "", nil)
		checkExit(t, "perfclones run --result= redis-benchmark", r, 0)
		checkResultFile(t, "perfclones run --result= redis-benchmark", redisFile, "redis-benchmark", 1000)
		// The variable reaches the tool through the distribution's script.
		envFile := filepath.Join(dir, "env-result.json")
		r = runShell(t, fmt.Sprintf("cd %q/kafka/bin && ./kafka-producer-perf-test.sh --topic %s --num-records 200 --throughput -1 --record-size 100 --producer-props bootstrap.servers=%s",
			top, kafka.SeedTopic, kafka.Bootstrap), []string{"PERFCLONES_RESULT=" + envFile})
		checkProducerReport(t, "PERFCLONES_RESULT", r, 200)
		checkResultFile(t, "PERFCLONES_RESULT", envFile, "kafka-producer-perf-test", 200)

		// Ctrl+C ends each tool as it ends the original, whichever name
		// started it: the C redis-benchmark dies by the signal, the JVM
		// exits with 130 (through the script, which execs the binary).
		for _, argv := range [][]string{
			{binary, "redis-benchmark", "-h", host, "-p", port, "-I", "-c", "2"},
			{filepath.Join(top, "redis/src/redis-benchmark"), "-h", host, "-p", port, "-I", "-c", "2"},
		} {
			r = runCommand(t, argv, 2*time.Second, true, "", nil)
			if !r.timedOut || r.rc != -1 {
				t.Errorf("%s -I after SIGINT: exit %d (stopped: %v), want death by the signal\nstderr:\n%s", strings.Join(argv[:2], " "), r.rc, r.timedOut, r.stderr)
			}
		}
		r = runCommand(t, []string{filepath.Join(top, "kafka/bin/kafka-producer-perf-test.sh"), "--topic", kafka.SeedTopic, "--num-records", "100000000",
			"--throughput", "500", "--record-size", "100", "--producer-props", "bootstrap.servers=" + kafka.Bootstrap}, 3*time.Second, true, "", nil)
		if !r.timedOut || r.rc != 130 {
			t.Errorf("kafka-producer-perf-test.sh after SIGINT: exit %d (stopped: %v), want 130\nstderr:\n%s", r.rc, r.timedOut, r.stderr)
		}

		// install writes the archive's layout around a copy of itself.
		inst := filepath.Join(dir, "installed")
		r = runCommand(t, []string{binary, "install", inst}, time.Minute, false, "", nil)
		checkExit(t, "perfclones install", r, 0)
		if got := treeNames(t, inst); !slices.Equal(got, entries) {
			t.Errorf("perfclones install wrote\n%s\nthe archive holds\n%s", strings.Join(got, "\n"), strings.Join(entries, "\n"))
		}
	})
}

// buildDist runs scripts/build for this machine's architecture into a
// temporary dist directory and returns the archive's path.
func buildDist(t *testing.T) string {
	t.Helper()
	dist := t.TempDir()
	cmd := exec.Command("scripts/build", "--dist")
	cmd.Env = append(os.Environ(), "DIST="+dist, "PLATFORMS=linux/"+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/build --dist: %v\n%s", err, out)
	}
	archives, _ := filepath.Glob(filepath.Join(dist, "perfclones-*-linux-"+runtime.GOARCH+".tar.gz"))
	if len(archives) != 1 {
		t.Fatalf("scripts/build made %q, want one perfclones-<version>-linux-%s.tar.gz", archives, runtime.GOARCH)
	}
	return archives[0]
}

// checkArchive reads the archive as tar does and checks what a user
// relies on: one top directory named as the archive, perfclones in it as a
// static executable for this architecture, every expected name, and links
// that are relative and point at perfclones inside the tree. It returns
// the archive's entries below the top directory, sorted.
func checkArchive(t *testing.T, archive string) []string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	topName := strings.TrimSuffix(filepath.Base(archive), ".tar.gz")
	tr := tar.NewReader(gz)
	var names []string
	var binary []byte
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(h.Name, "/")
		rel, ok := strings.CutPrefix(name, topName+"/")
		if name == topName {
			continue
		}
		if !ok {
			t.Errorf("%s: outside the top directory %s/", h.Name, topName)
			continue
		}
		if h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: owner %d:%d, want 0:0", rel, h.Uid, h.Gid)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeSymlink:
			if path.IsAbs(h.Linkname) || path.Join(path.Dir(rel), h.Linkname) != "perfclones" {
				t.Errorf("%s -> %s: want a relative link to the top's perfclones", rel, h.Linkname)
			}
		case tar.TypeReg:
			content, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			// The binary and every script must run; shipped files (a web
			// page's assets) need not.
			if (rel == "perfclones" || strings.HasPrefix(string(content), "#!")) && h.Mode&0o111 == 0 {
				t.Errorf("%s: mode %o is not executable", rel, h.Mode)
			}
			if rel == "perfclones" {
				binary = content
			}
		default:
			t.Errorf("%s: tar type %q", rel, h.Typeflag)
		}
		names = append(names, rel)
	}
	slices.Sort(names)
	for _, want := range append([]string{"perfclones"}, distNames...) {
		if !slices.Contains(names, want) {
			t.Errorf("the archive lacks %s; it holds %q", want, names)
		}
	}
	checkStaticELF(t, binary)
	return names
}

// checkStaticELF checks that b is an executable for this architecture that
// needs no dynamic loader.
func checkStaticELF(t *testing.T, b []byte) {
	t.Helper()
	e, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("perfclones in the archive: %v", err)
	}
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[runtime.GOARCH]
	if e.Machine != machine || e.Type != elf.ET_EXEC {
		t.Errorf("perfclones in the archive: %s %s, want %s ET_EXEC", e.Machine, e.Type, machine)
	}
	for _, p := range e.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("perfclones in the archive is dynamically linked (%s)", p.Type)
		}
	}
}

// unpack runs tar xzf in a new temporary directory, as a user does, and
// returns the unpacked top directory.
func unpack(t *testing.T, archive string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("tar", "xzf", archive)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tar xzf: %v\n%s", err, out)
	}
	return filepath.Join(dir, strings.TrimSuffix(filepath.Base(archive), ".tar.gz"))
}

// treeNames lists a directory as checkArchive lists the archive.
func treeNames(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// runShell runs line with sh -c, as a user's shell would run the docs'
// line.
func runShell(t *testing.T, line string, env []string) toolRun {
	t.Helper()
	return runCommand(t, []string{"sh", "-c", line}, 3*time.Minute, false, "", env)
}

func checkExit(t *testing.T, name string, r toolRun, want int) {
	t.Helper()
	if r.rc != want || r.timedOut {
		t.Errorf("%s: exit %d (timed out: %v), want %d\nstdout:\n%s\nstderr:\n%s", name, r.rc, r.timedOut, want, r.stdout, r.stderr)
	}
	for _, l := range shapes.Lines(r.stderr) {
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "goroutine ") {
			t.Errorf("%s: Go panic on stderr:\n%s", name, r.stderr)
			break
		}
	}
}

// withoutProgress drops redis-benchmark's progress updates: text that a
// carriage return ends, which a terminal overwrites.
func withoutProgress(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if i := strings.LastIndexByte(line, '\r'); i >= 0 {
			line = line[i+1:]
		}
		b.WriteString(line)
	}
	return b.String()
}

// redisTestBlock is the start of one test's report in redis-benchmark's
// default output, masked (the test's name filled in).
var redisTestBlock = []string{
	"====== %s ======",
	"  <N> requests completed in <N> seconds",
	"  <N> parallel clients",
	"  <N> bytes payload",
	"  keep alive: <N>",
}

var redisSummary = []string{
	"Summary:",
	"  throughput summary: <N> requests per second",
	"  latency summary (msec):",
	"          avg       min       p50       p95       p99       max",
}

// checkRedisReport checks exit 0, an empty stderr, and for every test the
// lines that open its report and its summary, with requests as -n said.
func checkRedisReport(t *testing.T, name string, r toolRun, requests int, tests ...string) {
	t.Helper()
	checkExit(t, name, r, 0)
	if r.stderr != "" {
		t.Errorf("%s: stderr %q", name, r.stderr)
	}
	lines := shapes.Lines(withoutProgress(r.stdout))
	masked := shapes.Masker{}.MaskLines(lines)
	for _, test := range tests {
		head := fmt.Sprintf(redisTestBlock[0], test)
		i := slices.Index(masked, head)
		if i < 0 || i+len(redisTestBlock) > len(masked) || !slices.Equal(masked[i+1:i+len(redisTestBlock)], redisTestBlock[1:]) {
			t.Errorf("%s: no report of %s opening with %q:\n%s", name, test, redisTestBlock, r.stdout)
			continue
		}
		if want := fmt.Sprintf("  %d requests completed in ", requests); !strings.HasPrefix(lines[i+1], want) {
			t.Errorf("%s: %s: %q, want %q...", name, test, lines[i+1], want)
		}
		j := slices.Index(masked[i:], redisSummary[0])
		if j < 0 || i+j+len(redisSummary) > len(masked) || !slices.Equal(masked[i+j:i+j+len(redisSummary)], redisSummary) {
			t.Errorf("%s: %s has no summary %q", name, test, redisSummary)
		}
	}
}

var (
	producerWindowRe = regexp.MustCompile(`^\d+ records sent, \d+\.\d+ records/sec \(\d+\.\d\d MB/sec\), \d+\.\d+ ms avg latency, \d+\.\d+ ms max latency\.$`)
	producerFinalRe  = regexp.MustCompile(`^(\d+) records sent, \d+\.\d+ records/sec \(\d+\.\d\d MB/sec\), \d+\.\d\d ms avg latency, \d+\.\d\d ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$`)
	consumerHeader   = "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
	consumerRowRe    = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, \d+\.\d{4}, \d+\.\d{4}, (\d+), \d+\.\d{4}, -?\d+, \d+, \d+\.\d{4}, \d+\.\d{4}$`)
)

// checkProducerReport checks exit 0 and that stdout is only the
// producer's report lines, as Kafka 3.9 prints them for the seed lines:
// window lines, then the final line counting every record.
func checkProducerReport(t *testing.T, name string, r toolRun, records int) {
	t.Helper()
	checkExit(t, name, r, 0)
	lines := shapes.Lines(r.stdout)
	if len(lines) == 0 {
		t.Errorf("%s: no output", name)
		return
	}
	for _, l := range lines[:len(lines)-1] {
		if !producerWindowRe.MatchString(l) {
			t.Errorf("%s: stdout line %q is not a window line", name, l)
		}
	}
	m := producerFinalRe.FindStringSubmatch(lines[len(lines)-1])
	if m == nil || m[1] != fmt.Sprint(records) {
		t.Errorf("%s: last line %q, want the final line for %d records", name, lines[len(lines)-1], records)
	}
}

// checkConsumerReport checks exit 0 and that stdout is the consumer's
// header and one row counting at least the records asked for.
func checkConsumerReport(t *testing.T, name string, r toolRun, records int) {
	t.Helper()
	checkExit(t, name, r, 0)
	lines := shapes.Lines(r.stdout)
	if len(lines) != 2 || lines[0] != consumerHeader {
		t.Errorf("%s: stdout %q, want the header and one row", name, lines)
		return
	}
	// As in Java, the last poll's records are all counted, so a run may
	// read more than it was asked for, never fewer.
	m := consumerRowRe.FindStringSubmatch(lines[1])
	var read int
	if m != nil {
		fmt.Sscan(m[1], &read)
	}
	if m == nil || read < records {
		t.Errorf("%s: row %q, want one for at least %d records", name, lines[1], records)
	}
}

// checkResultFile checks that the run wrote a valid result file for tool
// holding the operations the run made.
func checkResultFile(t *testing.T, name, file, tool string, operations int64) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	run, err := resulttest.Validate(b)
	if err != nil {
		t.Errorf("%s: %s: %v", name, file, err)
		return
	}
	if run.Tool != tool || len(run.Tests) == 0 || run.Tests[0].Counts.Operations != operations {
		t.Errorf("%s: result file for %s with %d tests, want %s with %d operations", name, run.Tool, len(run.Tests), tool, operations)
	}
}

// countArg returns the number after option in a command line.
func countArg(t *testing.T, line, option string) int {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(option) + ` (\d+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no %s N in %q", option, line)
	}
	var n int
	fmt.Sscan(m[1], &n)
	return n
}

func splitAddr(t *testing.T, addr string) (host, port string) {
	t.Helper()
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		t.Fatalf("address %q has no port", addr)
	}
	return addr[:i], addr[i+1:]
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, filepath.Dir(dst))
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
