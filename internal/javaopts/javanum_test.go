package javaopts

import (
	"math"
	"testing"
)

// Expectations from JDK 17's Long.valueOf, Integer.valueOf and
// Double.valueOf; "" as the error means success.
func TestParseJavaNumbers(t *testing.T) {
	const forInput = `For input string: "`
	for _, c := range []struct {
		in           string
		long         int64
		longErr      string
		integer      int32
		intErr       string
		double       float64
		doubleErr    string
		doubleIsNaN  bool
		doubleSigned bool // -0.0
	}{
		{in: "", longErr: forInput + `"`, intErr: forInput + `"`, doubleErr: "empty String"},
		{in: "abc", longErr: forInput + `abc"`, intErr: forInput + `abc"`, doubleErr: forInput + `abc"`},
		{in: "1", long: 1, integer: 1, double: 1},
		{in: "+1", long: 1, integer: 1, double: 1},
		{in: "-1", long: -1, integer: -1, double: -1},
		{in: "+", longErr: forInput + `+"`, intErr: forInput + `+"`, doubleErr: forInput + `+"`},
		{in: "9223372036854775807", long: math.MaxInt64, intErr: forInput + `9223372036854775807"`, double: 9223372036854775807},
		{in: "9223372036854775808", longErr: forInput + `9223372036854775808"`, intErr: forInput + `9223372036854775808"`, double: 9223372036854775808},
		{in: "-9223372036854775808", long: math.MinInt64, intErr: forInput + `-9223372036854775808"`, double: -9223372036854775808},
		{in: "2147483648", long: 2147483648, intErr: forInput + `2147483648"`, double: 2147483648},
		{in: "-2147483648", long: -2147483648, integer: math.MinInt32, double: -2147483648},
		{in: "1.5", longErr: forInput + `1.5"`, intErr: forInput + `1.5"`, double: 1.5},
		{in: "1e5", longErr: forInput + `1e5"`, intErr: forInput + `1e5"`, double: 1e5},
		{in: ".5", longErr: forInput + `.5"`, intErr: forInput + `.5"`, double: .5},
		{in: "5.", longErr: forInput + `5."`, intErr: forInput + `5."`, double: 5},
		{in: ".", longErr: forInput + `."`, intErr: forInput + `."`, doubleErr: forInput + `."`},
		{in: "1e", longErr: forInput + `1e"`, intErr: forInput + `1e"`, doubleErr: forInput + `1e"`},
		{in: "1.5f", longErr: forInput + `1.5f"`, intErr: forInput + `1.5f"`, double: 1.5},
		{in: "0x1.8p1", longErr: forInput + `0x1.8p1"`, intErr: forInput + `0x1.8p1"`, double: 3},
		{in: "0X1P1d", longErr: forInput + `0X1P1d"`, intErr: forInput + `0X1P1d"`, double: 2},
		{in: "0x10", longErr: forInput + `0x10"`, intErr: forInput + `0x10"`, doubleErr: forInput + `0x10"`},
		{in: "NaN", longErr: forInput + `NaN"`, intErr: forInput + `NaN"`, doubleIsNaN: true},
		{in: "-Infinity", longErr: forInput + `-Infinity"`, intErr: forInput + `-Infinity"`, double: math.Inf(-1)},
		{in: "inf", longErr: forInput + `inf"`, intErr: forInput + `inf"`, doubleErr: forInput + `inf"`},
		{in: "Infinityf", longErr: forInput + `Infinityf"`, intErr: forInput + `Infinityf"`, doubleErr: forInput + `Infinityf"`},
		{in: " 1.5 ", longErr: forInput + ` 1.5 "`, intErr: forInput + ` 1.5 "`, double: 1.5},
		{in: " ", longErr: forInput + ` "`, intErr: forInput + ` "`, doubleErr: "empty String"},
		{in: " abc ", longErr: forInput + ` abc "`, intErr: forInput + ` abc "`, doubleErr: forInput + `abc"`},
		{in: "1_000", longErr: forInput + `1_000"`, intErr: forInput + `1_000"`, doubleErr: forInput + `1_000"`},
		{in: "١٢", long: 12, integer: 12, doubleErr: forInput + `١٢"`},
		{in: "１２", long: 12, integer: 12, doubleErr: forInput + `１２"`},
		{in: "1e400", longErr: forInput + `1e400"`, intErr: forInput + `1e400"`, double: math.Inf(1)},
		{in: "1e-400", longErr: forInput + `1e-400"`, intErr: forInput + `1e-400"`, double: 0},
		{in: "-0", long: 0, integer: 0, double: 0, doubleSigned: true},
		{in: "00012", long: 12, integer: 12, double: 12},
		{in: "++1", longErr: forInput + `++1"`, intErr: forInput + `++1"`, doubleErr: forInput + `++1"`},
	} {
		l, err := ParseJavaLong(c.in)
		if msg := errText(err); msg != c.longErr || (err == nil && l != c.long) {
			t.Errorf("ParseJavaLong(%q) = %d, %q; want %d, %q", c.in, l, msg, c.long, c.longErr)
		}
		i, err := ParseJavaInt(c.in)
		if msg := errText(err); msg != c.intErr || (err == nil && i != c.integer) {
			t.Errorf("ParseJavaInt(%q) = %d, %q; want %d, %q", c.in, i, msg, c.integer, c.intErr)
		}
		d, err := ParseJavaDouble(c.in)
		msg := errText(err)
		ok := msg == c.doubleErr
		if err == nil {
			switch {
			case c.doubleIsNaN:
				ok = ok && math.IsNaN(d)
			default:
				ok = ok && d == c.double && (d != 0 || math.Signbit(d) == c.doubleSigned)
			}
		}
		if !ok {
			t.Errorf("ParseJavaDouble(%q) = %v, %q; want %v, %q", c.in, d, msg, c.double, c.doubleErr)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
