package multicall

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/result"
)

// echoTool is a tool whose Main prints its name, its arguments and the
// result file it would write, one line.
func echoTool(name string, aliases ...string) cli.Tool {
	return cli.Tool{
		Name:    name,
		Aliases: aliases,
		About:   "the " + name + " tool",
		Main: func(_ context.Context, args []string, sys cli.IO) int {
			_, _ = sys.Stdout.Write([]byte(name + " " + strings.Join(args, " ") + " result=" + sys.Getenv(result.Env) + "\n"))
			return 3
		},
	}
}

func testSet() Set {
	a := echoTool("alpha", "alpha.sh")
	a.DiesBySignal = true
	a.Layout = []cli.Entry{{Path: "vendor/src/alpha"}, {Path: "vendor/bin/alpha.sh", Script: true}}
	b := echoTool("beta")
	b.Layout = []cli.Entry{
		{Path: "beta-dist/bin/runbeta", Script: true, Args: []string{"mode one", "it's"}, Background: true},
		{Path: "beta-dist/html", Files: fstest.MapFS{
			"page.html":   {Data: []byte("<p>page</p>\n")},
			"lib/app.js":  {Data: []byte("render()\n")},
			"test1/a.txt": {Data: []byte("a\n")},
		}},
	}
	return Set{a, b}
}

func run(t *testing.T, s Set, argv ...string) (stdout, stderr string, code int, tool cli.Tool) {
	t.Helper()
	tool, args := s.Command(argv)
	var out, errb bytes.Buffer
	code = tool.Main(context.Background(), args, cli.IO{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: cli.Env(map[string]string{result.Env: "from-env.json"}),
	})
	return out.String(), errb.String(), code, tool
}

func TestCommand(t *testing.T) {
	s := testSet()
	tests := []struct {
		name      string
		argv      []string
		tool      string // the tool Process gets
		stdout    string // exact, or a prefix when it ends with "..."
		stderr    string // substring
		code      int
		diesBySig bool
	}{
		{name: "link name", argv: []string{"/x/y/alpha", "-q", "1"}, tool: "alpha", stdout: "alpha -q 1 result=from-env.json\n", code: 3, diesBySig: true},
		{name: "alias", argv: []string{"./alpha.sh", "--help"}, tool: "alpha", stdout: "alpha --help result=from-env.json\n", code: 3, diesBySig: true},
		{name: "named after perfclones", argv: []string{"perfclones", "beta", "a", "b"}, tool: "beta", stdout: "beta a b result=from-env.json\n", code: 3},
		{name: "tool keeps its signal settings after perfclones", argv: []string{"./perfclones", "alpha"}, tool: "alpha", stdout: "alpha  result=from-env.json\n", code: 3, diesBySig: true},
		{name: "run --result", argv: []string{"perfclones", "run", "--result", "r.json", "--", "alpha", "--result", "x"}, tool: "alpha", stdout: "alpha --result x result=r.json\n", code: 3, diesBySig: true},
		{name: "run --result=", argv: []string{"perfclones", "run", "--result=r.json", "beta"}, tool: "beta", stdout: "beta  result=r.json\n", code: 3},
		{name: "run without --result", argv: []string{"perfclones", "run", "--", "beta", "z"}, tool: "beta", stdout: "beta z result=from-env.json\n", code: 3},
		{name: "copy under another name lists", argv: []string{"/tmp/whatever"}, tool: Name, stdout: "Usage: perfclones TOOL [ARGS...]\n...", code: 0},
		{name: "no arguments lists", argv: []string{"perfclones"}, tool: Name, stdout: "Usage: perfclones TOOL [ARGS...]\n...", code: 0},
		{name: "help", argv: []string{"perfclones", "--help"}, tool: Name, stdout: "Usage: perfclones TOOL [ARGS...]\n...", code: 0},
		{name: "version", argv: []string{"perfclones", "version"}, tool: Name, stdout: "perfclones dev\n", code: 0},
		{name: "unknown tool", argv: []string{"perfclones", "gamma"}, tool: Name, stderr: `perfclones: unknown tool "gamma"`, code: 2},
		{name: "run unknown tool", argv: []string{"perfclones", "run", "--result", "f", "--", "gamma"}, tool: Name, stderr: `perfclones: unknown tool "gamma"`, code: 2},
		{name: "run bad flag", argv: []string{"perfclones", "run", "--bogus", "alpha"}, tool: Name, stderr: "unknown flag: --bogus", code: 2},
		{name: "run no tool", argv: []string{"perfclones", "run", "--result", "f"}, tool: Name, stderr: "Usage: perfclones run --result FILE -- TOOL [ARGS...]", code: 2},
		{name: "run --help", argv: []string{"perfclones", "run", "--help"}, tool: Name, stderr: "--result FILE", code: 0},
		{name: "install without DIR", argv: []string{"perfclones", "install"}, tool: Name, stderr: "Usage: perfclones install [--binary FILE] DIR", code: 2},
		{name: "install bad flag", argv: []string{"perfclones", "install", "--bin", "x", "d"}, tool: Name, stderr: "perfclones install: unknown flag: --bin", code: 2},
		{name: "install missing binary", argv: []string{"perfclones", "install", "--binary", "/nonexistent/perfclones", "testdata-never-created"}, tool: Name, stderr: "perfclones install: ", code: 1},
		{name: "install --help", argv: []string{"perfclones", "install", "--help"}, tool: Name, stdout: "Usage: perfclones install [--binary FILE] DIR\n...", code: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code, tool := run(t, s, tc.argv...)
			if tool.Name != tc.tool || tool.DiesBySignal != tc.diesBySig {
				t.Errorf("Command chose %q (DiesBySignal %v), want %q (%v)", tool.Name, tool.DiesBySignal, tc.tool, tc.diesBySig)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if prefix, ok := strings.CutSuffix(tc.stdout, "..."); ok {
				if !strings.HasPrefix(stdout, prefix) {
					t.Errorf("stdout %q, want it to start with %q", stdout, prefix)
				}
			} else if stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", stdout, tc.stdout)
			}
			if !strings.Contains(stderr, tc.stderr) || (tc.stderr == "" && stderr != "") {
				t.Errorf("stderr %q, want %q", stderr, tc.stderr)
			}
		})
	}
}

