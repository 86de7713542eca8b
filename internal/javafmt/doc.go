// Package javafmt formats numbers and dates as the Java benchmark tools
// print them, so a clone's output matches byte for byte.
//
// Numbers: Fixed is String.format("%.Nf") (Fixed(x, 6) is %f) and
// DoubleToString is Double.toString, in the ROOT/English locale. Java
// rounds HALF_UP on the decimal digits of the double's shortest
// representation (1.005 → "1.01" with %.2f, where Go's strconv, rounding
// the binary value, prints "1.00"); it prints NaN and Infinity by name and
// never uses an exponent in %f.
//
// Which digits: JDK 19+ (Double.toString) and JDK 21+ (Formatter) start
// from the shortest digits that read back as the double, which are Go's
// strconv.FormatFloat(x, 'e', -1, 64) digits (JDK21). Older JDKs use
// FloatingDecimal, which agrees with them for every double below 2^63
// except integers in [2^54, 2^63), for which it takes the exact integer
// rounded at 10^0..10^2 (JDK17 reproduces this); at and above 2^63 it now
// and then prints one or two more digits than needed, for example
// 9.999999999999999E22 for 1e23, which is not reproduced. Both JDKs print
// small values the same: 2.0E-3 prints as 0.002 in either. These findings
// come from comparing with JDK 17 and JDK 25 on several hundred thousand
// doubles; testdata/format_oracle.txt keeps a sample. The functions
// without a JDK receiver use JDK17, the JDK the Kafka tools were checked
// on.
//
// Dates: NewDateFormat/FormatDate emulate java.text.SimpleDateFormat in an
// English locale; see DateFormat.Format for the pattern letters. The only
// known difference is the zone name of 'z', which comes from Go's time zone
// database (so "+1030" where Java says "LHST"), and long zone names
// ("zzzz"), which Go lacks.
package javafmt
