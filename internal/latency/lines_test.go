package latency

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// formatLines prints lines the way redis-benchmark does:
// printf("%3.3f%% <= %.3f milliseconds (cumulative count %lld)\n", ...)
// with the value as (double)(highest_equivalent_value / 1000.0f).
func formatLines(ls []Line) string {
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "%3.3f%% <= %.3f milliseconds (cumulative count %d)\n",
			l.Percent, MillisFloat32(l.Value), l.Count)
	}
	return b.String()
}

// parseValues reads "value:count value:count ..." into a flat list.
func parseValues(t *testing.T, spec string) []int64 {
	t.Helper()
	var vs []int64
	for _, f := range strings.Fields(spec) {
		v, c, ok := strings.Cut(f, ":")
		if !ok {
			t.Fatalf("bad spec %q", f)
		}
		vi, err1 := strconv.ParseInt(v, 10, 64)
		ci, err2 := strconv.Atoi(c)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad spec %q", f)
		}
		for range ci {
			vs = append(vs, vi)
		}
	}
	return vs
}

func everyNth(from, to, step int64) string {
	var b strings.Builder
	for v := from; v <= to; v += step {
		fmt.Fprintf(&b, "%d:1 ", v)
	}
	return b.String()
}

// The expected blocks and numbers below were produced by HdrHistogram_c as
// vendored in Redis 7.4 (hdr_histogram.c), driven by loops identical to
// redis-benchmark's showLatencyReport, on the same values. The first cases are
// the samples of the spec (3.10).
var goldenCases = []struct {
	name       string
	sigFigs    int
	values     string // value:count pairs, microseconds
	percentile string
	cumulative string
	min, max   int64
	mean       float64
	p50, p95   int64
	p99        int64
}{
	{
		// Spec 3.10: "redis-benchmark -n 5000 -d 100 -t set -c 10". The
		// values are a distribution made to fit every printed line; the
		// summary line is checked in TestSummaryLine.
		name:    "set -n 5000",
		sigFigs: 3,
		values: "47:10 63:2200 103:261 111:387 151:946 199:623 207:83 231:225 239:20 279:90 303:18 " +
			"407:21 503:11 607:5 703:2 1007:2 1103:10 1207:8 1303:9 1407:1 1703:7 1807:1 2103:5 " +
			"2239:5 2551:11 3103:9 3703:11 3831:10 3879:5 4103:1 4231:1 4263:1 4303:1",
		percentile: `0.000% <= 0.047 milliseconds (cumulative count 10)
50.000% <= 0.111 milliseconds (cumulative count 2858)
75.000% <= 0.151 milliseconds (cumulative count 3804)
87.500% <= 0.199 milliseconds (cumulative count 4427)
93.750% <= 0.231 milliseconds (cumulative count 4735)
96.875% <= 0.279 milliseconds (cumulative count 4845)
98.438% <= 1.207 milliseconds (cumulative count 4922)
99.219% <= 2.551 milliseconds (cumulative count 4961)
99.609% <= 3.703 milliseconds (cumulative count 4981)
99.805% <= 3.831 milliseconds (cumulative count 4991)
99.902% <= 3.879 milliseconds (cumulative count 4996)
99.951% <= 4.231 milliseconds (cumulative count 4998)
99.976% <= 4.263 milliseconds (cumulative count 4999)
99.988% <= 4.303 milliseconds (cumulative count 5000)
100.000% <= 4.303 milliseconds (cumulative count 5000)
`,
		cumulative: `49.420% <= 0.103 milliseconds (cumulative count 2471)
90.200% <= 0.207 milliseconds (cumulative count 4510)
97.260% <= 0.303 milliseconds (cumulative count 4863)
97.680% <= 0.407 milliseconds (cumulative count 4884)
97.900% <= 0.503 milliseconds (cumulative count 4895)
98.000% <= 0.607 milliseconds (cumulative count 4900)
98.040% <= 0.703 milliseconds (cumulative count 4902)
98.080% <= 1.007 milliseconds (cumulative count 4904)
98.280% <= 1.103 milliseconds (cumulative count 4914)
98.440% <= 1.207 milliseconds (cumulative count 4922)
98.620% <= 1.303 milliseconds (cumulative count 4931)
98.640% <= 1.407 milliseconds (cumulative count 4932)
98.780% <= 1.703 milliseconds (cumulative count 4939)
98.800% <= 1.807 milliseconds (cumulative count 4940)
98.900% <= 2.103 milliseconds (cumulative count 4945)
99.400% <= 3.103 milliseconds (cumulative count 4970)
99.940% <= 4.103 milliseconds (cumulative count 4997)
100.000% <= 5.103 milliseconds (cumulative count 5000)
`,
		min: 40, max: 4303, mean: 0x1.4a8a71de69ad4p+7, p50: 111, p95: 239, p99: 2239,
	},
	{
		// Spec 3.10 "-n 10 -c 1 -t get": the 50% tick lands in the 0% bucket.
		name:    "get -n 10",
		sigFigs: 3,
		values:  "20:3 16:1 18:1 21:1 23:1 55:1 71:1 3830:1",
		percentile: `0.000% <= 0.023 milliseconds (cumulative count 7)
75.000% <= 0.055 milliseconds (cumulative count 8)
87.500% <= 0.071 milliseconds (cumulative count 9)
93.750% <= 3.831 milliseconds (cumulative count 10)
100.000% <= 3.831 milliseconds (cumulative count 10)
`,
		cumulative: `90.000% <= 0.103 milliseconds (cumulative count 9)
100.000% <= 4.103 milliseconds (cumulative count 10)
`,
		min: 16, max: 3831, mean: 0x1.98ccccccccccdp+8, p50: 23, p95: 3831, p99: 3831,
	},
	{
		name:    "-n 1",
		sigFigs: 3,
		values:  "39:1",
		percentile: `0.000% <= 0.039 milliseconds (cumulative count 1)
100.000% <= 0.039 milliseconds (cumulative count 1)
`,
		cumulative: `100.000% <= 0.103 milliseconds (cumulative count 1)
`,
		min: 32, max: 39, mean: 0x1.2p+5, p50: 39, p95: 39, p99: 39,
	},
	{
		// C: the percentile iterator reports once with its initial state
		// (value 0, count 0) and tick 100; the linear iterator reports
		// nothing. hdr_min is INT64_MAX, hdr_mean 0.0/0 (-nan), and every
		// percentile falls back to value 0's highest equivalent, 7.
		name:       "empty",
		sigFigs:    3,
		values:     "",
		percentile: "100.000% <= 0.000 milliseconds (cumulative count 0)\n",
		cumulative: "",
		min:        math.MaxInt64, max: 0, mean: negNaN, p50: 7, p95: 7, p99: 7,
	},
	{
		// Past 16.383 ms the steps are 16 µs, past 32.767 ms 32 µs: level
		// 17100 reports 17.103 and level 33100 reports 33.119.
		name:    "above 16 ms",
		sigFigs: 3,
		values:  "50:1 17050:1 33050:1",
		percentile: `0.000% <= 0.055 milliseconds (cumulative count 1)
50.000% <= 17.055 milliseconds (cumulative count 2)
75.000% <= 33.055 milliseconds (cumulative count 3)
100.000% <= 33.055 milliseconds (cumulative count 3)
`,
		cumulative: `33.333% <= 0.103 milliseconds (cumulative count 1)
66.667% <= 17.103 milliseconds (cumulative count 2)
100.000% <= 33.119 milliseconds (cumulative count 3)
`,
		min: 48, max: 33055, mean: 0x1.0525555555555p+14, p50: 17055, p95: 33055, p99: 33055,
	},
	{
		// --precision 1: coarse steps give 0.303, 0.415, 0.511, …, 2.047,
		// 2.175, 3.199 (spec 3.4). The first line has count 0.
		name:    "precision 1",
		sigFigs: 1,
		values:  everyNth(200, 3200, 10),
		percentile: `0.000% <= 0.207 milliseconds (cumulative count 1)
50.000% <= 1.727 milliseconds (cumulative count 153)
75.000% <= 2.559 milliseconds (cumulative count 236)
87.500% <= 2.943 milliseconds (cumulative count 275)
93.750% <= 3.071 milliseconds (cumulative count 288)
96.875% <= 3.199 milliseconds (cumulative count 300)
99.805% <= 3.327 milliseconds (cumulative count 301)
100.000% <= 3.327 milliseconds (cumulative count 301)
`,
		cumulative: `0.000% <= 0.103 milliseconds (cumulative count 0)
0.332% <= 0.207 milliseconds (cumulative count 1)
3.654% <= 0.303 milliseconds (cumulative count 11)
7.309% <= 0.415 milliseconds (cumulative count 22)
10.631% <= 0.511 milliseconds (cumulative count 32)
13.621% <= 0.607 milliseconds (cumulative count 41)
16.944% <= 0.703 milliseconds (cumulative count 51)
21.262% <= 0.831 milliseconds (cumulative count 64)
24.252% <= 0.927 milliseconds (cumulative count 73)
27.575% <= 1.023 milliseconds (cumulative count 83)
31.894% <= 1.151 milliseconds (cumulative count 96)
33.887% <= 1.215 milliseconds (cumulative count 102)
38.206% <= 1.343 milliseconds (cumulative count 115)
40.199% <= 1.407 milliseconds (cumulative count 121)
44.518% <= 1.535 milliseconds (cumulative count 134)
48.837% <= 1.663 milliseconds (cumulative count 147)
50.831% <= 1.727 milliseconds (cumulative count 153)
55.150% <= 1.855 milliseconds (cumulative count 166)
57.143% <= 1.919 milliseconds (cumulative count 172)
61.462% <= 2.047 milliseconds (cumulative count 185)
65.781% <= 2.175 milliseconds (cumulative count 198)
99.668% <= 3.199 milliseconds (cumulative count 300)
100.000% <= 4.351 milliseconds (cumulative count 301)
`,
		min: 200, max: 3327, mean: 0x1.a943307a78c55p+10, p50: 1727, p95: 3071, p99: 3199,
	},
	{
		// Values above highest are recorded as highest (3 s). That bucket is
		// 2048 µs wide, so two 1000 µs levels land in it and, both having
		// count == total, the last line is printed twice.
		name:    "clamped at 3 s",
		sigFigs: 3,
		values:  "3000000:2 2999000:1 5000000:1",
		percentile: `0.000% <= 3000.319 milliseconds (cumulative count 4)
100.000% <= 3000.319 milliseconds (cumulative count 4)
`,
		cumulative: `0.000% <= 0.103 milliseconds (cumulative count 0)
100.000% <= 3000.319 milliseconds (cumulative count 4)
100.000% <= 3000.319 milliseconds (cumulative count 4)
`,
		min: 2998272, max: 3000319, mean: 0x1.6e2p+21, p50: 3000319, p95: 3000319, p99: 3000319,
	},
	{
		name:    "first cumulative line has count 0",
		sigFigs: 3,
		values:  "150:1 250:1",
		percentile: `0.000% <= 0.151 milliseconds (cumulative count 1)
75.000% <= 0.255 milliseconds (cumulative count 2)
100.000% <= 0.255 milliseconds (cumulative count 2)
`,
		cumulative: `0.000% <= 0.103 milliseconds (cumulative count 0)
50.000% <= 0.207 milliseconds (cumulative count 1)
100.000% <= 0.303 milliseconds (cumulative count 2)
`,
		min: 144, max: 255, mean: 0x1.9p+7, p50: 151, p95: 255, p99: 255,
	},
	{
		// Only zeros: hdr_max is 0 (max_value never rose above 0) ...
		name:    "zeros",
		sigFigs: 3,
		values:  "0:2",
		percentile: `0.000% <= 0.007 milliseconds (cumulative count 2)
100.000% <= 0.007 milliseconds (cumulative count 2)
`,
		cumulative: "100.000% <= 0.103 milliseconds (cumulative count 2)\n",
		min:        0, max: 0, mean: 0x1p+2, p50: 7, p95: 7, p99: 7,
	},
	{
		// ... while the same bucket holding a 5 gives hdr_max 7.
		name:    "zero and five",
		sigFigs: 3,
		values:  "0:1 5:1",
		percentile: `0.000% <= 0.007 milliseconds (cumulative count 2)
100.000% <= 0.007 milliseconds (cumulative count 2)
`,
		cumulative: "100.000% <= 0.103 milliseconds (cumulative count 2)\n",
		min:        0, max: 7, mean: 0x1p+2, p50: 7, p95: 7, p99: 7,
	},
}

