package perftest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perfclones/perfclones/internal/javafmt"
)

// latencyStats are the printed values of one latency group: min, median,
// 75th, 95th, 99th and max, in the run's unit.
type latencyStats [6]int64

// sample is one report's numbers: rates of the interval (msg/s) and the
// latency of its messages.
type sample struct {
	sinceStart                               time.Duration
	sent, returned, confirmed, nacked, recvd float64
	consumer, confirm                        latencyStats
	// legacyMin/Avg/Max are 2.18 -l's values (µs), valid when legacyCount > 0.
	legacyMin, legacyAvg, legacyMax int64
	legacyCount                     int64
}

// formatRate is PerfTest's rate format: 0, %1.2f below 1, %1.1f below 10,
// else the integer part.
func formatRate(r float64) string {
	switch {
	case r == 0:
		return "0"
	case r < 1:
		return javafmt.Fixed(r, 2)
	case r < 10:
		return javafmt.Fixed(r, 1)
	default:
		return strconv.FormatInt(int64(r), 10)
	}
}

// fixedSeconds is "%.3f" of a duration in seconds.
func fixedSeconds(d time.Duration) string { return javafmt.Fixed(d.Seconds(), 3) }

func (l latencyStats) format(withMax bool, unit string) string {
	n := 5
	if withMax {
		n = 6
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strconv.FormatInt(l[i], 10)
	}
	return strings.Join(parts, "/") + " " + unit
}

func latencyHeader(withMax bool) string {
	if withMax {
		return "min/median/75th/95th/99th/max"
	}
	return "min/median/75th/95th/99th"
}

// intervalLine is the default format's line for one interval.
func (d *diff) intervalLine(id string, sh shown, s sample) string {
	var b strings.Builder
	if d.metricsRefactor {
		b.WriteString("id: " + id + ", time " + fixedSeconds(s.sinceStart) + " s")
	} else {
		b.WriteString("id: " + id + ", time: " + fixedSeconds(s.sinceStart) + "s")
	}
	rate := func(label string, r float64) { b.WriteString(", " + label + ": " + formatRate(r) + " msg/s") }
	if sh.sent {
		rate("sent", s.sent)
	}
	if sh.returned && (sh.sent || d.metricsRefactor) {
		rate("returned", s.returned)
	}
	if sh.confirmLatency() {
		rate("confirmed", s.confirmed)
		rate("nacked", s.nacked)
	}
	if sh.received {
		rate("received", s.recvd)
	}
	if sh.legacy && !d.metricsRefactor {
		if s.legacyCount > 0 {
			fmt.Fprintf(&b, ", min/avg/max latency: %d/%d/%d µs ", s.legacyMin, s.legacyAvg, s.legacyMax)
		}
		return b.String()
	}
	if sh.consumerLatency() || sh.confirmLatency() {
		b.WriteString(", " + latencyHeader(d.maxColumn) + " ")
	}
	if sh.consumerLatency() {
		b.WriteString("consumer latency: " + s.consumer.format(d.maxColumn, sh.unit()))
	}
	if sh.consumerLatency() && sh.confirmLatency() {
		b.WriteString(", ")
	}
	if sh.confirmLatency() {
		b.WriteString("confirm latency: " + s.confirm.format(d.maxColumn, sh.unit()))
	}
	return b.String()
}

// compact widths: the time column, each rate, each latency group.
func (d *diff) compactWidths() (timeW, rateW, latW int) {
	if d.maxColumn {
		return 19, 13, 27
	}
	return 10, 13, 23
}

// compactHeader is -mf compact's first line.
func (d *diff) compactHeader(sh shown) string {
	tw, rw, lw := d.compactWidths()
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s", tw, "time")
	col := func(w int, s string) { fmt.Fprintf(&b, "%*s", w, s) }
	if sh.sent {
		col(rw, "sent")
	}
	if sh.returned {
		col(rw, "returned")
	}
	if sh.confirmLatency() {
		col(rw, "confirmed")
		col(rw, "nacked")
	}
	if sh.received {
		col(rw, "received")
	}
	if sh.consumerLatency() {
		col(lw, "consumer latency")
	}
	if sh.confirmLatency() {
		col(lw, "confirm latency")
	}
	return b.String()
}

