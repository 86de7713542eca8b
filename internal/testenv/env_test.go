package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseEnv(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]string
		wantErr string
	}{
		{
			name: "as scripts/services writes it",
			in: "# Written by scripts/services; source it or read it with internal/testenv.\n" +
				"export PERF_REDIS_ADDR=127.0.0.1:16379\n" +
				"export PERF_REDIS_CLUSTER_ADDRS=127.0.0.1:17101,127.0.0.1:17102,127.0.0.1:17103\n" +
				"export PERF_REDIS_BENCHMARK_C=/usr/bin/redis-benchmark\n",
			want: map[string]string{
				"PERF_REDIS_ADDR":          "127.0.0.1:16379",
				"PERF_REDIS_CLUSTER_ADDRS": "127.0.0.1:17101,127.0.0.1:17102,127.0.0.1:17103",
				"PERF_REDIS_BENCHMARK_C":   "/usr/bin/redis-benchmark",
			},
		},
		{
			name: "without export, blank lines and comments",
			in:   "\n  # comment\nA=1\n\n\tB=two\n",
			want: map[string]string{"A": "1", "B": "two"},
		},
		{
			name: "single quotes, as env_line writes odd values",
			in:   `export P='it'\''s a "pass" $HOME'` + "\n",
			want: map[string]string{"P": `it's a "pass" $HOME`},
		},
		{
			name: "double quotes and backslashes",
			in:   `X="a \"b\" \\ \$c \d"` + "\n" + `Y=a\ b`,
			want: map[string]string{"X": `a "b" \ $c \d`, "Y": "a b"},
		},
		{
			name: "empty values and a value with =",
			in:   "E=\nQ=''\nU=a=b\n",
			want: map[string]string{"E": "", "Q": "", "U": "a=b"},
		},
		{
			name: "trailing comment and white space, # inside a word",
			in:   "A=x   # note\nB=y#z\t\nexport   C=3",
			want: map[string]string{"A": "x", "B": "y#z", "C": "3"},
		},
		{
			name: "a later line wins",
			in:   "A=1\nexport A=2\n",
			want: map[string]string{"A": "2"},
		},
		{
			name: "CRLF line ends",
			in:   "A=1\r\nB=2\r\n",
			want: map[string]string{"A": "1", "B": "2"},
		},
		{name: "no equals sign", in: "A=1\nexport B\n", wantErr: "line 2"},
		{name: "bad name", in: "1A=x", wantErr: "line 1"},
		{name: "space in name", in: "A B=x", wantErr: "line 1"},
		{name: "unterminated single quote", in: "A='x", wantErr: "unterminated single quote"},
		{name: "unterminated double quote", in: `A="x\"`, wantErr: "unterminated double quote"},
		{name: "two words", in: "A=x y", wantErr: "after the value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEnv(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseEnv error = %v, want one containing %q (result %v)", err, tt.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseEnv: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseEnv = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestSourceLookup(t *testing.T) {
	procEnv := map[string]string{"SET": "from-process", "EMPTY": ""}
	s := source{
		getenv: func(k string) (string, bool) { v, ok := procEnv[k]; return v, ok },
		file:   map[string]string{"SET": "from-file", "EMPTY": "file-fills-empty", "FILE": "only-file"},
	}
	tests := []struct{ name, want string }{
		{"SET", "from-process"},
		{"EMPTY", "file-fills-empty"},
		{"FILE", "only-file"},
		{"NOWHERE", ""},
	}
	for _, tt := range tests {
		if got := s.lookup(tt.name); got != tt.want {
			t.Errorf("lookup(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := (source{getenv: os.LookupEnv}).lookup("PERF_TESTENV_SURELY_UNSET"); got != "" {
		t.Errorf("lookup with no file = %q, want empty", got)
	}
}

func TestSplitList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a:1", []string{"a:1"}},
		{"a:1,b:2, c:3 ,", []string{"a:1", "b:2", "c:3"}},
	}
	for _, tt := range tests {
		if got := splitList(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitList(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// fakeTB records how a helper stopped the test instead of stopping it.
type fakeTB struct {
	testing.TB
	fatal, skip string
}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Fatalf(format string, a ...any) { f.fatal = fmt.Sprintf(format, a...) }
func (f *fakeTB) Skipf(format string, a ...any)  { f.skip = fmt.Sprintf(format, a...) }

func TestUnavailable(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv("CI", ci)
			f := &fakeTB{}
			need(f, "redis", "PERF_TESTENV_SURELY_UNSET_1", "PERF_TESTENV_SURELY_UNSET_2")
			got, other := f.skip, f.fatal
			if ci != "" {
				got, other = f.fatal, f.skip
			}
			if other != "" {
				t.Errorf("stopped the wrong way too: %q", other)
			}
			for _, want := range []string{"PERF_TESTENV_SURELY_UNSET_1, PERF_TESTENV_SURELY_UNSET_2 not set", "scripts/services start redis"} {
				if !strings.Contains(got, want) {
					t.Errorf("message %q does not contain %q", got, want)
				}
			}
		})
	}
}

func TestNeedPresent(t *testing.T) {
	t.Setenv("PERF_TESTENV_PRESENT", "v")
	f := &fakeTB{}
	got := need(f, "redis", "PERF_TESTENV_PRESENT")
	if f.fatal != "" || f.skip != "" {
		t.Fatalf("need stopped the test: fatal %q skip %q", f.fatal, f.skip)
	}
	if got["PERF_TESTENV_PRESENT"] != "v" {
		t.Errorf("need = %v", got)
	}
}

func TestReachable(t *testing.T) {
	t.Setenv("CI", "")
	f := &fakeTB{}
	reachable(f, "redis", "127.0.0.1:1") // port 1: nothing listens there
	if !strings.Contains(f.skip, "127.0.0.1:1 does not answer") {
		t.Errorf("skip message = %q", f.skip)
	}
}

func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Errorf("ModuleRoot() = %s without go.mod: %v", root, err)
	}
	wd, _ := os.Getwd()
	if rel, err := filepath.Rel(root, wd); err != nil || rel != filepath.Join("internal", "testenv") {
		t.Errorf("working directory %s is %q below ModuleRoot() %s, want internal/testenv", wd, rel, root)
	}
}

// TestRedis checks the live environment from scripts/services start redis.
func TestRedis(t *testing.T) {
	env := Redis(t)
	if len(env.ClusterAddrs) != 3 {
		t.Errorf("ClusterAddrs = %q, want 3 addresses", env.ClusterAddrs)
	}
	for name, v := range map[string]string{
		"Addr": env.Addr, "AuthAddr": env.AuthAddr, "AuthPassword": env.AuthPassword,
		"ACLUser": env.ACLUser, "ACLPassword": env.ACLPassword, "CBenchmark": env.CBenchmark,
	} {
		if v == "" {
			t.Errorf("%s is empty", name)
		}
	}
}