func TestListNamesEveryToolAndAlias(t *testing.T) {
	stdout, _, _, _ := run(t, testSet(), "perfclones")
	for _, want := range []string{"  alpha  the alpha tool\n", "         also: alpha.sh\n", "  beta   the beta tool\n", result.Env + "=FILE"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("list lacks %q:\n%s", want, stdout)
		}
	}
}

func TestLayout(t *testing.T) {
	plan, err := testSet().Layout()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		path   string
		kind   Kind
		target string
	}{
		{"bin/alpha", Link, "../perfclones"},
		{"bin/beta", Link, "../perfclones"},
		{"vendor/src/alpha", Link, "../../perfclones"},
		{"vendor/bin/alpha.sh", Script, ""},
		{"beta-dist/bin/runbeta", Script, ""},
		{"beta-dist/html", Files, ""},
	}
	if len(plan) != len(want) {
		t.Fatalf("layout has %d entries, want %d: %+v", len(plan), len(want), plan)
	}
	for i, w := range want {
		p := plan[i]
		if p.Path != w.path || p.Kind != w.kind || p.Target != w.target {
			t.Errorf("entry %d = %s kind %d target %q, want %s kind %d target %q", i, p.Path, p.Kind, p.Target, w.path, w.kind, w.target)
		}
	}
	if got, wantText := plan[3].Text, "#!/bin/sh\n"+scriptMark+"alpha.sh runs perfclones' alpha.\nexec \"$(dirname \"$0\")/../../perfclones\" alpha \"$@\"\n"; got != wantText {
		t.Errorf("script:\n%s\nwant:\n%s", got, wantText)
	}
	if got, wantText := plan[4].Text, "#!/bin/sh\n"+scriptMark+"runbeta runs perfclones' beta.\n\"$(dirname \"$0\")/../../perfclones\" beta 'mode one' 'it'\\''s' \"$@\" &\n"; got != wantText {
		t.Errorf("background script:\n%s\nwant:\n%s", got, wantText)
	}
}