func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b)
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			h := New(10, 3_000_000, tc.sigFigs)
			h.RecordValues(parseValues(t, tc.values))
			s := h.Snapshot()
			if got := formatLines(s.PercentileLines()); got != tc.percentile {
				t.Errorf("percentile block:\n%s\nwant:\n%s", got, tc.percentile)
			}
			if got := formatLines(s.CumulativeLines(100)); got != tc.cumulative {
				t.Errorf("cumulative block:\n%s\nwant:\n%s", got, tc.cumulative)
			}
			if got := s.Min(); got != tc.min {
				t.Errorf("Min = %d, want %d", got, tc.min)
			}
			if got := s.Max(); got != tc.max {
				t.Errorf("Max = %d, want %d", got, tc.max)
			}
			if got := s.Mean(); !sameFloat(got, tc.mean) {
				t.Errorf("Mean = %x, want %x", got, tc.mean)
			}
			for _, p := range []struct {
				p    float64
				want int64
			}{{50, tc.p50}, {95, tc.p95}, {99, tc.p99}} {
				if got := s.ValueAtPercentile(p.p); got != p.want {
					t.Errorf("ValueAtPercentile(%v) = %d, want %d", p.p, got, p.want)
				}
			}
		})
	}
}

// TestSummaryLine checks the float32 arithmetic redis-benchmark applies to the
// summary numbers, against the spec's sample line.
func TestSummaryLine(t *testing.T) {
	h := New(10, 3_000_000, 3)
	h.RecordValues(parseValues(t, goldenCases[0].values))
	s := h.Snapshot()
	avg := float32(s.Mean() / 1000)
	got := fmt.Sprintf("    %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f", avg,
		MillisFloat32(s.Min()), MillisFloat32(s.ValueAtPercentile(50)), MillisFloat32(s.ValueAtPercentile(95)),
		MillisFloat32(s.ValueAtPercentile(99)), MillisFloat32(s.Max()))
	want := "        0.165     0.040     0.111     0.239     2.239     4.303"
	if got != want {
		t.Errorf("summary line\n%q\nwant\n%q", got, want)
	}
}

