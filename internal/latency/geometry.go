package latency

import (
	"math"
	"math/bits"
)

// geometry is the bucket layout shared by HdrHistogram_c and hdrhistogram-go.
// Index i of the counts array holds the values [valueAtIndex(i),
// valueAtIndex(i)+step). Bucket 0 covers [0, subCount<<unitMag) in steps of
// 1<<unitMag; bucket k >= 1 covers [halfCount<<(unitMag+k), subCount<<(unitMag+k))
// in steps of 1<<(unitMag+k). With lowest 10 and 3 significant figures:
// 0-16383 in steps of 8, 16384-32767 in steps of 16, and so on.
type geometry struct {
	unitMag   int64 // floor(log2(lowest))
	halfMag   int32 // log2(halfCount)
	subCount  int32 // 2^ceil(log2(2*10^sigFigs))
	halfCount int32
	subMask   int64
	countsLen int32
}

// newGeometry computes the layout the way hdrhistogram-go's New does (which is
// also HdrHistogram_c's hdr_calculate_bucket_config: both agree on every
// lowest value, including powers of two, where C's log(x)/log(2) is exact with
// glibc).
func newGeometry(lowest, highest int64, sigFigs int) geometry {
	largestSingleUnit := 2 * math.Pow10(sigFigs)
	subCountMag := int32(math.Ceil(math.Log2(largestSingleUnit)))
	halfMag := max(subCountMag, 1) - 1
	unitMag := max(int64(math.Floor(math.Log2(float64(lowest)))), 0)
	subCount := int32(1) << (halfMag + 1)
	g := geometry{
		unitMag:   unitMag,
		halfMag:   halfMag,
		subCount:  subCount,
		halfCount: subCount / 2,
		subMask:   int64(subCount-1) << unitMag,
	}
	// buckets_needed_to_cover_value
	smallestUntrackable := int64(subCount) << unitMag
	buckets := int32(1)
	for smallestUntrackable <= highest {
		if smallestUntrackable > math.MaxInt64/2 {
			buckets++
			break
		}
		smallestUntrackable <<= 1
		buckets++
	}
	g.countsLen = (buckets + 1) * g.halfCount
	return g
}

func (g *geometry) bucketIndex(v int64) int32 {
	pow2Ceiling := int64(64 - bits.LeadingZeros64(uint64(v|g.subMask)))
	return int32(pow2Ceiling - g.unitMag - int64(g.halfMag+1))
}

func (g *geometry) subBucketIndex(v int64, bucket int32) int32 {
	return int32(v >> (int64(bucket) + g.unitMag))
}

// countsIndex is the index of the counts array that holds v.
func (g *geometry) countsIndex(v int64) int32 {
	b := g.bucketIndex(v)
	sb := g.subBucketIndex(v, b)
	return (b+1)<<g.halfMag + sb - g.halfCount
}

// valueAtIndex is hdr_value_at_index: the lowest value held by counts index i.
// It is also defined for i == countsLen, which the C linear iterator peeks at.
func (g *geometry) valueAtIndex(i int32) int64 {
	b := (i >> g.halfMag) - 1
	sb := (i & (g.halfCount - 1)) + g.halfCount
	if b < 0 {
		sb -= g.halfCount
		b = 0
	}
	return int64(sb) << (int64(b) + g.unitMag)
}

// rangeSize is hdr_size_of_equivalent_value_range.
func (g *geometry) rangeSize(v int64) int64 {
	b := g.bucketIndex(v)
	if g.subBucketIndex(v, b) >= g.subCount {
		b++
	}
	return int64(1) << (g.unitMag + int64(b))
}

// lowestEquivalent rounds v down to the start of its step.
func (g *geometry) lowestEquivalent(v int64) int64 {
	b := g.bucketIndex(v)
	return int64(g.subBucketIndex(v, b)) << (int64(b) + g.unitMag)
}

// highestEquivalent is the last value of v's step.
func (g *geometry) highestEquivalent(v int64) int64 {
	return g.lowestEquivalent(v) + g.rangeSize(v) - 1
}

// medianEquivalent is the middle of v's step (lowest + step/2).
func (g *geometry) medianEquivalent(v int64) int64 {
	return g.lowestEquivalent(v) + g.rangeSize(v)>>1
}
