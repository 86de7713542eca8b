package kafkaperf

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/rcrowley/go-metrics"

	"github.com/perfclones/perfclones/internal/javafmt"
)

// processStart anchors wallMs: wall-clock milliseconds as the Java tools read
// them, advanced by the monotonic clock so that a clock step cannot distort
// a latency.
var processStart = time.Now()

func wallMs() int64 { return processStart.UnixMilli() + time.Since(processStart).Milliseconds() }

// log4jTime is the time stamp of the Java tools' log lines ([%d] in log4j's
// ISO8601 layout).
func log4jTime() string { return time.Now().Format("2006-01-02 15:04:05,000") }

// keySource gives the key of record i (--key-distribution, Kafka 4.4): none
// (null keys), range (0, 1, ... KEY-RANGE-1 round robin) or random, written
// as decimal text.
type keySource interface {
	key(i int64) sarama.Encoder
}

type nullKeys struct{}

func (nullKeys) key(int64) sarama.Encoder { return nil }

type rangeKeys struct{ n int64 }

func (k rangeKeys) key(i int64) sarama.Encoder {
	return sarama.ByteEncoder(strconv.AppendInt(nil, i%k.n, 10))
}

type randomKeys struct {
	n   int64
	rng *rand.Rand
}

func (k *randomKeys) key(int64) sarama.Encoder {
	return sarama.ByteEncoder(strconv.AppendInt(nil, k.rng.Int64N(k.n), 10))
}

func newKeySource(dist string, n int64, seed uint64) keySource {
	switch dist {
	case "range":
		return rangeKeys{n: n}
	case "random":
		return &randomKeys{n: n, rng: rand.New(rand.NewPCG(seed, 1))}
	}
	return nullKeys{}
}

// metric is one row of the --print-metrics table.
type metric struct {
	group, name string
	tags        [][2]string // in the order Java's map prints them
	value       any         // float64 prints as %.3f, anything else as text
}

func (m metric) key() string {
	var tags []string
	for _, t := range m.tags {
		tags = append(tags, t[0]+"="+t[1])
	}
	return m.group + ":" + m.name + ":{" + strings.Join(tags, ", ") + "}"
}

// formatMetrics lays the table out as Kafka's ToolsUtils.printMetrics does:
// a blank line, a header padded to the longest name, then one sorted row per
// metric, doubles with three decimals.
func formatMetrics(ms []metric) string {
	width := len("Metric Name")
	rows := make([][2]string, 0, len(ms))
	for _, m := range ms {
		k := m.key()
		width = max(width, len(k))
		var v string
		switch x := m.value.(type) {
		case float64:
			v = javafmt.Fixed(x, 3)
		default:
			v = fmt.Sprint(x)
		}
		rows = append(rows, [2]string{k, v})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i][0] < rows[j][0] })
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-*s   %s\n", width, "Metric Name", "Value")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s : %s\n", width, r[0], r[1])
	}
	return b.String()
}

// producerMetrics reports the producer's numbers under the Java client's
// metric names where sarama measures the same thing. The Java client has
// many more; which names appear cannot match it, only the layout does.
func producerMetrics(r *producerRun, cfg *sarama.Config) []metric {
	tags := [][2]string{{"client-id", cfg.ClientID}}
	m := func(name string, v any) metric {
		return metric{group: "producer-metrics", name: name, tags: tags, value: v}
	}
	out := []metric{
		m("record-send-total", float64(r.acked.Load()+r.failed.Load())),
		m("record-error-total", float64(r.failed.Load())),
	}
	reg := cfg.MetricRegistry
	if h, ok := reg.Get("batch-size").(metrics.Histogram); ok {
		out = append(out, m("batch-size-avg", h.Mean()), m("batch-size-max", float64(h.Max())))
	}
	if h, ok := reg.Get("records-per-request").(metrics.Histogram); ok {
		out = append(out, m("records-per-request-avg", h.Mean()))
	}
	if h, ok := reg.Get("request-latency-in-ms").(metrics.Histogram); ok {
		out = append(out, m("request-latency-avg", h.Mean()), m("request-latency-max", float64(h.Max())))
	}
	if h, ok := reg.Get("compression-ratio").(metrics.Histogram); ok {
		out = append(out, m("compression-rate-avg", h.Mean()/100))
	}
	for java, sarama := range map[string]string{
		"record-send": "record-send-rate", "outgoing-byte": "outgoing-byte-rate", "incoming-byte": "incoming-byte-rate",
		"request": "request-rate", "response": "response-rate",
	} {
		if meter, ok := reg.Get(sarama).(metrics.Meter); ok {
			out = append(out, m(java+"-rate", meter.RateMean()))
			if java != "record-send" {
				out = append(out, m(java+"-total", float64(meter.Count())))
			}
		}
	}
	return out
}
