package javafmt

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// DefaultDatePattern is the Kafka consumer perf tool's default
// --date-format.
const DefaultDatePattern = "yyyy-MM-dd HH:mm:ss:SSS"

// DateFormat is a compiled java.text.SimpleDateFormat pattern, formatting
// in English (the JVM's ROOT/en locale): month and day names, AM/PM, and
// plain digits without grouping.
type DateFormat struct {
	fields []dateField
}

// dateField is a run of one pattern letter (letter != 0), or literal text.
type dateField struct {
	letter byte
	count  int
	text   string
}

// patternLetters are the letters SimpleDateFormat knows; any other ASCII
// letter outside quotes is an error.
const patternLetters = "GyMdkHmsSEDFwWahKzZYuXL"

// NewDateFormat compiles pattern as new SimpleDateFormat(pattern) does. The
// error text is the message of the IllegalArgumentException Java throws:
// "Illegal pattern character 'q'", "Unterminated quote", or
// "invalid ISO 8601 format: length=4" for XXXX.
func NewDateFormat(pattern string) (*DateFormat, error) {
	var f DateFormat
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			f.fields = append(f.fields, dateField{text: lit.String()})
			lit.Reset()
		}
	}
	p := pattern
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			if i+1 < len(p) && p[i+1] == '\'' {
				lit.WriteByte('\'')
				i += 2
				continue
			}
			// Quoted text up to the closing quote; '' inside is a quote.
			i++
			closed := false
			for i < len(p) {
				if p[i] == '\'' {
					if i+1 < len(p) && p[i+1] == '\'' {
						lit.WriteByte('\'')
						i += 2
						continue
					}
					i++
					closed = true
					break
				}
				lit.WriteByte(p[i])
				i++
			}
			if !closed {
				return nil, errors.New("Unterminated quote")
			}
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if !strings.ContainsRune(patternLetters, rune(c)) {
				return nil, errors.New("Illegal pattern character '" + string(c) + "'")
			}
			n := 1
			for i+n < len(p) && p[i+n] == c {
				n++
			}
			if c == 'X' && n > 3 {
				return nil, errors.New("invalid ISO 8601 format: length=" + strconv.Itoa(n))
			}
			flush()
			f.fields = append(f.fields, dateField{letter: c, count: n})
			i += n
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return &f, nil
}

// FormatDate formats t, in t's location, with a SimpleDateFormat pattern;
// see DateFormat. An invalid pattern, which Java rejects when the format is
// created (see NewDateFormat), formats as "".
func FormatDate(t time.Time, pattern string) string {
	f, err := NewDateFormat(pattern)
	if err != nil {
		return ""
	}
	return f.Format(t)
}

var (
	longMonths  = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	longDays    = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	shortMonths = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	shortDays   = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
)

