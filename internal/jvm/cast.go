package jvm

import "math"

// DoubleToLong is Java's (long) cast of a double: toward zero, NaN to 0,
// saturated at the long range.
func DoubleToLong(x float64) int64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	return int64(x)
}

// DoubleToInt is Java's (int) cast of a double (Double.intValue): toward
// zero, NaN to 0, saturated at the int range.
func DoubleToInt(x float64) int32 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt32:
		return math.MaxInt32
	case x <= math.MinInt32:
		return math.MinInt32
	}
	return int32(x)
}
