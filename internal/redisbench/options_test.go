package redisbench

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseOptions(t *testing.T) {
	def := defaultOptions()
	with := func(f func(o *Options)) Options {
		o := defaultOptions()
		f(&o)
		return o
	}
	tests := []struct {
		name     string
		args     string
		want     Options
		outcome  parseOutcome
		badArg   string
		fatal    string
		warnings []string
	}{
		{name: "no arguments", args: "", want: def},
		{name: "seed 000 line", args: "-h 127.0.0.1 -p 6379 -c 200 -n 10000000 -r 1000000 -d 32 -t set,get",
			want: with(func(o *Options) {
				o.Clients, o.Requests, o.RandomKeys, o.KeyspaceLen, o.DataSize = 200, 10000000, true, 1000000, 32
				o.Tests, o.HasTests = ",set,get,", true
			})},
		{name: "seed 003 line", args: "-h kodcloud.example -t set,get -r 1000000 -n 1000000 -c 1000",
			want: with(func(o *Options) {
				o.Host, o.Clients, o.Requests, o.RandomKeys, o.KeyspaceLen = "kodcloud.example", 1000, 1000000, true, 1000000
				o.Tests, o.HasTests = ",set,get,", true
			})},
		{name: "auth threads cluster", args: "-a pw --user u --threads 4 --cluster -k 0",
			want: with(func(o *Options) {
				o.Password, o.HasPassword, o.User, o.Threads, o.Cluster, o.KeepAlive = "pw", true, "u", 4, true, 0
			})},
		{name: "atoi garbage gives zero", args: "-n abc -c 12abc -P -3 -d 0",
			want: with(func(o *Options) { o.Requests, o.Clients, o.Pipeline, o.DataSize = 0, 12, 1, 1 })},
		{name: "atoi leading space and sign", args: "-n +42",
			want: with(func(o *Options) { o.Requests = 42 })},
		{name: "data size clamped", args: "-d 2000000000", want: with(func(o *Options) { o.DataSize = maxDataSize })},
		{name: "last occurrence wins", args: "-t get -n 5 -t SET,Lpush -n 7",
			want: with(func(o *Options) { o.Tests, o.HasTests, o.Requests = ",set,lpush,", true, 7 })},
		{name: "keep alive raw value", args: "-k 5", want: with(func(o *Options) { o.KeepAlive = 5 })},
		{name: "negative keyspace", args: "-r -5", want: with(func(o *Options) { o.RandomKeys, o.KeyspaceLen = true, 0 })},
		{name: "keyspace garbage", args: "-r abc", want: with(func(o *Options) { o.RandomKeys = true })},
		{name: "precision clamps", args: "--precision 9", want: with(func(o *Options) { o.Precision = 4 })},
		{name: "precision negative is default", args: "--precision -1", want: def},
		{name: "precision zero is one", args: "--precision 0", want: with(func(o *Options) { o.Precision = 1 })},
		{name: "threads negative", args: "--threads -2", want: def},
		{name: "threads too many", args: "--threads 501", want: with(func(o *Options) { o.Threads = 500 }),
			warnings: []string{"WARNING: Too many threads, limiting threads to 500."}},
		{name: "-e warns", args: "-e -q", want: with(func(o *Options) { o.Quiet = true }),
			warnings: []string{"WARNING: -e option has no effect. We now immediately exit on error to avoid false results."}},
		{name: "flags", args: "-q --csv -l -I -x -3 --enable-tracking --insecure --tls",
			want: with(func(o *Options) {
				o.Quiet, o.CSV, o.Loop, o.Idle, o.StdinLast, o.RESP3, o.EnableTracking = true, true, true, true, true, true, true
				o.TLS.Insecure, o.TLS.Enabled = true, true
			})},
		{name: "seed and dbnum", args: "--seed 42 --dbnum 3", want: with(func(o *Options) { o.Seed, o.HasSeed, o.DBNum = 42, true, 3 })},
		{name: "custom command stops parsing", args: "-n 10 lpush mylist __rand_int__ -n 5",
			want: with(func(o *Options) { o.Requests, o.Command = 10, []string{"lpush", "mylist", "__rand_int__", "-n", "5"} })},
		{name: "uri", args: "-u redis://user:p%40ss@10.0.0.1:7000/2",
			want: with(func(o *Options) {
				o.User, o.Password, o.HasPassword, o.Host, o.Port, o.DBNum = "user", "p@ss", true, "10.0.0.1", 7000, 2
			})},
		{name: "uri tls ipv6", args: "-u rediss://[::1]:6380",
			want: with(func(o *Options) { o.TLS.Enabled, o.Host, o.Port = true, "::1", 6380 })},
		{name: "uri password only", args: "-u redis://secret@h",
			want: with(func(o *Options) { o.Password, o.HasPassword, o.Host = "secret", true, "h" })},
		{name: "tls files", args: "--sni s --cacert a --cacertdir d --cert c --key k --tls-ciphers x --tls-ciphersuites y",
			want: with(func(o *Options) {
				o.TLS = TLSOptions{SNI: "s", CACert: "a", CACertDir: "d", Cert: "c", Key: "k", Ciphers: "x", CipherSuites: "y"}
			})},

		{name: "help", args: "-n 5 --help", outcome: outcomeHelp},
		{name: "version short", args: "-v", outcome: outcomeVersion},
		{name: "version long", args: "--version -y", outcome: outcomeVersion},
		{name: "unknown option", args: "-x -y", outcome: outcomeInvalid, badArg: "-y"},
		{name: "bundled flags", args: "-qn 5", outcome: outcomeInvalid, badArg: "-qn"},
		{name: "equals form", args: "--threads=4", outcome: outcomeInvalid, badArg: "--threads=4"},
		{name: "double dash", args: "--", outcome: outcomeInvalid, badArg: "--"},
		{name: "missing value", args: "-q -n", outcome: outcomeInvalid, badArg: "-n"},
		{name: "missing uri", args: "-u", outcome: outcomeInvalid, badArg: "-u"},
		{name: "keyspace looks like option", args: "-r -q", outcome: outcomeInvalid, badArg: "-q"},
		{name: "port out of range", args: "-p 70000", outcome: outcomeFatal, fatal: "Invalid server port."},
		{name: "negative port", args: "-p -1", outcome: outcomeFatal, fatal: "Invalid server port."},
		{name: "bad uri scheme", args: "-u http://x", outcome: outcomeFatal, fatal: "Invalid URI scheme"},
		{name: "bad uri escape", args: "-u redis://%zz@h", outcome: outcomeFatal, fatal: "Illegal character in URI encoding"},
		// C reads the '@' as the second hex digit (real 7.0.15 output).
		{name: "short uri escape", args: "-u redis://a%4@h", outcome: outcomeFatal, fatal: "Illegal character in URI encoding"},
		{name: "bare percent", args: "-u redis://a%@h", outcome: outcomeFatal, fatal: "Incomplete URI encoding"},
		{name: "bad hex", args: "-u redis://%zz@h", outcome: outcomeFatal, fatal: "Illegal character in URI encoding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args []string
			if tt.args != "" {
				args = strings.Fields(tt.args)
			}
			got, res := parseOptions(args)
			if res.outcome != tt.outcome || res.badArg != tt.badArg || res.fatal != tt.fatal {
				t.Fatalf("outcome = %v %q %q, want %v %q %q", res.outcome, res.badArg, res.fatal, tt.outcome, tt.badArg, tt.fatal)
			}
			if !reflect.DeepEqual(res.warnings, tt.warnings) {
				t.Errorf("warnings = %q, want %q", res.warnings, tt.warnings)
			}
			if tt.outcome == outcomeRun && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("options =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestAtoi(t *testing.T) {
	for in, want := range map[string]int{
		"": 0, "abc": 0, "12": 12, "  7": 7, "\t-3x": -3, "+5": 5, "--5": 0, "1e3": 1,
		"2147483648":            -2147483648, // strtol's long truncated to int
		"99999999999999999999":  -1,          // LONG_MAX truncated
		"-99999999999999999999": 0,           // LONG_MIN truncated
	} {
		if got := atoi(in); got != want {
			t.Errorf("atoi(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestTestSelected(t *testing.T) {
	tests := []struct {
		list string
		want []string
	}{
		{"set,get", []string{"SET", "GET"}},
		{"SET,Get", []string{"SET", "GET"}},
		{"get,set", []string{"SET", "GET"}}, // suite order, not list order
		{"set, get", []string{"SET"}},       // spaces are not trimmed
		{"ping", []string{"PING_INLINE", "PING_MBULK"}},
		{"ping_mbulk", []string{"PING_MBULK"}},
		{"lrange_300", []string{"LPUSH (needed to benchmark LRANGE)", "LRANGE_300 (first 300 elements)"}},
		{"lrange", []string{"LPUSH (needed to benchmark LRANGE)", "LRANGE_100 (first 100 elements)", "LRANGE_300 (first 300 elements)",
			"LRANGE_500 (first 500 elements)", "LRANGE_600 (first 600 elements)"}},
		{"mset,xadd", []string{"MSET (10 keys)", "XADD"}},
		{"nosuch", nil},
	}
	for _, tt := range tests {
		o, _ := parseOptions([]string{"-t", tt.list})
		var got []string
		for _, s := range selectedSuite(&o, "VXK") {
			got = append(got, s.title)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("-t %q selects %q, want %q", tt.list, got, tt.want)
		}
	}
}
