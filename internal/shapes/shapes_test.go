package shapes

import (
	"regexp"
	"strings"
	"testing"
)

func TestMask(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"no numbers here", "no numbers here"},
		{"  5000 requests completed in 0.12 seconds", "  <N> requests completed in <N> seconds"},
		{"SET: rps=0.0 (overall: -nan) avg_msec=-nan (overall: -nan)", "SET: rps=<N> (overall: <N>) avg_msec=<N> (overall: <N>)"},
		{"  throughput summary: inf requests per second", "  throughput summary: <N> requests per second"},
		{"GET: 43103.45 requests per second, p50=0.735 msec", "GET: <N> requests per second, p50=<N> msec"},
		{"99.988% <= 4.303 milliseconds (cumulative count 5000)", "<N>% <= <N> milliseconds (cumulative count <N>)"},
		{`"LRANGE_100 (first 100 elements)","1234.50","0.123"`, `"LRANGE_100 (first <N> elements)","<N>","<N>"`},
		{"MSET (10 keys)", "MSET (<N> keys)"},
		{"Master 0: 127.0.0.1:7103", "Master <N>: <N>.<N>:<N>"},
		{"slots 5461-10922", "slots <N>-<N>"},
		{"key:000000000102", "key:<N>"},
		{"a-1 x+2", "a-<N> x+<N>"},
		{"-3 +4", "<N> <N>"},
		{"info information infinity nano inf", "info information infinity nano <N>"},
		{"NaN Infinity -Infinity -inf Inf", "<N> <N> <N> <N> <N>"},
		{"1.5e-05 2E+3 3e 4e-", "<N> <N> 3e 4e-"},
		{"v1.2 p99.9 x86_64", "v1.2 p99.9 x86_64"},
		{"redis-benchmark 7.0.15", "redis-benchmark <N>.<N>"},
		{"1. 2.x .5", "<N>. <N>.x .5"},
		{"clients: 5\r", "clients: <N>\r"},
		{"20ms 58ef61ab", "20ms 58ef61ab"},
		{"1.2.3.4x", "<N>.<N>.4x"},
		{"-", "-"},
		{"x-", "x-"},
		{"--5", "-<N>"},
	}
	for _, tt := range tests {
		if got := Mask(tt.in); got != tt.want {
			t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMaskerRules(t *testing.T) {
	m := Masker{Rules: []Rule{HexID40}}
	tests := []struct {
		in, want string
	}{
		{"Master 0: 58ef61ab211fb82895e400b87d48dfb1b9ce365f 127.0.0.1:7103", "Master <N>: <ID> <N>.<N>:<N>"},
		{"Master 1: 0000000000000000000000000000000000000000 x", "Master <N>: <ID> x"},
		// 39 and 41 hex digits are not ids.
		{"58ef61ab211fb82895e400b87d48dfb1b9ce365", "58ef61ab211fb82895e400b87d48dfb1b9ce365"},
		{"58ef61ab211fb82895e400b87d48dfb1b9ce365ff", "58ef61ab211fb82895e400b87d48dfb1b9ce365ff"},
	}
	for _, tt := range tests {
		if got := m.Mask(tt.in); got != tt.want {
			t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := m.MaskLines([]string{"a 1", "b"}); strings.Join(got, "|") != "a <N>|b" {
		t.Errorf("MaskLines = %q", got)
	}
}

func TestLines(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n", []string{""}},
		{"a\nb\n", []string{"a", "b"}},
		{"a\nb", []string{"a", "b"}},
		{"a\n\n", []string{"a", ""}},
		{" \rx\r\n", []string{" \rx\r"}},
	}
	for _, tt := range tests {
		got := Lines(tt.in)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("Lines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCollapse(t *testing.T) {
	pct := Block{Header: "P:", Line: regexp.MustCompile(`^\d+%$`), Marker: "<P>"}
	cum := Block{Header: "C:", Line: regexp.MustCompile(`^\d+$`), Marker: "<C>"}
	tests := []struct {
		name     string
		in, want []string
		errs     int
	}{
		{"none", []string{"a", "b"}, []string{"a", "b"}, 0},
		{"two blocks", []string{"x", "P:", "1%", "2%", "", "C:", "3", "", "y"}, []string{"x", "P:", "<P>", "", "C:", "<C>", "", "y"}, 0},
		{"block at end", []string{"P:", "1%"}, []string{"P:", "<P>"}, 0},
		{"empty block", []string{"P:", "", "z"}, []string{"P:", "<P>", "", "z"}, 1},
		{"bad line", []string{"P:", "1%", "oops", "2%", ""}, []string{"P:", "<P>", ""}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := Collapse(tt.in, pct, cum)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("Collapse = %q, want %q", got, tt.want)
			}
			if len(errs) != tt.errs {
				t.Errorf("errors = %q, want %d", errs, tt.errs)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	if d := Diff([]string{"a", "b"}, []string{"a", "b"}); d != "" {
		t.Errorf("Diff of equal = %q", d)
	}
	d := Diff([]string{"a", "b", "c"}, []string{"a", "B", "c", "d"})
	for _, want := range []string{`-   2 "b"`, `+   2 "B"`, `+   4 "d"`} {
		if !strings.Contains(d, want) {
			t.Errorf("Diff = %q, missing %q", d, want)
		}
	}
	if strings.Contains(d, `"a"`) || strings.Contains(d, `"c"`) {
		t.Errorf("Diff shows equal lines: %q", d)
	}
}
