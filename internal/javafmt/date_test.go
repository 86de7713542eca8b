package javafmt

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFormatDate(t *testing.T) {
	utc := time.UnixMilli(1675788805127).UTC()
	for _, c := range []struct {
		pattern, want string
	}{
		{DefaultDatePattern, "2023-02-07 16:53:25:127"},
		{"yy/M/d h:m:s.S a", "23/2/7 4:53:25.127 PM"},
		{"EEEE, MMMM d, yyyy", "Tuesday, February 7, 2023"},
		{"EEE MMM dd 'at' HH:mm z", "Tue Feb 07 at 16:53 UTC"},
		{"'It''s' HH 'o''clock'", "It's 16 o'clock"},
		{"yyyy-MM-dd'T'HH:mm:ssXXX Z", "2023-02-07T16:53:25Z +0000"},
		{"SSSS", "0127"},
		{"invalid q", ""},
	} {
		if got := FormatDate(utc, c.pattern); got != c.want {
			t.Errorf("FormatDate(%q) = %q, want %q", c.pattern, got, c.want)
		}
	}
	if got := FormatDate(time.UnixMilli(0).UTC(), DefaultDatePattern); got != "1970-01-01 00:00:00:000" {
		t.Errorf("epoch = %q", got)
	}
	for _, c := range []struct{ pattern, err string }{
		{"yyyy-MM-dd q", "Illegal pattern character 'q'"},
		{"'open", "Unterminated quote"},
		{"XXXX", "invalid ISO 8601 format: length=4"},
	} {
		if _, err := NewDateFormat(c.pattern); err == nil || err.Error() != c.err {
			t.Errorf("NewDateFormat(%q) error = %v, want %q", c.pattern, err, c.err)
		}
	}
}

// TestFormatDateOracle compares with testdata/date_oracle.txt: epoch
// milliseconds, zone, pattern and what JDK 17's SimpleDateFormat printed
// (or "ERR <message>").
func TestFormatDateOracle(t *testing.T) {
	f, err := os.Open("testdata/date_oracle.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), "\t", 4)
		ms, _ := strconv.ParseInt(fields[0], 10, 64)
		loc, err := time.LoadLocation(fields[1])
		if err != nil {
			t.Skipf("no time zone data: %v", err)
		}
		var got string
		if df, err := NewDateFormat(fields[2]); err != nil {
			got = "ERR " + err.Error()
		} else {
			got = df.Format(time.UnixMilli(ms).In(loc))
		}
		if got != fields[3] {
			t.Errorf("%d %s %q = %q, want %q", ms, fields[1], fields[2], got, fields[3])
		}
		n++
	}
	if n < 300 {
		t.Fatalf("only %d cases", n)
	}
}
