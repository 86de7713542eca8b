package kafkaperf

import (
	"fmt"
	"time"

	"github.com/perfclones/perfclones/internal/javafmt"
	"github.com/perfclones/perfclones/internal/result"
)

const (
	consumerHeader = "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
	detailedHeader = "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
)

// detailedLine is one periodic line's numbers.
type detailedLine struct {
	nowMs                int64
	totalBytes           int64
	totalRecords         int64
	intervalMs           int64
	intervalBytes        int64
	intervalRecords      int64
	intervalRebalanceMs  int64
	intervalFetchMs      int64
	intervalMBPerSec     float64
	intervalRecordsPerSe float64
}

// consumerSnapshot is the run's numbers once it is over, which the summary
// line and the result file are made from.
type consumerSnapshot struct {
	startMs, endMs int64
	records, bytes int64
	rebalanceMs    int64
}

func mb(bytes int64) float64 { return float64(bytes) / (1024 * 1024) }

// printDetailed is the printer goroutine of --show-detailed-stats: it
// prints each report the consuming goroutines make and keeps it for the
// result file; it returns when reports is closed.
func printDetailed(reports <-chan detailedLine, df *javafmt.DateFormat, out func(string), kept *[]detailedLine) {
	for l := range reports {
		*kept = append(*kept, l)
		out(formatDetailed(l, df))
	}
}

// newDetailedLine computes one report's numbers from the totals at now and
// the differences since the last report.
func newDetailedLine(now, lastReport, totalBytes, totalRecords, dBytes, dRecords, rebalance int64) detailedLine {
	interval := now - lastReport
	fetch := interval - rebalance
	l := detailedLine{
		nowMs: now, totalBytes: totalBytes, totalRecords: totalRecords, intervalMs: interval,
		intervalBytes: dBytes, intervalRecords: dRecords, intervalRebalanceMs: rebalance, intervalFetchMs: fetch,
	}
	if fetch > 0 {
		l.intervalMBPerSec = 1000.0 * (float64(dBytes) / (1024 * 1024)) / float64(fetch)
		l.intervalRecordsPerSe = 1000.0 * float64(dRecords) / float64(fetch)
	}
	return l
}

// formatDetailed is one --show-detailed-stats line.
func formatDetailed(l detailedLine, df *javafmt.DateFormat) string {
	return fmt.Sprintf("%s, %d, %s, %s, %d, %s, %d, %d, %s, %s",
		df.Format(time.UnixMilli(l.nowMs)), 0,
		javafmt.Fixed(mb(l.totalBytes), 4), javafmt.Fixed(1000.0*mb(l.intervalBytes)/float64(l.intervalMs), 4),
		l.totalRecords, javafmt.Fixed(1000.0*float64(l.intervalRecords)/float64(l.intervalMs), 4),
		l.intervalRebalanceMs, l.intervalFetchMs,
		javafmt.Fixed(l.intervalMBPerSec, 4), javafmt.Fixed(l.intervalRecordsPerSe, 4))
}

// summaryLine is the final CSV line; a zero elapsed or fetch time prints
// NaN or Infinity as Java's division does.
func summaryLine(s consumerSnapshot, df *javafmt.DateFormat) string {
	elapsedSec := float64(s.endMs-s.startMs) / 1000.0
	totalMB := mb(s.bytes)
	fetchMs := s.endMs - s.startMs - s.rebalanceMs
	fetchSec := float64(fetchMs) / 1000.0
	return fmt.Sprintf("%s, %s, %s, %s, %d, %s, %d, %d, %s, %s",
		df.Format(time.UnixMilli(s.startMs)), df.Format(time.UnixMilli(s.endMs)),
		javafmt.Fixed(totalMB, 4), javafmt.Fixed(totalMB/elapsedSec, 4),
		s.records, javafmt.Fixed(float64(s.records)/elapsedSec, 4),
		s.rebalanceMs, fetchMs,
		javafmt.Fixed(totalMB/fetchSec, 4), javafmt.Fixed(float64(s.records)/fetchSec, 4))
}

// consumerTest is the run as the result file's test "consume": the
// records and their key and value bytes, and the detailed reports as
// intervals. The original measures no per-record latency, so there is no
// histogram.
func consumerTest(s consumerSnapshot, reports []detailedLine) result.Test {
	t := result.Test{
		Name:           "consume",
		Start:          msTime(s.startMs),
		End:            msTime(s.endMs),
		ElapsedSeconds: float64(s.endMs-s.startMs) / 1000,
		Counts:         result.Counts{Operations: s.records, Bytes: s.bytes},
	}
	for _, l := range reports {
		t.Intervals = append(t.Intervals, result.Interval{
			EndSeconds:      float64(l.nowMs-s.startMs) / 1000,
			DurationSeconds: float64(l.intervalMs) / 1000,
			Operations:      l.intervalRecords,
			Bytes:           l.intervalBytes,
		})
	}
	return t
}

// consumerMetrics reports the consumer's numbers under the Java client's
// metric names where they mean the same thing.
func consumerMetrics(s consumerSnapshot, clientID string) []metric {
	tags := [][2]string{{"client-id", clientID}}
	m := func(name string, v any) metric {
		return metric{group: "consumer-fetch-manager-metrics", name: name, tags: tags, value: v}
	}
	return []metric{
		m("records-consumed-total", float64(s.records)),
		m("bytes-consumed-total", float64(s.bytes)),
	}
}
