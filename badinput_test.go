package perfclones_test

// The bad-input suite: per tool, a table of odd and hostile command lines
// (unknown options, missing values, negative, zero and huge numbers,
// non-UTF-8, empty strings, repeats, prefixes ...) with what the original
// did with each: its exit code and the first line it printed on stdout and
// on stderr (numbers masked). A test runs every line through our tool's
// Main, in-process, and compares. Where ours differs on purpose (the
// original hangs, crashes or spins), the line carries our expected outcome
// and the reason, and the README lists the difference.
//
// The recorded side comes from the originals: PERFCLONES_RECORD_BADINPUT=1
// (scripts/record-badinput) reruns them and rewrites the tables in
// testdata/badinput/, keeping each line's deliberate difference.
//
// A table line is tab-separated Go-quoted strings, so any byte can be
// stored: args (space-separated quoted words), the original's exit code
// ("hang" when it did not end within the recording's bound), its first
// stdout line, its first stderr line, then optionally ours (code, stdout,
// stderr) and the reason they differ.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/shapes"
)

// badOutcome is how one run of a command line ended.
type badOutcome struct {
	code   string // exit code, or "hang"
	stdout string // first line, numbers masked
	stderr string
}

func (o badOutcome) String() string {
	return fmt.Sprintf("exit %s, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
}

// matches compares an outcome with this expected one, in which a field
// of "*" matches anything (a line whose first stdout line races with an
// error, as the progress line of the C tool does).
func (o badOutcome) matches(got badOutcome) bool {
	eq := func(want, got string) bool { return want == "*" || want == got }
	return eq(o.code, got.code) && eq(o.stdout, got.stdout) && eq(o.stderr, got.stderr)
}

// badLine is one line of a table.
type badLine struct {
	args     []string
	original badOutcome
	ours     *badOutcome // set where ours differs on purpose
	reason   string
}

func (l badLine) key() string { return quoteWords(l.args) }

func quoteWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(w)
	}
	return strings.Join(q, " ")
}

func unquoteWords(s string) ([]string, error) {
	var words []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		w, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, fmt.Errorf("at %q: %w", s, err)
		}
		u, _ := strconv.Unquote(w)
		words = append(words, u)
		s = s[len(w):]
	}
	return words, nil
}

func badTablePath(tool string) string { return filepath.Join("testdata", "badinput", tool+".tsv") }

func readBadTable(t *testing.T, tool string) []badLine {
	t.Helper()
	f, err := os.Open(badTablePath(tool))
	if err != nil {
		t.Fatalf("%v (record it with scripts/record-badinput %s)", err, tool)
	}
	defer f.Close()
	var lines []badLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, "\t")
		if len(fields) != 4 && len(fields) != 8 {
			t.Fatalf("%s:%d: %d fields, want 4 or 8", badTablePath(tool), n, len(fields))
		}
		vals := make([]string, len(fields))
		for i, f := range fields[1:] {
			v, err := strconv.Unquote(f)
			if err != nil {
				t.Fatalf("%s:%d: field %d: %v", badTablePath(tool), n, i+2, err)
			}
			vals[i+1] = v
		}
		args, err := unquoteWords(fields[0])
		if err != nil {
			t.Fatalf("%s:%d: args: %v", badTablePath(tool), n, err)
		}
		l := badLine{args: args, original: badOutcome{code: vals[1], stdout: vals[2], stderr: vals[3]}}
		if len(fields) == 8 {
			l.ours = &badOutcome{code: vals[4], stdout: vals[5], stderr: vals[6]}
			l.reason = vals[7]
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func writeBadTable(t *testing.T, tool, header string, lines []badLine) {
	t.Helper()
	var b bytes.Buffer
	for _, h := range strings.Split(strings.TrimSpace(header), "\n") {
		b.WriteString("# " + h + "\n")
	}
	b.WriteString("# args\toriginal exit\toriginal stdout\toriginal stderr[\tours exit\tours stdout\tours stderr\twhy they differ]\n")
	for _, l := range lines {
		q := strconv.Quote
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s", l.key(), q(l.original.code), q(l.original.stdout), q(l.original.stderr))
		if l.ours != nil {
			fmt.Fprintf(&b, "\t%s\t%s\t%s\t%s", q(l.ours.code), q(l.ours.stdout), q(l.ours.stderr), q(l.reason))
		}
		b.WriteString("\n")
	}
	path := badTablePath(tool)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// firstLine is the first line of text as a parser reading it sees it: a
// line rewritten with '\r' (progress) counts as its last rewrite; numbers
// are masked.
func firstLine(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	if i := strings.LastIndexByte(strings.TrimRight(line, "\r"), '\r'); i >= 0 {
		line = line[i+1:]
	}
	return shapes.Mask(strings.TrimRight(line, "\r"))
}

// badInputBound is how long one of our runs may take; a run still going
// then is a hang, which a bad-input line must never cause in ours.
const badInputBound = 20 * time.Second

// runOursBad runs main in-process on args and returns its outcome.
func runOursBad(main cli.MainFunc, args []string, env map[string]string) badOutcome {
	code, stdout, stderr := runOursBadText(main, args, env)
	return badOutcome{code: code, stdout: firstLine(stdout), stderr: firstLine(stderr)}
}

// runOursBadText runs main in-process on args and returns its exit code
// ("hang" past badInputBound) and what it printed, for a suite that picks
// its lines itself.
func runOursBadText(main cli.MainFunc, args []string, env map[string]string) (code, stdout, stderr string) {
	ctx, cancel := context.WithTimeout(context.Background(), badInputBound)
	defer cancel()
	var out, errOut lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- main(ctx, args, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: cli.Env(env)})
	}()
	code = "hang"
	select {
	case c := <-done:
		// A run that ended only because its bound passed was a hang too.
		if ctx.Err() == nil {
			code = strconv.Itoa(c)
		}
	case <-time.After(badInputBound + 5*time.Second):
	}
	return code, out.String(), errOut.String()
}