// pad is zeroPaddingNumber: at least n digits, a '-' before negatives.
func pad(v, n int) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := strconv.Itoa(v)
	if len(s) < n {
		s = strings.Repeat("0", n-len(s)) + s
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Format formats t in t's location.
//
// Letters: G era (AD/BC); y year ("yy" two digits); Y week year; M month
// (1-2 digits, MMM "Jan", MMMM "January"; L alike); w/W week in year/month
// and F day-of-week in month, with Sunday as first day and one minimal day
// (en_US); D day in year; d day; E day name (EEE "Mon", EEEE "Monday"); u
// day number (1 = Monday); a AM/PM; H 0-23; k 1-24; K 0-11; h 1-12; m; s;
// S milliseconds zero-padded to the count (not a fraction: "S" of 7 ms is
// "7"); z the zone abbreviation (for zzzz too: Java's long zone names are
// not available); Z "+0100"; X "+01", "+0100", "+01:00" or "Z".
func (f *DateFormat) Format(t time.Time) string {
	var b strings.Builder
	for _, fd := range f.fields {
		if fd.letter == 0 {
			b.WriteString(fd.text)
			continue
		}
		n := fd.count
		switch fd.letter {
		case 'G':
			if t.Year() > 0 {
				b.WriteString("AD")
			} else {
				b.WriteString("BC")
			}
		case 'y', 'Y':
			y := t.Year()
			if fd.letter == 'Y' {
				y = weekYear(t)
			}
			if y <= 0 {
				y = 1 - y // years of the BC era count from 1
			}
			if n == 2 {
				b.WriteString(pad(y%100, 2))
			} else {
				b.WriteString(pad(y, n))
			}
		case 'M', 'L':
			m := int(t.Month())
			switch {
			case n >= 4:
				b.WriteString(longMonths[m-1])
			case n == 3:
				b.WriteString(shortMonths[m-1])
			default:
				b.WriteString(pad(m, n))
			}
		case 'd':
			b.WriteString(pad(t.Day(), n))
		case 'D':
			b.WriteString(pad(t.YearDay(), n))
		case 'F':
			b.WriteString(pad((t.Day()-1)/7+1, n))
		case 'w':
			b.WriteString(pad(weekOfYear(t), n))
		case 'W':
			b.WriteString(pad(weekOfMonth(t), n))
		case 'E':
			if n >= 4 {
				b.WriteString(longDays[t.Weekday()])
			} else {
				b.WriteString(shortDays[t.Weekday()])
			}
		case 'u':
			u := int(t.Weekday())
			if u == 0 {
				u = 7
			}
			b.WriteString(pad(u, n))
		case 'a':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'H':
			b.WriteString(pad(t.Hour(), n))
		case 'k':
			h := t.Hour()
			if h == 0 {
				h = 24
			}
			b.WriteString(pad(h, n))
		case 'K':
			b.WriteString(pad(t.Hour()%12, n))
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			b.WriteString(pad(h, n))
		case 'm':
			b.WriteString(pad(t.Minute(), n))
		case 's':
			b.WriteString(pad(t.Second(), n))
		case 'S':
			b.WriteString(pad(t.Nanosecond()/int(time.Millisecond), n))
		case 'z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'Z':
			b.WriteString(zoneOffset(t, false, false))
		case 'X':
			_, off := t.Zone()
			switch {
			case off == 0:
				b.WriteString("Z")
			case n == 1:
				b.WriteString(zoneOffset(t, false, true))
			default:
				b.WriteString(zoneOffset(t, n == 3, false))
			}
		}
	}
	return b.String()
}

// zoneOffset is "+hhmm", or "+hh:mm" with colon, or "+hh" with hoursOnly.
func zoneOffset(t time.Time, colon, hoursOnly bool) string {
	_, off := t.Zone()
	sign := "+"
	if off < 0 {
		sign = "-"
		off = -off
	}
	off /= 60
	s := sign + pad(off/60, 2)
	if hoursOnly {
		return s
	}
	if colon {
		s += ":"
	}
	return s + pad(off%60, 2)
}

// civil is t's calendar date as a UTC midnight, so that day arithmetic
// ignores daylight saving time.
func civil(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// weekStart is the Sunday on or before d.
func weekStart(d time.Time) time.Time { return d.AddDate(0, 0, -int(d.Weekday())) }

// weekOfYear is Calendar.WEEK_OF_YEAR with Sunday first and minimal days 1:
// week 1 is the week (Sunday to Saturday) that contains January 1st; the
// last days of December that share a week with the next January 1st are in
// week 1 of the next year.
func weekOfYear(t time.Time) int {
	d := civil(t.Year(), t.Month(), t.Day())
	if !d.Before(weekStart(civil(t.Year()+1, 1, 1))) {
		return 1
	}
	return int(d.Sub(weekStart(civil(t.Year(), 1, 1))).Hours())/(24*7) + 1
}

// weekYear is the year weekOfYear counts in.
func weekYear(t time.Time) int {
	if !civil(t.Year(), t.Month(), t.Day()).Before(weekStart(civil(t.Year()+1, 1, 1))) {
		return t.Year() + 1
	}
	return t.Year()
}

// weekOfMonth is Calendar.WEEK_OF_MONTH with Sunday first and minimal
// days 1: the week that holds the 1st is week 1.
func weekOfMonth(t time.Time) int {
	first := civil(t.Year(), t.Month(), 1)
	return (t.Day()+int(first.Weekday())-1)/7 + 1
}
