package javaopts

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// The fuzz targets feed the parsers command lines: the input is split into
// arguments at NUL bytes (so any byte, newline and space included, can be
// inside an argument). A parser must never panic; it either accepts the
// line or ends with an Exit whose code is one the originals use and whose
// text is not empty; and the same line always gives the same outcome.

func fuzzArgs(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

var argparseSeeds = []string{
	"--topic\x00t\x00--num-records\x0010\x00--record-size\x00100\x00--throughput\x00-1\x00--producer-props\x00bootstrap.servers=h:9092\x00acks=1",
	"--num\x0010\x00--top\x00t\x00--thr\x00-1\x00--payload-file\x00f\x00--producer.config\x00p",
	"--producer\x00x",
	"--throughput\x00-1.5",
	"--topic=t\x00--num-records=abc",
	"-h",
	"--help",
	"word\x00--topic",
	"--record-size\x001\x00--payload-file\x00f",
	"--producer-props",
	"--\x00--topic\x00t",
	"-",
	"--transaction-duration-ms\x009223372036854775808",
	"--num-records\x00\u0661\u0662",
}

func FuzzArgparse(f *testing.F) {
	for _, s := range argparseSeeds {
		f.Add(s, uint8(80))
	}
	parsers := []*ArgParser{kafkaProducer3x(), kafkaProducer4x()}
	f.Fuzz(func(t *testing.T, line string, width uint8) {
		args := fuzzArgs(line)
		for _, p := range parsers {
			first := argparseOutcome(t, p, args, int(width))
			if again := argparseOutcome(t, p, args, int(width)); again != first {
				t.Fatalf("%q: two parses differ:\n%s\n---\n%s", args, first, again)
			}
		}
	})
}

func argparseOutcome(t *testing.T, p *ArgParser, args []string, width int) string {
	ns, err := p.Parse(args, width)
	if err != nil {
		var exit *Exit
		if !errors.As(err, &exit) {
			t.Fatalf("%q: error %T is not an Exit: %v", args, err, err)
		}
		checkExit(t, args, exit)
		return "exit " + exit.Error() + "\n" + exit.Stdout + exit.Stderr
	}
	return "ok " + nsString(ns)
}

func checkExit(t *testing.T, args []string, exit *Exit) {
	t.Helper()
	if exit.Code < 0 || exit.Code > 2 {
		t.Fatalf("%q: exit code %d", args, exit.Code)
	}
	if exit.Stdout == "" && exit.Stderr == "" {
		t.Fatalf("%q: exit %d with no text", args, exit.Code)
	}
	for _, text := range []string{exit.Stdout, exit.Stderr} {
		if text != "" && !strings.HasSuffix(text, "\n") {
			t.Fatalf("%q: text does not end in a newline: %q", args, text)
		}
	}
}

var joptSeeds = []string{
	"--topic\x00t\x00--messages\x00100\x00--broker-list\x00h:9092",
	"--bootstrap-server=h:9092\x00--topic\x00t\x00--messages\x00abc",
	"--timeout\x00--topic\x00t",
	"--help",
	"--fetch-size\x0099999999999",
	"--topic",
	"--to\x00t",
	"x\x00--topic\x00t",
	"--topic\x00a\x00--topic\x00b",
}

func FuzzJopt(f *testing.F) {
	for _, s := range joptSeeds {
		f.Add(s)
	}
	p := kafkaConsumer3x()
	f.Fuzz(func(t *testing.T, line string) {
		args := fuzzArgs(line)
		first := joptReport(p, args)
		if again := joptReport(p, args); again != first {
			t.Fatalf("%q: two parses differ:\n%s\n---\n%s", args, first, again)
		}
		if _, err := p.Parse(args); err != nil {
			var jerr *JoptError
			if !errors.As(err, &jerr) || jerr.Msg == "" {
				t.Fatalf("%q: error %T %v", args, err, err)
			}
			checkExit(t, args, p.UsageExit(jerr.Msg))
		}
	})
}

func FuzzJavaNumbers(f *testing.F) {
	for _, s := range []string{"0", "-1", "+7", "9223372036854775807", "9223372036854775808", "-2147483649",
		"1e3", "0x10", "NaN", "-Infinity", " 1", "1.5f", "\u0661", "", "-", "+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseJavaLong(s); err == nil {
			if w, err := ParseJavaLong(strconv.FormatInt(v, 10)); err != nil || w != v {
				t.Fatalf("Long %q = %d does not round-trip: %d %v", s, v, w, err)
			}
		} else if err.Error() == "" {
			t.Fatalf("Long %q: empty error", s)
		}
		if v, err := ParseJavaInt(s); err == nil {
			if l, err := ParseJavaLong(s); err != nil || l != int64(v) {
				t.Fatalf("Int %q = %d but Long gives %d %v", s, v, l, err)
			}
		}
		if _, err := ParseJavaDouble(s); err != nil && err.Error() == "" {
			t.Fatalf("Double %q: empty error", s)
		}
	})
}

func FuzzCommons(f *testing.F) {
	for _, s := range []string{
		"-h\x00amqp://localhost\x00-x\x003\x00-y\x003\x00-z\x00300", "-qq", "-qp\x00q-%d", "--queue-pattern=q", "--que\x00x",
		"-x3", "-x", "--", "-\x00-", "-Dk=v", "--bogus", "-s\x00-1", "-zz\x001",
	} {
		f.Add(s)
	}
	p := perfTestLike()
	f.Fuzz(func(t *testing.T, line string) {
		args := fuzzArgs(line)
		first := commonsReport(p, args)
		if again := commonsReport(p, args); again != first {
			t.Fatalf("%q: two parses differ:\n%s\n---\n%s", args, first, again)
		}
		if first == "ERR \n" {
			t.Fatalf("%q: error with no text", args)
		}
	})
}
