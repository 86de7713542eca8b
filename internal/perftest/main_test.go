package perftest

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perfclones/perfclones/internal/cli"
)

// runMain runs Main in-process as release rel.
func runMain(t *testing.T, rel string, args []string, env map[string]string) (code int, stdout, stderr string) {
	t.Helper()
	vars := map[string]string{"PERFCLONES_PERFTEST_VERSION": rel}
	for k, v := range env {
		vars[k] = v
	}
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: cli.Env(vars)})
	return code, out.String(), errb.String()
}

var logTimeRe = regexp.MustCompile(`(?m)^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} `)

// oracleCase is one command line as PerfTest 2.18.0 (built from its tag)
// or 2.22.1 (the jar) ran it: testdata/errors-oracle.txt, stack frames
// left out and log times masked.
type oracleCase struct {
	release        string
	args           []string
	code           string
	stdout, stderr string
}

func readErrorsOracle(t *testing.T) []oracleCase {
	t.Helper()
	data, err := os.ReadFile("testdata/errors-oracle.txt")
	if err != nil {
		t.Fatal(err)
	}
	var cases []oracleCase
	for _, chunk := range strings.Split(string(data), "--- end\n") {
		if chunk == "" {
			continue
		}
		header, rest, _ := strings.Cut(chunk, "\n")
		rel, line, _ := strings.Cut(strings.TrimPrefix(header, "=== "), "\t")
		code, rest, _ := strings.Cut(strings.TrimPrefix(rest, "--- code "), "\n")
		stdout, stderr, _ := strings.Cut(strings.TrimPrefix(rest, "--- stdout\n"), "--- stderr\n")
		cases = append(cases, oracleCase{release: rel[:4], args: strings.Split(line, "\t"), code: code, stdout: stdout, stderr: stderr})
	}
	return cases
}

func TestErrorsAndHelpMatchTheOriginals(t *testing.T) {
	cases := readErrorsOracle(t)
	if len(cases) < 60 {
		t.Fatalf("only %d cases in the oracle", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.release+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runMain(t, tc.release, tc.args, nil)
			stdout = logTimeRe.ReplaceAllString(stdout, "HH:MM:SS.mmm ")
			if got := strconv.Itoa(code); got != tc.code {
				t.Errorf("exit code %s, want %s", got, tc.code)
			}
			want := tc.stdout
			if len(tc.args) == 1 && tc.args[0] == "-v" {
				// Java's own lines (version, home, locale, OS) are not ours.
				// The 2.18.0 oracle is a local build, without the release's
				// commit and build time.
				want = buildRe.ReplaceAllString(strings.SplitAfterN(want, "\n", 2)[0], "(BUILD)")
				stdout = buildRe.ReplaceAllString(strings.SplitAfterN(stdout, "\n", 2)[0], "(BUILD)")
			}
			if stdout != want {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
			}
			if stderr != tc.stderr {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, tc.stderr)
			}
		})
	}
}

var buildRe = regexp.MustCompile(`\([0-9a-f]+; [0-9T:Z-]+\)`)

func TestHelpTextsMatchTheOriginals(t *testing.T) {
	for _, tc := range []struct {
		rel, file string
		args      []string
		stream    string
	}{
		{"2.18", "help-2.18.0.txt", []string{"--help"}, "stdout"},
		{"2.22", "help-2.22.1.txt", []string{"-?"}, "stdout"},
		{"2.18", "usage-all-2.18.0.txt", []string{"--bogus"}, "stdout"},
		{"2.22", "usage-all-2.22.1.txt", []string{"--bogus"}, "stdout"},
		{"2.18", "metrics-help-2.18.0.txt", []string{"-mh"}, "stdout"},
		{"2.22", "metrics-help-2.22.1.txt", []string{"-mh"}, "stdout"},
		{"2.18", "env-help-2.18.0.txt", []string{"-env"}, "stdout"},
		{"2.22", "env-help-2.22.1.txt", []string{"-env"}, "stdout"},
	} {
		want, err := os.ReadFile("testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, _ := runMain(t, tc.rel, tc.args, nil)
		if code != 0 || stdout != string(want) {
			t.Errorf("%s %v: code %d, stdout differs from %s:\n%s", tc.rel, tc.args, code, tc.file, firstDiff(stdout, string(want)))
		}
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ": got  " + x + "\n        want " + y
		}
	}
	return ""
}

