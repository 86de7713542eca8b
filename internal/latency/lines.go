package latency

import "math"

// Line is one step of a distribution report.
type Line struct {
	// Percent is the percentile iterator's tick (0, 50, 75, 87.5, …, then
	// 100) in a percentile block, or cumulative count / total × 100 in a
	// cumulative block.
	Percent float64
	// Value is the highest equivalent value of the bucket the step stopped
	// on (e.g. 103 for the 96-103 µs bucket): "at most Value".
	Value int64
	// Count is the cumulative count through that bucket.
	Count int64
}

// cursor is the state HdrHistogram_c's struct hdr_iter keeps that the
// percentile and linear iterators read: the index walked to, its count, the
// cumulative count through it, and its lowest and highest equivalent values.
// Before the first move the index is -1 and everything else is 0, which is
// what an iterator reports if it stops before moving (the empty histogram's
// "100% <= 0").
type cursor struct {
	s         *Snapshot
	idx       int32
	count     int64
	cum       int64
	value     int64
	highestEq int64
}

func newCursor(s *Snapshot) cursor { return cursor{s: s, idx: -1} }

func (c *cursor) countsLen() int32 { return int32(len(c.s.counts)) }

// hasNext is has_next: not every recorded value has been walked past yet.
func (c *cursor) hasNext() bool { return c.cum < c.s.total }

// moveNext is move_next: step to the next index, false past the end.
func (c *cursor) moveNext() bool {
	c.idx++
	if c.idx >= c.countsLen() {
		return false
	}
	c.count = c.s.counts[c.idx]
	c.cum += c.count
	c.value = c.s.geo.valueAtIndex(c.idx)
	c.highestEq = c.s.geo.highestEquivalent(c.value)
	return true
}

// basicNext is basic_iter_next: move only while values remain.
func (c *cursor) basicNext() bool {
	if !c.hasNext() || c.idx >= c.countsLen() {
		return false
	}
	c.moveNext()
	return true
}

// nextValueAbove is next_value_greater_than_reporting_level_upper_bound.
func (c *cursor) nextValueAbove(bound int64) bool {
	if c.idx >= c.countsLen() {
		return false
	}
	return c.s.geo.valueAtIndex(c.idx+1) > bound
}

func (c *cursor) line(pct float64) Line {
	return Line{Percent: pct, Value: c.highestEq, Count: c.cum}
}

// PercentileSteps returns every step of HdrHistogram_c's percentile iterator
// (hdr_iter_percentile_init with ticksPerHalfDistance), unfiltered.
//
// Ticks start at 0. At each tick the iterator stays on, or walks forward to,
// the first non-empty index whose 100·cum/total reaches the tick, and reports
// that index; the next tick is t + 100/(ticks·2^(trunc(log2(100/(100-t)))+1)).
// With ticksPerHalfDistance 1 that is 0, 50, 75, 87.5, …, 100-100/2^k, so
// several ticks can report the same index. Once every value has been walked
// past, one last step repeats the index with Percent 100. An empty histogram
// gives a single step {100, 0, 0}.
func (s *Snapshot) PercentileSteps(ticksPerHalfDistance int32) []Line {
	if ticksPerHalfDistance < 1 {
		ticksPerHalfDistance = 1
	}
	c := newCursor(s)
	var (
		out      []Line
		target   = 0.0 // percentile_to_iterate_to
		pct      = 0.0 // percentile (last reported tick)
		seenLast = false
	)
	for {
		// One call of percentile_iter_next.
		if !c.hasNext() {
			if seenLast {
				return out
			}
			seenLast = true
			pct = 100.0
			out = append(out, c.line(pct))
			continue
		}
		if c.idx == -1 && !c.basicNext() {
			return out
		}
		reported := false
		for {
			cur := (100.0 * float64(c.cum)) / float64(s.total)
			if c.count != 0 && target <= cur {
				pct = target
				target = nextTick(target, ticksPerHalfDistance)
				reported = true
				break
			}
			if !c.basicNext() {
				break
			}
		}
		// C returns true here even when it ran out of indices without
		// reaching the tick, reporting the stale percentile.
		out = append(out, c.line(pct))
		if !reported && c.hasNext() {
			// Only possible if the counts did not add up to the total; C
			// would loop forever.
			return out
		}
	}
}

