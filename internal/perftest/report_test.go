package perftest

import (
	"testing"
	"time"
)

func TestFormatRate(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{{0, "0"}, {0.49, "0.49"}, {0.125, "0.13"}, {9.95, "10.0"}, {9.94, "9.9"}, {26651.9, "26651"}, {10, "10"}} {
		if got := formatRate(tc.in); got != tc.want {
			t.Errorf("formatRate(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLinesPerRelease(t *testing.T) {
	d218, d222, d224 := &releases.Must("2.18").Diff, &releases.Must("2.22").Diff, &releases.Must("2.24").Diff
	all := shown{sent: true, returned: true, confirmed: true, received: true}
	s := sample{sinceStart: 2009 * time.Millisecond, sent: 11080, confirmed: 11080, recvd: 10897.6,
		consumer: latencyStats{1, 2, 3, 4, 5, 9}, confirm: latencyStats{1, 2, 3, 4, 5, 9}}
	for _, tc := range []struct {
		name, got, want string
	}{
		{"2.18 interval", d218.intervalLine("ID", all, s),
			"id: ID, time: 2.009s, sent: 11080 msg/s, returned: 0 msg/s, confirmed: 11080 msg/s, nacked: 0 msg/s, received: 10897 msg/s, min/median/75th/95th/99th consumer latency: 1/2/3/4/5 µs, confirm latency: 1/2/3/4/5 µs"},
		{"2.22 interval", d222.intervalLine("ID", all, s),
			"id: ID, time 2.009 s, sent: 11080 msg/s, returned: 0 msg/s, confirmed: 11080 msg/s, nacked: 0 msg/s, received: 10897 msg/s, min/median/75th/95th/99th consumer latency: 1/2/3/4/5 µs, confirm latency: 1/2/3/4/5 µs"},
		{"2.24 interval", d224.intervalLine("ID", all, s),
			"id: ID, time 2.009 s, sent: 11080 msg/s, returned: 0 msg/s, confirmed: 11080 msg/s, nacked: 0 msg/s, received: 10897 msg/s, min/median/75th/95th/99th/max consumer latency: 1/2/3/4/5/9 µs, confirm latency: 1/2/3/4/5/9 µs"},
		{"2.18 returned needs producers", d218.intervalLine("ID", shown{returned: true, received: true}, sample{sinceStart: time.Second}),
			"id: ID, time: 1.000s, received: 0 msg/s, min/median/75th/95th/99th consumer latency: 0/0/0/0/0 µs"},
		{"2.22 returned without producers", d222.intervalLine("ID", shown{returned: true, received: true}, sample{sinceStart: time.Second}),
			"id: ID, time 1.000 s, returned: 0 msg/s, received: 0 msg/s, min/median/75th/95th/99th consumer latency: 0/0/0/0/0 µs"},
		{"2.18 -l", d218.intervalLine("ID", shown{sent: true, received: true, legacy: true}, sample{sinceStart: time.Second, sent: 5, recvd: 5, legacyCount: 2, legacyMin: 10, legacyAvg: 20, legacyMax: 30}),
			"id: ID, time: 1.000s, sent: 5.0 msg/s, received: 5.0 msg/s, min/avg/max latency: 10/20/30 µs "},
		{"compact header", d222.compactHeader(shown{sent: true, received: true}),
			"time               sent     received       consumer latency"},
		{"compact row", d222.compactLine(shown{sent: true, received: true, millis: true}, sample{sinceStart: time.Second, sent: 173920, recvd: 84405, consumer: latencyStats{1, 25, 189, 312, 331}}, time.Time{}),
			"1.000s     173920 msg/s  84405 msg/s    1/25/189/312/331 ms"},
		{"compact overflow", d222.compactLine(shown{sent: true, confirmed: true, received: true}, sample{sinceStart: time.Second,
			consumer: latencyStats{100000, 200000, 300000, 400000, 500000}, confirm: latencyStats{1, 2, 3, 4, 5}}, time.Time{}),
			"1.000s          0 msg/s      0 msg/s      0 msg/s      0 msg/s 100000/200000/300000/400000/500000 µs 1/2/3/4/5 µs"},
		{"csv row", csvRow("test-1", shown{sent: true, received: true}, sample{sinceStart: time.Second, sent: 26651, recvd: 22811, consumer: latencyStats{3108, 118263, 189123, 335472, 537104}}),
			"test-1,1.000,26651,,,,22811,3108,118263,189123,335472,537104,,,,,"},
		{"stop line", stopLine([]reasonCount{{"Producer reached message limit", 2}, {"Reached time limit", 1}}),
			"test stopped (Producer reached message limit [2], Reached time limit)"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, tc.got, tc.want)
		}
	}
	sum := d222.summary("ID", false, shown{sent: true, confirmed: true, received: true}, time.Second, 17, 17.5, latencyStats{8766, 23473, 26926, 37135, 63106}, latencyStats{1, 2, 3, 4, 5})
	want := []string{"id: ID, sending rate avg: 17 msg/s", "id: ID, receiving rate avg: 17 msg/s",
		"id: ID, consumer latency min/median/75th/95th/99th 8766/23473/26926/37135/63106 µs",
		"id: ID, confirm latency min/median/75th/95th/99th 1/2/3/4/5 µs"}
	if len(sum) != len(want) {
		t.Fatalf("summary %q", sum)
	}
	for i := range want {
		if sum[i] != want[i] {
			t.Errorf("summary line %d %q, want %q", i, sum[i], want[i])
		}
	}
	if got := d218.summary("ID", false, all, time.Second, 1, 1, latencyStats{}, latencyStats{}); len(got) != 2 {
		t.Errorf("2.18 summary has %d lines: %q", len(got), got)
	}
}