func TestEnvironmentVariablesOverrideTheCommandLine(t *testing.T) {
	// PRODUCERS=abc wins over -x 2 and fails as the number it is.
	code, _, stderr := runMain(t, "2.18", []string{"-x", "2", "-h", "amqp://127.0.0.1:1"}, map[string]string{"PRODUCERS": "abc"})
	if code != 1 || stderr != "Main thread caught exception: java.lang.NumberFormatException: For input string: \"abc\"\n" {
		t.Errorf("PRODUCERS=abc: code %d, stderr %q", code, stderr)
	}
	code, _, stderr = runMain(t, "2.22", []string{"-h", "amqp://127.0.0.1:1"},
		map[string]string{"RABBITMQ_PERF_TEST_ENV_PREFIX": "PT", "PT_QUEUE_PATTERN": "q-%d"})
	if code != 1 || stderr != "Queue pattern, from, and to options should all be set or none should be set\n" {
		t.Errorf("PT_QUEUE_PATTERN: code %d, stderr %q", code, stderr)
	}
}

func TestUnknownReleaseIsRefused(t *testing.T) {
	code, stdout, stderr := runMain(t, "1.0", []string{"-x", "1"}, nil)
	if code != 2 || stdout != "" || !strings.Contains(stderr, "PERFCLONES_PERFTEST_VERSION=1.0") {
		t.Errorf("code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestOtherReleasesOptionsAreAccepted(t *testing.T) {
	// -l is 2.18's; as 2.22 it is accepted, named on stderr, and the run
	// goes on (here to the unreachable broker).
	code, _, stderr := runMain(t, "2.22", []string{"-l", "-h", "amqp://127.0.0.1:1"}, nil)
	if code != 1 || !strings.Contains(stderr, "does not act on -l") || !strings.Contains(stderr, "java.net.ConnectException") {
		t.Errorf("2.22 -l: code %d, stderr %q", code, stderr)
	}
	// --stream-queue is 2.20+'s; as 2.18 it is accepted the same way.
	code, _, stderr = runMain(t, "2.18", []string{"--stream-queue", "-h", "amqp://127.0.0.1:1"}, nil)
	if code != 1 || !strings.Contains(stderr, "does not act on -sq") {
		t.Errorf("2.18 --stream-queue: code %d, stderr %q", code, stderr)
	}
	// --verbose is 2.20+'s too, but a 2.18 run acts on it, as 2.20 does.
	code, _, stderr = runMain(t, "2.18", []string{"--verbose", "-h", "amqp://127.0.0.1:1"}, nil)
	if code != 1 || strings.Contains(stderr, "does not act on") {
		t.Errorf("2.18 --verbose: code %d, stderr %q", code, stderr)
	}
	// A name no release has is the release's parse error.
	code, _, stderr = runMain(t, "2.18", []string{"--nonesuch"}, nil)
	if code != 0 || stderr != "Parsing failed. Reason: Unrecognized option: --nonesuch\n" {
		t.Errorf("--nonesuch: code %d, stderr %q", code, stderr)
	}
}

func TestNIOSettings(t *testing.T) {
	for _, tc := range []struct {
		threads, pool int
		want          string
	}{
		{-1, -1, ""}, {2, -1, ""}, {2, 1, ""}, {-1, 3, ""}, {0, 0, ""},
		{0, 1, "java.lang.IllegalArgumentException: NIO number of threads and executor must be greater than 0: -1, 1"},
		{-1, 2, "java.lang.IllegalArgumentException: NIO number of threads and executor must be greater than 0: 0, 2"},
	} {
		got := ""
		if e := nioSettings(tc.threads, tc.pool); e != nil {
			got = e.String()
		}
		if got != tc.want {
			t.Errorf("-niot %d -niotp %d: %q, want %q", tc.threads, tc.pool, got, tc.want)
		}
	}
}
