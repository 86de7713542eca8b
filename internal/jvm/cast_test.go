package jvm

import (
	"math"
	"testing"
)

func TestDoubleCasts(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		long int64
		int  int32
	}{
		{1.9, 1, 1},
		{-1.9, -1, -1},
		{math.NaN(), 0, 0},
		{math.Inf(1), math.MaxInt64, math.MaxInt32},
		{math.Inf(-1), math.MinInt64, math.MinInt32},
		{3e9, 3_000_000_000, math.MaxInt32},
		{-3e9, -3_000_000_000, math.MinInt32},
		{1e19, math.MaxInt64, math.MaxInt32},
	} {
		if got := DoubleToLong(tc.in); got != tc.long {
			t.Errorf("DoubleToLong(%v) = %d, want %d", tc.in, got, tc.long)
		}
		if got := DoubleToInt(tc.in); got != tc.int {
			t.Errorf("DoubleToInt(%v) = %d, want %d", tc.in, got, tc.int)
		}
	}
}
