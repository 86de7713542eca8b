package javaopts

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestLineSegments(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"via --producer.config.", []string{"via ", "--", "producer.", "config."}},
		{"server(s) to", []string{"server", "(s) ", "to"}},
		{"--broker-list(deprecated)", []string{"--", "broker-", "list", "(deprecated)"}},
		{"x-1 -1 a-b", []string{"x-", "1 ", "-1 ", "a-", "b"}},
		{"1,000.5 x", []string{"1,000.5 ", "x"}},
		{"it's a", []string{"it's ", "a"}},
		{"a() b", []string{"a()", " ", "b"}},
		{"a\tb", []string{"a\t", "b"}},
		{"a\u00a0b c", []string{"a\u00a0b ", "c"}},
		{"a\u200bb c", []string{"a\u200bb ", "c"}}, // format characters are transparent
		{"", nil},
	} {
		got := lineSegments(c.in)
		if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
			t.Errorf("lineSegments(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestLineSegmentsOracle checks the break positions that JDK 17's
// BreakIterator.getLineInstance() reported for targeted and random strings
// (testdata/linebreak_oracle.txt: code points in hex, then the UTF-16
// offsets of the boundaries).
func TestLineSegmentsOracle(t *testing.T) {
	f, err := os.Open("testdata/linebreak_oracle.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		hexes, want, _ := strings.Cut(sc.Text(), "\t")
		var rs []rune
		for _, h := range strings.Fields(hexes) {
			v, err := strconv.ParseUint(h, 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, rune(v))
		}
		in := string(rs)
		var got []string
		pos := 0
		for _, seg := range lineSegments(in) {
			pos += len(utf16.Encode([]rune(seg)))
			got = append(got, strconv.Itoa(pos))
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%q: breaks at %s, want %s", in, g, want)
		}
		n++
	}
	if n < 400 {
		t.Fatalf("only %d cases", n)
	}
}
