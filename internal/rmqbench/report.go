package rmqbench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/perfclones/perfclones/internal/javafmt"
	"github.com/perfclones/perfclones/internal/jvm"
)

// perSecond is (long)(delta / (double)ms * 1000).
func perSecond(delta, ms int64) int64 { return jvm.DoubleToLong(float64(delta) / float64(ms) * 1000) }

// ratio is delta / (double) n: NaN for 0/0, as in Java.
func ratio(delta, n int64) float64 {
	if n == 0 {
		if delta == 0 {
			return math.NaN()
		}
		return math.Inf(int(delta))
	}
	return float64(delta) / float64(n)
}

// f73 is Java's %7.3f: three decimals rounded as Java rounds, right-aligned
// in seven columns ("    NaN").
func f73(x float64) string { return fmt.Sprintf("%7s", javafmt.Fixed(x, 3)) }

// humanTime is UtilAll.timeMillisToHumanString2: local time with a comma
// before the milliseconds.
func humanTime(t time.Time) string { return javafmt.FormatDate(t, "yyyy-MM-dd HH:mm:ss,SSS") }

// fields joins a report line's fields as the release does.
func fields(d *diff, parts ...string) string {
	if d.Pipes {
		return strings.Join(parts, " | ")
	}
	return strings.Join(parts, " ")
}

func javaBool(v bool) string { return strconv.FormatBool(v) }

// producerHeader is the producer's start-up output.
func producerHeader(d *diff, p *producerPlan) string {
	if d.Pipes {
		return fmt.Sprintf("topic: %s, threadCount: %d, messageSize: %d, keyEnable: %s, propertySize: %d, tagCount: %d, "+
			"traceEnable: %s, aclEnable: %s, messageQuantity: %d, delayEnable: %s, delayLevel: %d, asyncEnable: %s\n"+
			" compressEnable: %s, reportInterval: %d\n",
			p.topic, p.threads, p.size, javaBool(p.keys), 0, p.tagCount, javaBool(p.trace), javaBool(p.acl), p.quantity,
			javaBool(p.delay), p.delayLevel, javaBool(p.async), javaBool(p.compress), p.reportMs)
	}
	return fmt.Sprintf("topic: %s threadCount: %d messageSize: %d keyEnable: %s propertySize: %d tagCount: %d "+
		"traceEnable: %s aclEnable: %s messageQuantity: %d\ndelayEnable: %s delayLevel: %d\nasyncEnable: %s\n",
		p.topic, p.threads, p.size, javaBool(p.keys), 0, p.tagCount, javaBool(p.trace), javaBool(p.acl), p.quantity,
		javaBool(p.delay), p.delayLevel, javaBool(p.async))
}

// producerLine is the periodic line over the window w (oldest first; the
// caller has checked it is full). maxRT is the maximum since the start.
func producerLine(d *diff, now time.Time, w []producerSnap, maxRT int64) string {
	first, last := w[0], w[len(w)-1]
	return fields(d,
		"Current Time: "+humanTime(now),
		fmt.Sprintf("Send TPS: %d", perSecond(last.RespOK-first.RespOK, last.At-first.At)),
		fmt.Sprintf("Max RT(ms): %d", maxRT),
		"Average RT(ms): "+f73(ratio(last.RTTotal-first.RTTotal, last.RespOK-first.RespOK)),
		fmt.Sprintf("Send Failed: %d", last.SendFailed),
		fmt.Sprintf("Response Failed: %d", last.RespFailed),
	)
}

// producerComplete is the summary of a -q run: over the last window when
// there are at least two snapshots, else the short form (no separators in
// any release). total is successes plus send failures at the end.
func producerComplete(d *diff, w []producerSnap, total, sendFailed, respFailed, maxRT int64) string {
	if len(w) < 2 {
		return fmt.Sprintf("[Complete] Send Total: %d Send Failed: %d Response Failed: %d", total, sendFailed, respFailed)
	}
	first, last := w[0], w[len(w)-1]
	return fields(d,
		fmt.Sprintf("[Complete] Send Total: %d", total),
		fmt.Sprintf("Send TPS: %d", perSecond(last.RespOK-first.RespOK, last.At-first.At)),
		fmt.Sprintf("Max RT(ms): %d", maxRT),
		"Average RT(ms): "+f73(ratio(last.RTTotal-first.RTTotal, last.RespOK-first.RespOK)),
		fmt.Sprintf("Send Failed: %d", last.SendFailed),
		fmt.Sprintf("Response Failed: %d", last.RespFailed),
	)
}

func nullable(s string, set bool) string {
	if !set {
		return "null"
	}
	return s
}