// compactLine is one -mf compact row; wall is the local time (2.24+).
func (d *diff) compactLine(sh shown, s sample, wall time.Time) string {
	tw, rw, lw := d.compactWidths()
	var b strings.Builder
	if d.maxColumn {
		fmt.Fprintf(&b, "%-*s", tw, wall.Format("2006/01/02 15:04:05"))
	} else {
		fmt.Fprintf(&b, "%-*s", tw, fixedSeconds(s.sinceStart)+"s")
	}
	col := func(r float64) { fmt.Fprintf(&b, "%*s", rw, formatRate(r)+" msg/s") }
	if sh.sent {
		col(s.sent)
	}
	if sh.returned {
		col(s.returned)
	}
	if sh.confirmLatency() {
		col(s.confirmed)
		col(s.nacked)
	}
	if sh.received {
		col(s.recvd)
	}
	overflow := false
	if sh.consumerLatency() {
		l := s.consumer.format(d.maxColumn, sh.unit())
		if javaLen(l) > lw-1 {
			b.WriteString(" " + l)
			overflow = true
		} else {
			fmt.Fprintf(&b, "%*s", lw, l)
		}
	}
	if sh.confirmLatency() {
		l := s.confirm.format(d.maxColumn, sh.unit())
		if javaLen(l) > lw-1 || overflow {
			b.WriteString(" " + l)
		} else {
			fmt.Fprintf(&b, "%*s", lw, l)
		}
	}
	return b.String()
}

// javaLen is String.length(); µ is one character (fmt's widths count
// characters too, as Java's do).
func javaLen(s string) int { return len([]rune(s)) }

// csvHeader is the -o file's first line.
func csvHeader(sh shown) string {
	u := sh.unit()
	return "id,time (s),published (msg/s),returned (msg/s),confirmed (msg/s),nacked (msg/s),received (msg/s)," +
		"min consumer latency (" + u + "),median consumer latency (" + u + "),75th p. consumer latency (" + u + ")," +
		"95th p. consumer latency (" + u + "),99th p. consumer latency (" + u + ")," +
		"min confirm latency (" + u + "),median confirm latency (" + u + "),75th p. confirm latency (" + u + ")," +
		"95th p. confirm latency (" + u + "),99th p. confirm latency (" + u + ")"
}

// csvRow is one -o row (never a max column).
func csvRow(id string, sh shown, s sample) string {
	rate := func(r float64, on bool) string {
		if on {
			return formatRate(r)
		}
		return ""
	}
	five := func(l latencyStats) string {
		return fmt.Sprintf("%d,%d,%d,%d,%d", l[0], l[1], l[2], l[3], l[4])
	}
	row := id + "," + fixedSeconds(s.sinceStart) + "," + rate(s.sent, sh.sent) + "," +
		rate(s.returned, sh.sent && sh.returned) + "," + rate(s.confirmed, sh.confirmLatency()) + "," +
		rate(s.nacked, sh.confirmLatency()) + "," + rate(s.recvd, sh.received) + ","
	if sh.consumerLatency() {
		row += five(s.consumer) + ","
	} else {
		row += ",,,,,"
	}
	if sh.confirmLatency() {
		row += five(s.confirm)
	} else {
		row += ",,,,"
	}
	return row
}

// summary is what follows the stop line. sent and recvd are the average
// rates; consumer and confirm the whole run's latencies (2.19+ only).
func (d *diff) summary(id string, compact bool, sh shown, elapsed time.Duration, sent, recvd float64, consumer, confirm latencyStats) []string {
	begin := "id: " + id + ", "
	if compact {
		begin = ""
	}
	lines := []string{begin + "sending rate avg: " + formatRate(sent) + " msg/s"}
	if elapsed.Milliseconds() <= 0 {
		return lines
	}
	lines = append(lines, begin+"receiving rate avg: "+formatRate(recvd)+" msg/s")
	if !d.metricsRefactor {
		return lines
	}
	if sh.consumerLatency() {
		lines = append(lines, begin+"consumer latency "+latencyHeader(d.maxColumn)+" "+consumer.format(d.maxColumn, sh.unit()))
	}
	if sh.confirmLatency() {
		lines = append(lines, begin+"confirm latency "+latencyHeader(d.maxColumn)+" "+confirm.format(d.maxColumn, sh.unit()))
	}
	return lines
}

// stopLine is "test stopped" and the reasons, in the order they were
// first recorded, each with its count when more than one agent gave it.
func stopLine(reasons []reasonCount) string {
	if len(reasons) == 0 {
		return "test stopped"
	}
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = r.reason
		if r.count > 1 {
			parts[i] += " [" + strconv.Itoa(r.count) + "]"
		}
	}
	return "test stopped (" + strings.Join(parts, ", ") + ")"
}

type reasonCount struct {
	reason string
	count  int
}
