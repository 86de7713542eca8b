package perftest

import (
	"testing"
	"time"
)

func TestParseRecoveryInterval(t *testing.T) {
	for _, tc := range []struct {
		in       string
		min, max time.Duration
		class    string
		message  string
	}{
		{in: "", min: 5 * time.Second, max: 5 * time.Second},
		{in: " \t", min: 5 * time.Second, max: 5 * time.Second},
		{in: "0", min: 0, max: 0},
		{in: " 2 ", min: 2 * time.Second, max: 2 * time.Second},
		// A range draws from [A, B+1 s), as the Java handler does.
		{in: "1-3", min: time.Second, max: 4 * time.Second},
		{in: "abc", class: "java.lang.IllegalArgumentException", message: "Incorrect argument for connection recovery interval. Must be e.g. 30 or 30-60."},
		{in: "-5", class: "java.lang.IllegalArgumentException", message: "Incorrect argument for connection recovery interval. Must be e.g. 30 or 30-60."},
		{in: "5-", class: "java.lang.IllegalArgumentException", message: "Incorrect argument for connection recovery interval. Must be e.g. 30 or 30-60."},
		{in: "1-2-3", class: "java.lang.IllegalArgumentException", message: "Incorrect argument for connection recovery interval. Must be e.g. 30 or 30-60."},
		{in: "\u0663", class: "java.lang.IllegalArgumentException", message: "Incorrect argument for connection recovery interval. Must be e.g. 30 or 30-60."},
		{in: "10-5", class: "java.lang.IllegalArgumentException", message: "Wrong interval min-max values: 10-5"},
		{in: " 5-5 ", class: "java.lang.IllegalArgumentException", message: "Wrong interval min-max values: 5-5"},
		{in: "99999999999999999999", class: "java.lang.NumberFormatException", message: `For input string: "99999999999999999999"`},
	} {
		d, e := parseRecoveryInterval(tc.in)
		switch {
		case tc.class != "" && (e == nil || e.Class != tc.class || e.Message != tc.message):
			t.Errorf("%q: got %+v, want %s: %s", tc.in, e, tc.class, tc.message)
		case tc.class == "" && (e != nil || d.min != tc.min || d.max != tc.max):
			t.Errorf("%q: got %+v (%v), want %v..%v", tc.in, d, e, tc.min, tc.max)
		}
	}
	d, _ := parseRecoveryInterval("1-2")
	for i := 0; i < 200; i++ {
		if v := d.next(); v < time.Second || v >= 3*time.Second || v%time.Millisecond != 0 {
			t.Fatalf("1-2 drew %v", v)
		}
	}
}

func TestRecoveryIntervalRefusedAsPerfTest(t *testing.T) {
	// Read before any connection, with or without -dcr.
	for _, rel := range []string{"2.18", "2.22"} {
		code, stdout, stderr := runMain(t, rel, []string{"-h", "amqp://127.0.0.1:1", "-dcr", "-cri", "10-5"}, nil)
		if code != 1 || stderr != "Main thread caught exception: java.lang.IllegalArgumentException: Wrong interval min-max values: 10-5\n" ||
			!logTimeRe.MatchString(stdout) {
			t.Errorf("%s: code %d\nstdout %q\nstderr %q", rel, code, stdout, stderr)
		}
	}
}