// TestTicks compares the percentile tick sequence with glibc's: these are
// the values of C's percentile_to_iterate_to, printed with %a, for
// ticks_per_half_distance 1, up to and past the point where it reaches 100
// and then infinity.
func TestTicks(t *testing.T) {
	want := []float64{0x0p+0, 0x1.9p+5, 0x1.2cp+6, 0x1.5ep+6, 0x1.77p+6, 0x1.838p+6, 0x1.89cp+6, 0x1.8cep+6,
		0x1.8e7p+6, 0x1.8f38p+6, 0x1.8f9cp+6, 0x1.8fcep+6, 0x1.8fe7p+6, 0x1.8ff38p+6, 0x1.8ff9cp+6,
		0x1.8ffcep+6, 0x1.8ffe7p+6, 0x1.8fff38p+6, 0x1.8fff9cp+6, 0x1.8fffcep+6, 0x1.8fffe7p+6,
		0x1.8ffff38p+6, 0x1.8ffff9cp+6, 0x1.8ffffcep+6, 0x1.8ffffe7p+6, 0x1.8fffff38p+6, 0x1.8fffff9cp+6,
		0x1.8fffffcep+6, 0x1.8fffffe7p+6, 0x1.8ffffff38p+6, 0x1.8ffffff9cp+6, 0x1.8ffffffcep+6,
		0x1.8ffffffe7p+6, 0x1.8fffffff38p+6, 0x1.8fffffff9cp+6, 0x1.8fffffffcep+6, 0x1.8fffffffe7p+6,
		0x1.8ffffffff38p+6, 0x1.8ffffffff9cp+6, 0x1.8ffffffffcep+6, 0x1.8ffffffffe7p+6, 0x1.8fffffffff38p+6,
		0x1.8fffffffff9cp+6, 0x1.8fffffffffcep+6, 0x1.8fffffffffe7p+6, 0x1.8ffffffffff38p+6,
		0x1.8ffffffffff9cp+6, 0x1.8ffffffffffcep+6, 0x1.8ffffffffffe7p+6, 0x1.8fffffffffff4p+6,
		0x1.8fffffffffffap+6, 0x1.8fffffffffffdp+6, 0x1.8ffffffffffffp+6, 0x1.9p+6, math.Inf(1)}
	tick := 0.0
	for k, w := range want {
		if !sameFloat(tick, w) {
			t.Fatalf("tick %d = %x, want %x", k, tick, w)
		}
		// The spec's closed form, 100 - 100/2^k, holds up to k = 51; after
		// that the C sum rounds differently (it would take 2^51 values to
		// get there).
		if k <= 51 && !sameFloat(tick, 100-100/math.Pow(2, float64(k))) {
			t.Errorf("tick %d = %v, closed form %v", k, tick, 100-100/math.Pow(2, float64(k)))
		}
		tick = nextTick(tick, 1)
	}
}