// nextTick is the percentile iterator's step from tick t: the distance to
// 100 is halved every ticksPerHalfDistance ticks. It is computed with the same
// operations as C (log, pow, truncating casts), which Go's math package
// reproduces bit for bit here; the sequence for ticksPerHalfDistance 1 is
// checked against glibc's in the tests.
func nextTick(t float64, ticksPerHalfDistance int32) float64 {
	temp := cInt64(math.Log(100/(100.0-t))/math.Log(2)) + 1
	halfDistance := cInt64(math.Pow(2, float64(temp)))
	return t + 100.0/float64(int64(ticksPerHalfDistance)*halfDistance)
}

// LinearSteps returns every step of HdrHistogram_c's linear iterator
// (hdr_iter_linear_init with step), unfiltered, where, as redis-benchmark
// does with hdr_iter_linear_set_value_units_per_bucket, the step becomes
// widenedStep after the first step whose value exceeds widenAbove
// (widenedStep <= 0 never widens).
//
// The reporting level L starts at step. Each step walks forward until the
// index's lowest value reaches lowest_equiv(L), reports that index and its
// cumulative count, then adds the current step to L. The widening applies to
// the level after next, because L has already advanced when the step is
// reported: with 100/2000/1000 the levels are 100, 200, …, 2000, 2100, 3100,
// 4100, …. Steps continue after the last value while the level still falls
// within the last index walked to, so the last step is the first level at or
// above the maximum, and where an index is wider than the step (above about
// 1 s with 3 significant figures) the same index can be reported twice.
// An empty histogram has no steps; step <= 0 gives none either (C would loop
// forever).
func (s *Snapshot) LinearSteps(step, widenAbove, widenedStep int64) []Line {
	if step <= 0 {
		return nil
	}
	c := newCursor(s)
	var out []Line
	units := step
	level := step
	levelLowest := s.geo.lowestEquivalent(level)
	for c.hasNext() || c.nextValueAbove(levelLowest) {
		// One call of iter_linear_next.
		for {
			if c.value >= levelLowest {
				level += units
				levelLowest = s.geo.lowestEquivalent(level)
				break
			}
			if !c.moveNext() {
				break // C reports the last index again
			}
		}
		out = append(out, c.line(float64(c.cum)/float64(s.total)*100.0))
		if widenedStep > 0 && c.highestEq > widenAbove {
			units = widenedStep
		}
	}
	return out
}

// CollapseUnchanged applies the printing rule redis-benchmark uses for both
// blocks: a step is kept when its cumulative count differs from the previous
// step's (kept or not), or equals total. The first step is therefore always
// kept, even with count 0.
func CollapseUnchanged(steps []Line, total int64) []Line {
	var out []Line
	prev := int64(-1)
	for _, l := range steps {
		if l.Count != prev || l.Count == total {
			out = append(out, l)
		}
		prev = l.Count
	}
	return out
}

// PercentileLines is the "Latency by percentile distribution" block of
// redis-benchmark: PercentileSteps(1) with the printing rule applied. It ends
// with the last tick's line and then a 100% line for the same bucket; an
// empty histogram gives just {100, 0, 0}.
func (s *Snapshot) PercentileLines() []Line {
	return CollapseUnchanged(s.PercentileSteps(1), s.total)
}

// CumulativeLines is the "Cumulative distribution of latencies" block of
// redis-benchmark (values in µs): linear steps of step (redis-benchmark passes
// 100) that widen to 1000 after the first line above 2000, with the printing
// rule applied. The first line is always there, even with count 0; an empty
// histogram gives no lines.
func (s *Snapshot) CumulativeLines(step int64) []Line {
	return CollapseUnchanged(s.LinearSteps(step, 2000, 1000), s.total)
}
