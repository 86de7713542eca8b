package kafkaperf

import "time"

// log4jTime is the time stamp of the Java tools' log lines ([%d] in log4j's
// ISO8601 layout).
func log4jTime() string { return time.Now().Format("2006-01-02 15:04:05,000") }

// msTime is a Java wall-clock millisecond (System.currentTimeMillis()) as a
// time.
func msTime(ms int64) time.Time { return time.UnixMilli(ms) }