func TestPercentileStepsUnfiltered(t *testing.T) {
	h := New(10, 3_000_000, 3)
	h.RecordValues(parseValues(t, goldenCases[1].values))
	got := h.Snapshot().PercentileSteps(1)
	want := []Line{
		{0, 23, 7}, {50, 23, 7}, {75, 55, 8}, {87.5, 71, 9}, {93.75, 3831, 10}, {100, 3831, 10},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("steps %v, want %v", got, want)
	}
}

func TestLinearSteps(t *testing.T) {
	h := New(10, 3_000_000, 3)
	h.RecordValues([]int64{150, 2500})
	s := h.Snapshot()
	// Every level is a step; the width changes after the first value above
	// 2000 (2007), and the 2100 level was already due.
	var vals []int64
	for _, l := range s.LinearSteps(100, 2000, 1000) {
		vals = append(vals, l.Value)
	}
	want := "[103 207 303 407 503 607 703 807 903 1007 1103 1207 1303 1407 1503 1607 1703 1807 1903 2007 2103 3103]"
	if fmt.Sprint(vals) != want {
		t.Errorf("levels %v, want %s", vals, want)
	}
	// Without widening, 100 µs steps all the way.
	if n := len(s.LinearSteps(100, 0, 0)); n != 25 {
		t.Errorf("%d unwidened steps, want 25", n)
	}
	if s.LinearSteps(0, 0, 0) != nil {
		t.Error("step 0 should give no steps")
	}
}

