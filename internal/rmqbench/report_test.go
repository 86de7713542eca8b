package rmqbench

import (
	"errors"

	"github.com/perfclones/perfclones/internal/cli"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func rel(t *testing.T, name string) *diff {
	t.Helper()
	return &releases.Must(name).Diff
}

// The help texts the spec regenerated with the real commons-cli.
func TestHelpMatchesCommonsCli(t *testing.T) {
	for _, tc := range []struct {
		mode *mode
		rel  string
		file string
	}{
		{&producerMode, "5.3", "testdata/help-producer-5.3.txt"},
		{&consumerMode, "5.3", "testdata/help-consumer-5.3.txt"},
	} {
		want, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if got := helpText(tc.mode.App, tc.mode.options(rel(t, tc.rel))); got != string(want) {
			t.Errorf("%s %s help:\n%s\nwant:\n%s", tc.mode.Name, tc.rel, got, want)
		}
	}
	// 4.9: the same lines minus the 5.x options, descriptions 5 columns
	// earlier; the consumer's columns are unchanged.
	got := helpText(producerMode.App, producerMode.options(rel(t, "4.9")))
	for _, line := range []string{
		"usage: benchmarkProducer [-a <arg>] [-ak <arg>] [-d <arg>] [-e <arg>] [-h] [-k <arg>] [-l <arg>] [-m <arg>]\n" +
			"       [-n <arg>] [-q <arg>] [-s <arg>] [-sk <arg>] [-t <arg>] [-w <arg>] [-y <arg>]\n" +
			" -a,--aclEnable <arg>         Acl Enable, Default: false\n",
		" -y,--asyncEnable <arg>       Enable async produce, Default: false\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("4.9 producer help lacks %q:\n%s", line, got)
		}
	}
	c49 := helpText(consumerMode.App, consumerMode.options(rel(t, "4.9")))
	c5 := helpText(consumerMode.App, consumerMode.options(rel(t, "5.3")))
	if strings.Contains(c49, "-ri") || !strings.Contains(c49, " -w,--threadCount <arg>           Thread count, Default: 20\n") ||
		len(strings.Split(c49, "\n")) != len(strings.Split(c5, "\n"))-1 {
		t.Errorf("4.9 consumer help:\n%s", c49)
	}
}