// consumerHeader is the consumer's start-up line.
func consumerHeader(d *diff, p *consumerPlan) string {
	s := fmt.Sprintf("topic: %s, threadCount %d, group: %s, suffix: %s, filterType: %s, expression: %s, msgTraceEnable: %s, aclEnable: %s",
		p.topic, p.threads, p.group, p.suffix, nullable(p.filterType, p.hasFilterType),
		nullable(p.expressionPath, p.hasExpression), javaBool(p.trace), javaBool(p.acl))
	if d.ReportInterval {
		s += fmt.Sprintf(", reportInterval: %d", p.reportMs)
	}
	return s
}

// consumerLine is the consumer's periodic line; the maxima are those since
// the previous line.
func consumerLine(d *diff, now time.Time, w []consumerSnap, maxB2C, maxS2C int64) string {
	first, last := w[0], w[len(w)-1]
	n := last.Count - first.Count
	tps := perSecond(n, last.At-first.At)
	b2c := f73(ratio(last.B2CTotal-first.B2CTotal, n))
	s2c := f73(ratio(last.S2CTotal-first.S2CTotal, n))
	fail := last.Failed - first.Failed
	if d.HumanConsumerTime {
		return fields(d,
			"Current Time: "+humanTime(now),
			fmt.Sprintf("Consume TPS: %d", tps),
			"AVG(B2C) RT(ms): "+b2c,
			"AVG(S2C) RT(ms): "+s2c,
			fmt.Sprintf("MAX(B2C) RT(ms): %d", maxB2C),
			fmt.Sprintf("MAX(S2C) RT(ms): %d", maxS2C),
			fmt.Sprintf("Consume Fail: %d", fail),
		)
	}
	return fmt.Sprintf("Current Time: %d TPS: %d FAIL: %d AVG(B2C) RT(ms): %s AVG(S2C) RT(ms): %s MAX(B2C) RT(ms): %d MAX(S2C) RT(ms): %d",
		now.UnixMilli(), tps, fail, b2c, s2c, maxB2C, maxS2C)
}

// batchHeader is the batch producer's start-up output.
func batchHeader(d *diff, p *batchPlan) string {
	if d.Pipes {
		return fmt.Sprintf("topic: %s, threadCount: %d, messageSize: %d, batchSize: %d, keyEnable: %s, propertySize: %d, "+
			"tagCount: %d, traceEnable: %s, aclEnable: %s\n compressEnable: %s, reportInterval: %d\n",
			p.topic, p.threads, p.size, p.batch, javaBool(p.keys), p.propertySize, p.tagCount, javaBool(p.trace), javaBool(p.acl),
			javaBool(p.compress), p.reportMs)
	}
	return fmt.Sprintf("topic: %s threadCount: %d messageSize: %d batchSize: %d keyEnable: %s propertySize: %d "+
		"tagCount: %d traceEnable: %s aclEnable: %s\n",
		p.topic, p.threads, p.size, p.batch, javaBool(p.keys), p.propertySize, p.tagCount, javaBool(p.trace), javaBool(p.acl))
}

// batchLine is the batch producer's periodic line.
func batchLine(d *diff, now time.Time, w []batchSnap, maxRT int64) string {
	first, last := w[0], w[len(w)-1]
	ms := last.At - first.At
	batches := last.SendOK - first.SendOK
	msgs := last.MsgOK - first.MsgOK
	t := "Current Time: " + humanTime(now)
	if !d.Pipes {
		t = fmt.Sprintf("Current Time: %d", now.UnixMilli())
	}
	return fields(d, t,
		fmt.Sprintf("Send TPS: %d", perSecond(batches, ms)),
		fmt.Sprintf("Send MPS: %d", perSecond(msgs, ms)),
		fmt.Sprintf("Max RT(ms): %d", maxRT),
		"Average RT(ms): "+f73(ratio(last.RTTotal-first.RTTotal, batches)),
		"Average Message RT(ms): "+f73(ratio(last.RTTotal-first.RTTotal, msgs)),
		fmt.Sprintf("Send Failed: %d", last.SendFailed),
		fmt.Sprintf("Send Message Failed: %d", last.MsgFailed),
	)
}

// errorCounts is a result file's errors by kind: name, count pairs, the
// kinds that did not happen left out.
func errorCounts(pairs ...any) map[string]int64 {
	var m map[string]int64
	for i := 0; i+1 < len(pairs); i += 2 {
		if n := pairs[i+1].(int64); n > 0 {
			if m == nil {
				m = map[string]int64{}
			}
			m[pairs[i].(string)] = n
		}
	}
	return m
}