func TestCollapseUnchanged(t *testing.T) {
	in := []Line{{0, 103, 0}, {1, 207, 0}, {2, 303, 5}, {3, 407, 5}, {4, 503, 10}, {5, 607, 10}}
	got := CollapseUnchanged(in, 10)
	want := []Line{{0, 103, 0}, {2, 303, 5}, {4, 503, 10}, {5, 607, 10}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestValueAtPercentileEdges(t *testing.T) {
	h := New(10, 3_000_000, 3)
	h.RecordValues([]int64{20, 30, 40, 50})
	s := h.Snapshot()
	for _, c := range []struct {
		p    float64
		want int64
	}{
		{0, 16},    // p == 0: lowest equivalent value of the first bucket
		{1, 23},    // target (int64)(0.04+0.5) = 0, raised to 1
		{12.5, 23}, // target (int64)(0.5+0.5) = 1
		{12.6, 23}, // target (int64)(0.504+0.5) = 1
		{37.5, 31}, // target (int64)(1.5+0.5) = 2
		{62.4, 31}, // target (int64)(2.496+0.5) = 2
		{62.6, 47}, // target (int64)(2.504+0.5) = 3
		{100, 55},
		{150, 55}, // treated as 100
	} {
		if got := s.ValueAtPercentile(c.p); got != c.want {
			t.Errorf("ValueAtPercentile(%v) = %d, want %d", c.p, got, c.want)
		}
	}
}

func TestMillisFloat32(t *testing.T) {
	for _, c := range []struct {
		us   int64
		want string
	}{{23, "0.023"}, {3831, "3.831"}, {17103, "17.103"}, {33119, "33.119"}, {3000319, "3000.319"}, {0, "0.000"}} {
		if got := fmt.Sprintf("%.3f", MillisFloat32(c.us)); got != c.want {
			t.Errorf("MillisFloat32(%d) printed %s, want %s", c.us, got, c.want)
		}
	}
	// The conversion really is float32: 3831 µs is 3.8310000896… ms.
	if MillisFloat32(3831) == 3.831 {
		t.Error("MillisFloat32 should round through float32")
	}
}
