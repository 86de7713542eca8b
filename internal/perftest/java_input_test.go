package perftest

import (
	"testing"
)

// The Java behaviours bad input meets: Formatter on queue patterns,
// java.net.URI and ConnectionFactory.setUri on broker URIs, the JVM's
// decoding of arguments.
func TestJavaFormatInt(t *testing.T) {
	for _, tc := range []struct {
		pattern, want string
		exception     string
	}{
		{"queue-%d", "queue-7", ""},
		{"q-%03d", "q-007", ""},
		{"q-%-3d|", "q-7  |", ""},
		{"q-%s", "q-7", ""},
		{"q-%x-%%", "q-7-%", ""},
		{"q-%1$d-%1$d", "q-7-7", ""},
		{"noformat", "noformat", ""},
		{"q-%d-%d", "", "java.util.MissingFormatArgumentException: Format specifier '%d'"},
		{"q-%q", "", "java.util.UnknownFormatConversionException: Conversion = 'q'"},
		{"q-%", "", "java.util.UnknownFormatConversionException: Conversion = '%'"},
		{"q-%f", "", "java.util.IllegalFormatConversionException: f != java.lang.Integer"},
	} {
		got, e := javaFormatInt(tc.pattern, 7)
		var exc string
		if e != nil {
			exc = e.String()
		}
		if got != tc.want || exc != tc.exception {
			t.Errorf("%q: %q, %q; want %q, %q", tc.pattern, got, exc, tc.want, tc.exception)
		}
	}
}

func TestJavaURIs(t *testing.T) {
	for _, tc := range []struct {
		uris      []string
		want      string // the first URI after the checks
		exception string
	}{
		{[]string{"amqp://u:p@127.0.0.1:5672/%2F"}, "amqp://u:p@127.0.0.1:5672/%2F", ""},
		{[]string{"amqp://127.0.0.1:abc/v"}, "amqp://localhost/v", ""},
		{[]string{"amqp://\u00e9@127.0.0.1:1"}, "amqp://%C3%A9@127.0.0.1:1", ""},
		{[]string{}, "", "java.lang.ArrayIndexOutOfBoundsException: Index 0 out of bounds for length 0"},
		{[]string{""}, "", `java.lang.NullPointerException: Cannot invoke "String.toLowerCase()" because the return value of "java.net.URI.getScheme()" is null`},
		{[]string{"127.0.0.1"}, "", `java.lang.NullPointerException: Cannot invoke "String.toLowerCase()" because the return value of "java.net.URI.getScheme()" is null`},
		{[]string{"http://127.0.0.1"}, "", "java.lang.IllegalArgumentException: Wrong scheme in AMQP URI: http"},
		{[]string{"amqp://127.0.0.1:99999"}, "", "java.lang.IllegalArgumentException: port out of range:99999"},
		{[]string{"amqp://%zz@h"}, "", "java.net.URISyntaxException: Malformed escape pair at index 7: amqp://%zz@h"},
		{[]string{"amqp://[::1"}, "", "java.net.URISyntaxException: Expected closing bracket for IPv6 address at index 11: amqp://[::1"},
	} {
		e := javaURIs(tc.uris)
		var exc, got string
		if e != nil {
			exc = e.String()
		} else if len(tc.uris) > 0 {
			got = tc.uris[0]
		}
		if got != tc.want || exc != tc.exception {
			t.Errorf("%q: %q, %q; want %q, %q", tc.uris, got, exc, tc.want, tc.exception)
		}
	}
}
