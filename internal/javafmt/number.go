package javafmt

import (
	"math"
	"strconv"
	"strings"
)

// decimal is a finite, non-negative double as Java's FloatingDecimal hands
// it to Formatter: significant digits d1d2...dn (no leading zero; "0" for
// zero) and an exponent e such that the value is 0.d1d2...dn × 10^e.
type decimal struct {
	digits []byte
	exp    int
}

// JDK selects which JDK's choice of decimal digits to reproduce. Java's
// Formatter (%f, %.Nf) and Double.toString both start from a decimal digit
// string for the double and then round or lay it out; the JDKs differ in
// that digit string in rare cases.
type JDK int

const (
	// JDK17 reproduces the FloatingDecimal digits of JDK 8 to 18
	// (Double.toString) and 8 to 20 (Formatter): the shortest digits that
	// read back as the double, except for integer values in [2^54, 2^63),
	// whose digits are the exact integer rounded half-up at 10^k, k = 0 to
	// 2 by magnitude (so 2^60 gives "1152921504606846980.00" with %.2f,
	// where the shortest digits give "1152921504606847000.00"). At and
	// above 2^63 JDK 17 sometimes prints more digits than the shortest
	// (9.999999999999999E22 for 1e23); that case is not reproduced.
	JDK17 JDK = 17
	// JDK21 reproduces JDK 19+ Double.toString and JDK 21+ Formatter
	// (Raffaello Giulietti's algorithm): always the shortest digits.
	JDK21 JDK = 21
)

// digitsOf returns the decimal digits the chosen JDK formats x (≥ 0,
// finite) from.
func (j JDK) digitsOf(x float64) decimal {
	if j < JDK21 && x >= 1<<54 && x < 1<<63 && x == math.Trunc(x) {
		return longDigits(x)
	}
	return shortest(x)
}

// longDigits is FloatingDecimal's path for integer values below 2^63: the
// exact integer, rounded half-up to a multiple of 10^k where k is
// floor((e-54)·log10 2) for a binary exponent e of at least 56, else 0.
func longDigits(x float64) decimal {
	_, e2 := math.Frexp(x) // x = f·2^e2, 0.5 ≤ f < 1
	binExp := e2 - 1
	k := 0
	if p2 := binExp - 54; p2 > 1 {
		k = int(float64(p2) * math.Log10(2))
	}
	v := uint64(x)
	exp := 0
	if k > 0 {
		pow := uint64(math.Pow10(k))
		rem := v % pow
		v /= pow
		if rem >= pow/2 {
			v++
		}
		exp = k
	}
	s := strconv.FormatUint(v, 10)
	exp += len(s)
	s = strings.TrimRight(s, "0")
	return decimal{digits: []byte(s), exp: exp}
}

// shortest returns the shortest decimal that reads back as x (x ≥ 0,
// finite); among several, the one closest to x.
func shortest(x float64) decimal {
	if x == 0 {
		return decimal{digits: []byte{'0'}, exp: 1}
	}
	return parseE(strconv.FormatFloat(x, 'e', -1, 64))
}

// parseE reads strconv's "d.ddde±XX" form.
func parseE(s string) decimal {
	mant, expPart, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(expPart)
	digits := []byte(strings.TrimRight(strings.Replace(mant, ".", "", 1), "0"))
	if len(digits) == 0 {
		digits = []byte{'0'}
	}
	return decimal{digits: digits, exp: e + 1}
}

// Fixed is JDK17.Fixed.
func Fixed(x float64, prec int) string { return JDK17.Fixed(x, prec) }

// DoubleToString is JDK17.DoubleToString.
func DoubleToString(x float64) string { return JDK17.DoubleToString(x) }

// Fixed formats x as Java's String.format("%.<prec>f", x) does in the ROOT
// (or any English) locale: HALF_UP rounding of the shortest decimal
// representation, never an exponent, "NaN", "Infinity" and "-Infinity" for
// the special values, and a minus sign for every negative value, negative
// zero and values that round to zero included ("-0.00"). Fixed(x, 6) is %f.
func (j JDK) Fixed(x float64, prec int) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	}
	if prec < 0 {
		prec = 6
	}
	neg := math.Signbit(x)
	d := j.digitsOf(math.Abs(x))
	d = d.round(d.exp + prec)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	// Integer part.
	if d.exp <= 0 {
		b.WriteByte('0')
	} else {
		for i := 0; i < d.exp; i++ {
			b.WriteByte(d.digit(i))
		}
	}
	if prec > 0 {
		b.WriteByte('.')
		for i := 0; i < prec; i++ {
			b.WriteByte(d.digit(d.exp + i))
		}
	}
	return b.String()
}

// digit returns the i-th digit after the decimal point's origin: digit(0)
// is the first digit of the integer part when exp is 1, and digits before
// the first significant one or past the last are zeros.
func (d decimal) digit(i int) byte {
	// Position i counts from the most significant place of 10^(exp-1).
	if i < 0 || i >= len(d.digits) {
		return '0'
	}
	return d.digits[i]
}

// round keeps the first n significant digits, rounding HALF_UP on the
// decimal digits (FormattedFloatingDecimal.applyPrecision). n < 0 means the
// rounding place is left of the first digit, which keeps the value as is
// (it prints as zeros); n == 0 rounds to 0 or to one unit of 10^exp.
func (d decimal) round(n int) decimal {
	if n >= len(d.digits) || n < 0 {
		return d
	}
	if n == 0 {
		if d.digits[0] >= '5' {
			return decimal{digits: []byte{'1'}, exp: d.exp + 1}
		}
		return decimal{digits: []byte{'0'}, exp: d.exp}
	}
	out := append([]byte(nil), d.digits[:n]...)
	if d.digits[n] >= '5' {
		i := n - 1
		for ; i >= 0; i-- {
			if out[i] == '9' {
				out[i] = '0'
				continue
			}
			out[i]++
			break
		}
		if i < 0 {
			return decimal{digits: append([]byte{'1'}, out...), exp: d.exp + 1}
		}
	}
	return decimal{digits: out, exp: d.exp}
}

// DoubleToString is Java's Double.toString(x): "NaN", "Infinity",
// "-Infinity", "0.0", "-0.0"; plain notation with at least one fraction
// digit for 10^-3 ≤ |x| < 10^7 ("100.0", "0.001"); otherwise computerized
// scientific notation ("1.0E7", "1.234E-5").
func (j JDK) DoubleToString(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	}
	sign := ""
	if math.Signbit(x) {
		sign = "-"
	}
	a := math.Abs(x)
	if a == 0 {
		return sign + "0.0"
	}
	d := j.digitsOf(a)
	if len(d.digits) == 1 {
		// Both JDKs print at least two significant digits when that is
		// closer to x: 4.9E-324, not 5.0E-324.
		if two := parseE(strconv.FormatFloat(a, 'e', 1, 64)); len(two.digits) == 2 {
			d = two
		}
	}
	ds := string(d.digits)
	if a >= 1e-3 && a < 1e7 {
		var intPart, frac string
		switch {
		case d.exp <= 0:
			intPart, frac = "0", strings.Repeat("0", -d.exp)+ds
		case d.exp >= len(ds):
			intPart, frac = ds+strings.Repeat("0", d.exp-len(ds)), "0"
		default:
			intPart, frac = ds[:d.exp], ds[d.exp:]
		}
		return sign + intPart + "." + frac
	}
	frac := ds[1:]
	if frac == "" {
		frac = "0"
	}
	return sign + ds[:1] + "." + frac + "E" + strconv.Itoa(d.exp-1)
}
