package kafkaperf

import (
	"fmt"
	"sort"
	"strings"

	"github.com/perfclones/perfclones/internal/javafmt"
)

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
