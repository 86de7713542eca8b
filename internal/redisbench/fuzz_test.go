package redisbench

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzParseOptions feeds the C-style option parser argument vectors (the
// fuzz string split at NUL bytes): it must never panic, must give the same
// result for the same arguments, and every line it accepts for a run must
// build a plan whose suite can be laid out. No TLS file is read (a line
// naming one is parsed only) and nothing connects.
func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{
		"-h\x00127.0.0.1\x00-p\x006379\x00-c\x00200\x00-n\x0010000000\x00-r\x001000000\x00-d\x0032\x00-t\x00set,get",
		"-a\x00pw\x00--user\x00u\x00--threads\x004\x00--cluster\x00-k\x000",
		"-u\x00redis://u:p@127.0.0.1:6379/3\x00-q\x00--csv",
		"-P\x0016\x00-t\x00lrange_100,mset\x00--precision\x003",
		"set\x00__rand_int__\x00x\x00-r\x00100",
		"-n\x00abc\x00-c\x0012abc\x00-P\x00-3\x00-d\x000",
		"--dbnum\x009\x00-l\x00-I\x00--help",
		"-u\x00redis://%4@[::1\x00-s\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\x00")
		o, res := parseOptions(args)
		o2, res2 := parseOptions(args)
		if !reflect.DeepEqual(o, o2) || !reflect.DeepEqual(res, res2) {
			t.Fatalf("%q: two parses differ", args)
		}
		if res.outcome != outcomeRun || o.TLS != (TLSOptions{}) {
			return
		}
		p, err := buildPlan(&o)
		if err != nil {
			t.Fatalf("%q: accepted but no plan: %v", args, err)
		}
		// Main refuses what cannot fit in memory before it lays out
		// anything; the fuzzer lays out only what is small.
		if p.bufferBytes(p.command) > 1<<24 {
			return
		}
		if len(p.command) > 0 {
			_ = p.customTest(nil)
			return
		}
		if got := len(p.nextPass()); got != len(p.suite) {
			t.Fatalf("%q: %d specs for %d tests", args, got, len(p.suite))
		}
	})
}