func TestF73JavaRounding(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{1.0005, "  1.001"}, {1.2345, "  1.235"}, {0.1235, "  0.124"},
		{math.NaN(), "    NaN"}, {2001.0 / 2000, "  1.001"}, {14.38, " 14.380"}, {88316.396, "88316.396"},
	} {
		if got := f73(tc.x); got != tc.want {
			t.Errorf("f73(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}

func TestSplitQuantity(t *testing.T) {
	for _, tc := range []struct {
		q       int64
		threads int
		want    []int64
	}{
		{0, 4, nil}, {-3, 4, nil}, {10, 64, []int64{10}}, {20000, 256, nil}, {10, 3, []int64{4, 3, 3}},
	} {
		got := splitQuantity(tc.q, tc.threads)
		if tc.q == 20000 {
			var sum int64
			for _, n := range got {
				sum += n
			}
			if len(got) != 256 || sum != 20000 || got[0] != 78+32 || got[1] != 78 {
				t.Errorf("splitQuantity(20000, 256): %d shares, sum %d, first %d", len(got), sum, got[0])
			}
			continue
		}
		if len(got) != len(tc.want) {
			t.Fatalf("splitQuantity(%d, %d) = %v, want %v", tc.q, tc.threads, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("splitQuantity(%d, %d) = %v, want %v", tc.q, tc.threads, got, tc.want)
			}
		}
	}
}

func snaps(step int64, n int, perSnap, rtPer int64) []producerSnap {
	var out []producerSnap
	for i := 0; i < n; i++ {
		k := int64(i)
		out = append(out, producerSnap{At: 1_000_000 + k*step, SendOK: k * perSnap, RespOK: k * perSnap,
			RTTotal: k * perSnap * rtPer, SendFailed: 3, RespFailed: 1})
	}
	return out
}

func TestProducerLines(t *testing.T) {
	now := time.Date(2026, 12, 1, 8, 5, 10, 569_000_000, time.Local)
	w := snaps(1000, 10, 4702, 14)
	got5 := producerLine(rel(t, "5.3"), now, w, 1903)
	want5 := "Current Time: 2026-12-01 08:05:10,569 | Send TPS: 4702 | Max RT(ms): 1903 | Average RT(ms):  14.000 | Send Failed: 3 | Response Failed: 1"
	if got5 != want5 {
		t.Errorf("5.x line:\n%s\nwant\n%s", got5, want5)
	}
	got49 := producerLine(rel(t, "4.9"), now, w, 1903)
	want49 := "Current Time: 2026-12-01 08:05:10,569 Send TPS: 4702 Max RT(ms): 1903 Average RT(ms):  14.000 Send Failed: 3 Response Failed: 1"
	if got49 != want49 {
		t.Errorf("4.9 line:\n%s\nwant\n%s", got49, want49)
	}
	if got := producerComplete(rel(t, "5.3"), w[:1], 10, 0, 0, 5); got != "[Complete] Send Total: 10 Send Failed: 0 Response Failed: 0" {
		t.Errorf("short summary: %s", got)
	}
	idle := []producerSnap{{At: 1000}, {At: 2000}, {At: 3000}}
	want := "[Complete] Send Total: 0 | Send TPS: 0 | Max RT(ms): 0 | Average RT(ms):     NaN | Send Failed: 0 | Response Failed: 0"
	if got := producerComplete(rel(t, "5.3"), idle, 0, 0, 0, 0); got != want {
		t.Errorf("idle summary:\n%s\nwant\n%s", got, want)
	}
	want49c := "[Complete] Send Total: 0 Send TPS: 0 Max RT(ms): 0 Average RT(ms):     NaN Send Failed: 0 Response Failed: 0"
	if got := producerComplete(rel(t, "4.9"), idle, 0, 0, 0, 0); got != want49c {
		t.Errorf("4.9 idle summary:\n%s\nwant\n%s", got, want49c)
	}
}

func TestHeaders(t *testing.T) {
	pl := &producerPlan{topic: "topic-01", threads: 256, size: 3800, quantity: 20000, delayLevel: 1, reportMs: 10000}
	want5 := "topic: topic-01, threadCount: 256, messageSize: 3800, keyEnable: false, propertySize: 0, tagCount: 0, traceEnable: false, " +
		"aclEnable: false, messageQuantity: 20000, delayEnable: false, delayLevel: 1, asyncEnable: false\n compressEnable: false, reportInterval: 10000\n"
	if got := producerHeader(rel(t, "5.3"), pl); got != want5 {
		t.Errorf("5.x header:\n%q\nwant\n%q", got, want5)
	}
	pl.threads, pl.size = 64, 1024
	want49 := "topic: topic-01 threadCount: 64 messageSize: 1024 keyEnable: false propertySize: 0 tagCount: 0 traceEnable: false " +
		"aclEnable: false messageQuantity: 20000\ndelayEnable: false delayLevel: 1\nasyncEnable: false\n"
	if got := producerHeader(rel(t, "4.9"), pl); got != want49 {
		t.Errorf("4.9 header:\n%q\nwant\n%q", got, want49)
	}
	cp := &consumerPlan{topic: "topic-01", threads: 20, group: "group-01", suffix: "false", reportMs: 10000}
	wantC := "topic: topic-01, threadCount 20, group: group-01, suffix: false, filterType: null, expression: null, msgTraceEnable: false, aclEnable: false, reportInterval: 10000"
	if got := consumerHeader(rel(t, "5.3"), cp); got != wantC {
		t.Errorf("consumer header:\n%s\nwant\n%s", got, wantC)
	}
}

func TestConsumerLines(t *testing.T) {
	now := time.UnixMilli(1796112476491)
	var w []consumerSnap
	for i := int64(0); i < 10; i++ {
		w = append(w, consumerSnap{At: 1000 * i, Count: 4545 * i, B2CTotal: 4545 * i * 205, S2CTotal: 4545 * i * 200, Failed: i})
	}
	got := consumerLine(rel(t, "4.9"), now, w, 300, 299)
	want := "Current Time: 1796112476491 TPS: 4545 FAIL: 9 AVG(B2C) RT(ms): 205.000 AVG(S2C) RT(ms): 200.000 MAX(B2C) RT(ms): 300 MAX(S2C) RT(ms): 299"
	if got != want {
		t.Errorf("4.9 consumer line:\n%s\nwant\n%s", got, want)
	}
	got = consumerLine(rel(t, "5.3"), now.In(time.UTC), w, 300, 299)
	want = "Current Time: 2026-12-01 08:07:56,491 | Consume TPS: 4545 | AVG(B2C) RT(ms): 205.000 | AVG(S2C) RT(ms): 200.000 | MAX(B2C) RT(ms): 300 | MAX(S2C) RT(ms): 299 | Consume Fail: 9"
	if got != want {
		t.Errorf("5.x consumer line:\n%s\nwant\n%s", got, want)
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		rel  string
		args []string
		key  string
		want string
		code int // -1: parses
		err  string
	}{
		{"5.3", []string{"-t=X"}, "t", "X", -1, ""},
		{"4.9", []string{"-t=X"}, "t", "=X", -1, ""},
		{"5.3", []string{"-tX"}, "t", "X", -1, ""},
		{"5.3", []string{"--topic=X"}, "t", "X", -1, ""},
		{"5.3", []string{"--thread", "8"}, "w", "8", -1, ""},
		{"4.9", []string{"--thread", "8"}, "", "", 1, ""},
		{"5.3", []string{"-akXYZ"}, "a", "kXYZ", -1, ""},
		{"4.9", []string{"-akXYZ"}, "a", "kXYZ", -1, ""},
		{"5.3", []string{"-t", "a", "-t", "b"}, "t", "a", -1, ""},
		{"5.3", []string{"-s", "-5"}, "s", "-5", -1, ""},
		{"5.3", []string{"-k"}, "", "", 1, "Missing argument for option: k\n"},
		{"5.3", []string{"-p", "3"}, "", "", 1, "Unrecognized option: -p\n"},
		{"5.3", []string{"-h", "-t", "x"}, "", "", 0, ""},
		{"5.3", []string{"--t", "x"}, "", "", 1, "Ambiguous option: '--t'  (could be: 'threadCount', 'topic', 'tagCount')\n"},
	} {
		p, err := parse(&producerMode, rel(t, tc.rel), tc.args)
		if tc.code >= 0 {
			ex := asExit(err)
			if ex == nil || ex.Code != tc.code || ex.Stderr != tc.err || !strings.HasPrefix(ex.Stdout, "usage: benchmarkProducer ") {
				t.Errorf("%s %q: %#v, want exit %d with %q", tc.rel, tc.args, err, tc.code, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %q: %v", tc.rel, tc.args, err)
			continue
		}
		if got := p.str(tc.key, "", false); got != tc.want {
			t.Errorf("%s %q: -%s = %q, want %q", tc.rel, tc.args, tc.key, got, tc.want)
		}
	}
}

func asExit(err error) *cli.Exit {
	var ex *cli.Exit
	if errors.As(err, &ex) {
		return ex
	}
	return nil
}

func TestTransactionLines(t *testing.T) {
	now := time.Date(2025, 3, 14, 10, 21, 7, 481_000_000, time.Local)
	var w []txSnap
	for i := int64(0); i < 10; i++ {
		w = append(w, txSnap{At: 1000 * i, SendOK: 240 * i, SendFailed: i, RTTotal: 240 * i * 28 / 10, Checks: 2 * i})
	}
	want5 := "Current Time: 2025-03-14 10:21:07,481 | Send TPS:   240 | Max RT(ms):   292 | AVG RT(ms): 2.8 | Send Failed: 9 | Check: 18 | UnexpectedCheck: 0 | DuplicatedCheck: 0"
	if got := txLine(rel(t, "5.3"), now, w, 292); got != want5 {
		t.Errorf("5.x:\n%s\nwant\n%s", got, want5)
	}
	// 4.9 counts failed attempts in Send TPS and ends the line with a blank.
	want49 := "Current Time: " + strconv.FormatInt(now.UnixMilli(), 10) + " Send TPS:  241 Max RT(ms):  292 AVG RT(ms):2.8 Send Failed: 9 check: 18 unexpectedCheck: 0 duplicatedCheck: 0 "
	if got := txLine(rel(t, "4.9"), now, w, 292); got != want49 {
		t.Errorf("4.9:\n%q\nwant\n%q", got, want49)
	}
}
