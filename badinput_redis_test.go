package perfclones_test

import (
	"strings"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/redisbench"
	"github.com/perfclones/perfclones/internal/testenv"
)

// redisBadPrefix comes before every case: the local server, one request,
// the PING tests only and quiet output, so a line that parses runs a tiny
// benchmark. A case's own options come later and win, as in the C parser.
var redisBadPrefix = []string{"-h", "127.0.0.1", "-p", "$PORT", "-n", "1", "-q", "-t", "ping"}

// redisBadCases are the odd command lines; $PORT is the local server's
// port. No case names a host other than loopback forms and "localhost"
// (any other name would go to the resolver) and none runs forever in both tools (-l, -I).
func redisBadCases(*testing.T) [][]string {
	var cases [][]string
	add := func(args ...string) { cases = append(cases, args) }
	numbers := []string{"", "0", "-1", "abc", "1e3", "99999999999999999999", "-99999999999", "0x10", " 5", "5x", "\xff", "+3", "2147483648"}
	for _, opt := range []string{"-c", "-n", "-d", "--dbnum", "--threads", "-k", "-r", "-P", "--precision", "-p", "--seed"} {
		for _, v := range numbers {
			add(opt, v)
		}
		add(opt) // its value missing at the end
	}
	for _, opt := range []string{"-h", "-s", "-a", "--user", "-t", "--sni", "--cacert", "--cacertdir", "--cert", "--key", "--tls-ciphers", "--tls-ciphersuites", "-u"} {
		add(opt)
		add(opt, "")
		add(opt, "\xff\xfe")
	}
	for _, h := range []string{"127.1", "2130706433", "0x7f000001", "0177.0.0.1", "0x7f.1", "::1", "localhost"} {
		add("-h", h, "-p", "$PORT")
	}
	for _, u := range []string{"redis://127.0.0.1:$PORT", "redis://", "redis://:@127.0.0.1:$PORT", "redis://%4@127.0.0.1:$PORT",
		"redis://[::1", "redis://[::1]:$PORT", "redis://127.0.0.1:$PORT/3", "redis://127.0.0.1:$PORT/x", "redis://u:p@127.0.0.1:$PORT",
		"http://127.0.0.1:$PORT", "redis://127.0.0.1:99999", "redis://127.0.0.1:$PORT?x=1", "127.0.0.1:$PORT", "unix:///nonexistent"} {
		add("-u", u)
	}
	for _, tests := range []string{"set,get", "foo", ",,", "SET", "lrange_100", "set,,get", "PING_INLINE", "ping_mbulk", "mset,xadd"} {
		add("-t", tests)
	}
	for _, flags := range [][]string{
		{"-z"}, {"--bogus"}, {"-"}, {"--"}, {"-qq"}, {"--thread", "2"}, {"--pre", "2"}, {"--help"}, {"--version"}, {"-v"},
		{"-q", "-q"}, {"--csv", "--csv"}, {"--csv", "-q"}, {"-e"}, {"-3"}, {"--cluster", "-p", "$PORT"}, {"--enable-tracking"},
		{"-x"}, {"--tls"}, {"--insecure"}, {"-c", "2", "-c", "3"}, {"-n", "5", "-n", "0"},
		{"--precision", "9"}, {"--threads", "600"}, {"-d", "0"}, {"-d", "-5"}, {"-P", "0"},
		{"set", "k", "v"}, {"ping", "extra"}, {"nosuchcommand"}, {"-n", "1", "get"}, {"set", "__rand_int__", "x", "-r"},
		{"--dbnum", "99"}, {"-a", "wrong"}, {"--user", "nobody", "-a", "x"}, {"-s", "/nonexistent/redis.sock"},
		{"-s", ""}, {"-h", ""}, {"-p", "0"}, {"-p", "65536"}, {"-p", "-5"},
	} {
		add(flags...)
	}
	return cases
}

func TestBadInputRedisBenchmark(t *testing.T) {
	env := testenv.Redis(t)
	_, port, _ := strings.Cut(env.Addr, ":")
	expand := func(args []string) []string {
		out := make([]string, 0, len(redisBadPrefix)+len(args))
		for _, a := range append(append([]string{}, redisBadPrefix...), args...) {
			out = append(out, strings.ReplaceAll(a, "$PORT", port))
		}
		return out
	}
	badSuite{
		tool: "redis-benchmark",
		header: "redis-benchmark bad input; the original is Debian's redis-benchmark 7.0.15 run against a local redis-server,\n" +
			"every line after the arguments " + quoteWords(redisBadPrefix) + " ($PORT: the local server's port).",
		cases: redisBadCases,
		ours: func(t *testing.T, args []string) badOutcome {
			return runOursBad(redisbench.Main, expand(args), nil)
		},
		original: func(t *testing.T, args []string) badOutcome {
			r := runCommand(t, append([]string{env.CBenchmark}, expand(args)...), 10*time.Second, false, "", nil)
			o := badOutcome{code: itoaRC(r), stdout: firstLine(r.stdout), stderr: firstLine(r.stderr)}
			if r.timedOut {
				o.code = "hang"
			}
			return o
		},
	}.run(t)
}