func TestLayoutRejects(t *testing.T) {
	tests := []struct {
		name  string
		entry cli.Entry
		want  string
	}{
		{"absolute", cli.Entry{Path: "/usr/bin/alpha"}, "not a clean relative path"},
		{"escapes", cli.Entry{Path: "../alpha"}, "not a clean relative path"},
		{"unclean", cli.Entry{Path: "a//alpha"}, "not a clean relative path"},
		{"empty", cli.Entry{}, "not a clean relative path"},
		{"the binary", cli.Entry{Path: "perfclones", Script: true}, "is also the binary"},
		{"twice", cli.Entry{Path: "bin/beta", Script: true}, "is also beta"},
		{"link name of no tool", cli.Entry{Path: "x/gamma"}, `a link named "gamma" would not start alpha`},
		{"link name of another tool", cli.Entry{Path: "x/beta"}, `a link named "beta" would not start alpha`},
		{"inside a file", cli.Entry{Path: "bin/beta/x", Script: true}, `is inside beta's "bin/beta"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSet()
			s[0].Layout = append(s[0].Layout, tc.entry)
			_, err := s.Layout()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Layout() error %v, want %q", err, tc.want)
			}
		})
	}
}

// fakeBinary is an executable sh script standing in for the perfclones
// binary: it prints the name it was called by and its arguments.
func fakeBinary(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fake")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho \"${0##*/} $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func install(t *testing.T, s Set, args ...string) (string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := s.Main(context.Background(), append([]string{"install"}, args...), cli.IO{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: cli.Env(nil),
	})
	if out.Len() > 0 {
		t.Errorf("install wrote to stdout: %q", out.String())
	}
	return errb.String(), code
}

func TestInstall(t *testing.T) {
	s := testSet()
	fake := fakeBinary(t)
	dir := filepath.Join(t.TempDir(), "tree")
	if stderr, code := install(t, s, "--binary", fake, dir); code != 0 {
		t.Fatalf("install: exit %d, %s", code, stderr)
	}
	// Every name runs the binary at the top of the tree as its tool, from
	// inside the tree and from elsewhere, directly and with sh.
	runs := []struct {
		dir  string // working directory, relative to the tree
		argv []string
		want string
	}{
		{".", []string{"bin/alpha", "x"}, "alpha x"},
		{"vendor/src", []string{"./alpha", "-n", "1"}, "alpha -n 1"},
		{"vendor/bin", []string{"./alpha.sh", "a b", "c"}, "perfclones alpha a b c"},
		{"vendor/bin", []string{"sh", "alpha.sh", "--x"}, "perfclones alpha --x"},
		{"/", []string{filepath.Join(dir, "vendor/bin/alpha.sh"), "y"}, "perfclones alpha y"},
		{"beta-dist/bin", []string{"sh", "runbeta", "-t", "t1"}, "perfclones beta mode one it's -t t1"},
	}
	for _, r := range runs {
		cmd := exec.Command(r.argv[0], r.argv[1:]...)
		cmd.Dir = filepath.Join(dir, r.dir)
		if filepath.IsAbs(r.dir) {
			cmd.Dir = r.dir
		}
		if strings.Contains(r.argv[0], "/") && !filepath.IsAbs(r.argv[0]) {
			// As a shell runs ./x: relative to the working directory,
			// with $0 as typed.
			cmd.Path, cmd.Err = filepath.Join(cmd.Dir, r.argv[0]), nil
		}
		// A background script returns at once; its command still holds
		// the pipe, so Output waits for what it prints.
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("%s in %s: %v", strings.Join(r.argv, " "), r.dir, err)
			continue
		}
		if got := strings.TrimSpace(string(out)); got != r.want {
			t.Errorf("%s in %s printed %q, want %q", strings.Join(r.argv, " "), r.dir, got, r.want)
		}
	}
	for _, f := range []string{"beta-dist/html/page.html", "beta-dist/html/lib/app.js", "beta-dist/html/test1/a.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}

	// Installing again replaces what install wrote, keeps edited examples,
	// and leaves the binary alone when it is already the one in DIR.
	edited := filepath.Join(dir, "beta-dist/html/test1/a.txt")
	if err := os.WriteFile(edited, []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if stderr, code := install(t, s, "--binary", filepath.Join(dir, Name), dir); code != 0 {
		t.Fatalf("second install: exit %d, %s", code, stderr)
	}
	if b, _ := os.ReadFile(edited); string(b) != "edited\n" {
		t.Errorf("reinstall replaced an edited example: %q", b)
	}
	if target, err := os.Readlink(filepath.Join(dir, "vendor/src/alpha")); err != nil || target != "../../perfclones" {
		t.Errorf("vendor/src/alpha -> %q, %v", target, err)
	}
}

func TestInstallLeavesOtherFilesAlone(t *testing.T) {
	dir := t.TempDir()
	theirs := filepath.Join(dir, "vendor", "bin", "alpha.sh")
	if err := os.MkdirAll(filepath.Dir(theirs), 0o755); err != nil {
		t.Fatal(err)
	}
	original := "#!/bin/bash\nexec java Alpha \"$@\"\n"
	if err := os.WriteFile(theirs, []byte(original), 0o755); err != nil {
		t.Fatal(err)
	}
	stderr, code := install(t, testSet(), "--binary", fakeBinary(t), dir)
	if code != 1 || !strings.Contains(stderr, "alpha.sh exists and was not written by perfclones install; not replacing it") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if b, _ := os.ReadFile(theirs); string(b) != original {
		t.Errorf("the vendor's script was changed: %q", b)
	}
}
