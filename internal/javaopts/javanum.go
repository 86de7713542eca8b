package javaopts

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// NumberFormatError is the Go side of java.lang.NumberFormatException; its
// message is the JDK's, for example `For input string: "abc"` or
// `empty String`.
type NumberFormatError struct{ Msg string }

func (e *NumberFormatError) Error() string { return e.Msg }

func forInputString(s string) error {
	return &NumberFormatError{Msg: `For input string: "` + s + `"`}
}

// javaDigit is Character.digit(r, 10): ASCII digits and every other Unicode
// decimal digit (Nd), which come in runs of ten starting at zero.
func javaDigit(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if r < 0x80 || !unicode.Is(unicode.Nd, r) {
		return -1
	}
	start := r
	for unicode.Is(unicode.Nd, start-1) {
		start--
	}
	return int(r-start) % 10
}

// parseJavaIntegral is Long.parseLong / Integer.parseInt in radix 10:
// an optional '+' or '-', then at least one digit, no spaces, no overflow.
func parseJavaIntegral(s string, min, max int64) (int64, error) {
	rs := []rune(s)
	if len(rs) == 0 {
		return 0, forInputString(s)
	}
	neg := false
	i := 0
	if rs[0] == '+' || rs[0] == '-' {
		neg = rs[0] == '-'
		i = 1
		if len(rs) == 1 {
			return 0, forInputString(s)
		}
	}
	// Accumulate negatively, as the JDK does, so that min fits.
	var v int64
	for ; i < len(rs); i++ {
		d := int64(javaDigit(rs[i]))
		if d < 0 || v < min/10 {
			return 0, forInputString(s)
		}
		v *= 10
		if v < min+d {
			return 0, forInputString(s)
		}
		v -= d
	}
	if !neg {
		if v < -max {
			return 0, forInputString(s)
		}
		v = -v
	}
	return v, nil
}

// ParseJavaLong parses s as java.lang.Long.valueOf does.
func ParseJavaLong(s string) (int64, error) {
	return parseJavaIntegral(s, math.MinInt64, math.MaxInt64)
}

// ParseJavaInt parses s as java.lang.Integer.valueOf does.
func ParseJavaInt(s string) (int32, error) {
	v, err := parseJavaIntegral(s, math.MinInt32, math.MaxInt32)
	return int32(v), err
}

var javaDoubleSyntax = regexp.MustCompile(`^[+-]?(?:NaN|Infinity|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)$`)

// ParseJavaDouble parses s as java.lang.Double.valueOf does: surrounding
// characters up to U+0020 are trimmed; decimal and hexadecimal forms, NaN
// and Infinity are accepted, with an optional f/F/d/D suffix on numbers.
// Out-of-range values become ±Infinity or zero, as in Java.
func ParseJavaDouble(s string) (float64, error) {
	t := strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if t == "" {
		return 0, &NumberFormatError{Msg: "empty String"}
	}
	if !javaDoubleSyntax.MatchString(t) {
		return 0, forInputString(t)
	}
	body := t
	if strings.ContainsRune("fFdD", rune(body[len(body)-1])) {
		body = body[:len(body)-1] // the type suffix; NaN and Infinity take none
	}
	neg := strings.HasPrefix(body, "-")
	unsigned := strings.TrimLeft(body, "+-")
	switch unsigned {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		if neg {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	}
	v, err := strconv.ParseFloat(body, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, forInputString(t)
	}
	return v, nil
}