// badSuite is one tool's table and how to run both sides.
type badSuite struct {
	tool   string
	header string // what the recorded side ran, for the table's comment
	cases  func(t *testing.T) [][]string
	ours   func(t *testing.T, args []string) badOutcome
	// original runs the original on args; nil where it cannot run here.
	original func(t *testing.T, args []string) badOutcome
}

// run compares every line with ours, or records the table when asked.
func (s badSuite) run(t *testing.T) {
	if os.Getenv("PERFCLONES_RECORD_BADINPUT") != "" {
		s.record(t)
		return
	}
	lines := readBadTable(t, s.tool)
	if len(lines) < 150 {
		t.Errorf("%s: %d lines, want at least 150", badTablePath(s.tool), len(lines))
	}
	for _, l := range lines {
		want, why := l.original, "the original"
		if l.ours != nil {
			want, why = *l.ours, "ours on purpose ("+l.reason+")"
		}
		got := s.ours(t, l.args)
		if !want.matches(got) {
			t.Errorf("%s %s:\n  ours: %s\n  want: %s, as %s", s.tool, l.key(), got, want, why)
		}
	}
}

// record reruns the original on every case and rewrites the table; a
// line's deliberate difference is kept when ours still gives it.
func (s badSuite) record(t *testing.T) {
	if s.original == nil {
		t.Skipf("%s: the original does not run here; edit %s by hand", s.tool, badTablePath(s.tool))
	}
	old := map[string]badLine{}
	if _, err := os.Stat(badTablePath(s.tool)); err == nil {
		for _, l := range readBadTable(t, s.tool) {
			old[l.key()] = l
		}
	}
	cases := s.cases(t)
	lines := make([]badLine, len(cases))
	for i, args := range cases {
		l := badLine{args: args, original: s.original(t, args)}
		ours := s.ours(t, args)
		if prev, ok := old[l.key()]; ok && prev.ours != nil && prev.ours.matches(ours) && !l.original.matches(ours) {
			l.ours, l.reason = prev.ours, prev.reason
		} else if !l.original.matches(ours) {
			// A new difference: record ours with a reason to be written in
			// by hand (the test fails until the reason is filled in).
			l.ours, l.reason = &ours, "UNEXPLAINED"
		}
		lines[i] = l
	}
	writeBadTable(t, s.tool, s.header, lines)
	for _, l := range lines {
		if l.reason == "UNEXPLAINED" {
			t.Errorf("%s %s: ours %s, original %s: explain or fix", s.tool, l.key(), l.ours, l.original)
		}
	}
}

// lockedBuffer is a bytes.Buffer that a tool's goroutines may write while
// the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// itoaRC is a recorded exit code: the status, or "signal" when a signal
// ended the original.
func itoaRC(r toolRun) string {
	if r.rc < 0 {
		return "signal"
	}
	return strconv.Itoa(r.rc)
}
