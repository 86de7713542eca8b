package latency

import "math"

// Snapshot is an immutable copy of a Histogram, safe to share between
// goroutines. Its methods reproduce HdrHistogram_c (the version vendored in
// Redis 7.x) exactly, including what it returns for an empty histogram.
type Snapshot struct {
	lowest, highest int64
	sigFigs         int
	geo             geometry
	counts          []int64
	total           int64
	max             int64 // raw maximum recorded (HdrHistogram_c's max_value), 0 if none
}

// TotalCount is the number of recorded values.
func (s *Snapshot) TotalCount() int64 { return s.total }

// Lowest is the lowest discernible value the histogram was created with.
func (s *Snapshot) Lowest() int64 { return s.lowest }

// Highest is the largest value recorded as itself; larger ones were recorded as Highest.
func (s *Snapshot) Highest() int64 { return s.highest }

// SignificantFigures is the precision the histogram was created with.
func (s *Snapshot) SignificantFigures() int { return s.sigFigs }

// Min is hdr_min: 0 if anything was recorded in index 0 (values below the
// first step, 0-7 with lowest 10), otherwise the lowest equivalent value of
// the smallest recorded value. For an empty histogram it is math.MaxInt64,
// as in C (redis-benchmark would print that divided by 1000 as a float).
func (s *Snapshot) Min() int64 {
	if len(s.counts) > 0 && s.counts[0] > 0 {
		return 0
	}
	// C keeps the smallest non-zero value recorded and returns its lowest
	// equivalent value; with index 0 empty, that is the value of the first
	// non-empty index.
	for i, c := range s.counts {
		if c != 0 {
			return s.geo.valueAtIndex(int32(i))
		}
	}
	return math.MaxInt64
}

// Max is hdr_max: the highest equivalent value of the largest recorded value,
// or 0 when nothing but zeros (or nothing at all) was recorded.
func (s *Snapshot) Max() int64 {
	if s.max == 0 {
		return 0
	}
	return s.geo.highestEquivalent(s.max)
}

// negNaN is the NaN that x86-64 produces for 0.0/0.0 (sign bit set), which
// glibc prints as "-nan".
var negNaN = math.Float64frombits(0xFFF8000000000000)

// Mean is hdr_mean: the sum of count × median equivalent value over all
// indices (in int64, as C does), divided by the total count as a double.
//
// For an empty histogram C computes 0.0/0 and gets NaN; on x86-64 that NaN has
// its sign bit set and glibc prints it as "-nan" (redis-benchmark's
// "avg_msec=-nan"). Mean returns that same negative NaN, so a formatter can
// test math.IsNaN and math.Signbit to print it the C way.
func (s *Snapshot) Mean() float64 {
	if s.total == 0 {
		return negNaN
	}
	var sum int64
	for i, c := range s.counts {
		if c != 0 {
			sum += c * s.geo.medianEquivalent(s.geo.valueAtIndex(int32(i)))
		}
	}
	return float64(sum) / float64(s.total)
}

// ValueAtPercentile is hdr_value_at_percentile (p in [0, 100]; larger is
// treated as 100). The target count is (int64)(p/100 × total + 0.5), at
// least 1; the result is the highest equivalent value of the first index
// whose cumulative count reaches it, or the lowest equivalent value when
// p == 0.
//
// For an empty histogram no index reaches the target, so C falls back to the
// value 0 and returns its highest equivalent value: 2^unit_magnitude - 1
// (7 with lowest 10) for p > 0, and 0 for p == 0.
func (s *Snapshot) ValueAtPercentile(p float64) int64 {
	req := 100.0
	if p < 100.0 {
		req = p
	}
	target := cInt64((req/100)*float64(s.total) + 0.5)
	if target < 1 {
		target = 1
	}
	var v, cum int64
	for i, c := range s.counts {
		cum += c
		if cum >= target {
			v = s.geo.valueAtIndex(int32(i))
			break
		}
	}
	if p == 0.0 {
		return s.geo.lowestEquivalent(v)
	}
	return s.geo.highestEquivalent(v)
}

// cInt64 converts like C's (int64_t) cast of a double compiles on x86-64
// (cvttsd2si): truncation toward zero, and INT64_MIN for NaN and for values
// out of range. Go's own conversion leaves those cases implementation
// specific (arm64 saturates), so the iterators use this to stay identical to
// the C code on every platform.
func cInt64(f float64) int64 {
	if f != f || f >= 9223372036854775807.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// MillisFloat32 converts a microsecond value to milliseconds the way C code
// written as `value / 1000.0f` does: the integer becomes a float32, the
// division is in float32, and the result is widened to double for printf.
// redis-benchmark prints every latency this way, so, for example, 3831 µs
// prints as 3.831 and 3000319 µs as 3000.319.
func MillisFloat32(us int64) float64 {
	return float64(float32(us) / 1000)
}
