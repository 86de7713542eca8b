package perftest

import (
	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/javaopts"
)

// diff is everything that differs between the PerfTest releases we
// emulate. Nothing else in the package checks a version.
type diff struct {
	// optionTable and metricsTable are the release's tables (options_tables.go).
	optionTable, metricsTable []javaopts.CommonsOption
	// versionLine is the first line of -v, after the ANSI bold code: the
	// release, the commit it was built from and the build time (2.18.0's
	// is its tag's commit time; the build ran minutes later).
	versionLine string
	// metricsRefactor is 2.19's reporting: "time 1.000 s", lines printed
	// on a fixed schedule and skipped when nothing happened, the summary
	// measured from when every agent has started and followed by latency
	// lines, compact format and CSV header before the first row; signals
	// print the stop line and summary; exceptions after setup also print
	// a bare "test stopped"; the exchange is declared durable (2.20+).
	metricsRefactor bool
	// legacyMetrics: -l prints min/avg/max (2.18 only).
	legacyMetrics bool
	// maxColumn: every latency group also has /max (2.24+), and compact
	// mode's time column is the local date-time.
	maxColumn bool
	// validationToStderr: the one-line errors of the checks that 2.18 prints
	// on stdout go to stderr.
	validationToStderr bool
	// dropZeroLatency: a consumer latency of 0 is not recorded (2.18 and,
	// through "latency > 0", every release up to 2.24).
	dropZeroLatency bool
	// multiAckAtMostQos: -A above a non-zero -q is refused (2.22 checks it).
	multiAckAtMostQos bool
	// tokenBucket: -r and -R pace with Guava's rate limiter (2.20+), which
	// stores at most one second's permits, so a stall is made up for with
	// one second's burst at most; 2.18 sleeps to keep the count since the
	// start in line, making up for any stall at once.
	tokenBucket bool
}

var releases = cli.Releases[diff]{
	Env:     "PERFCLONES_PERFTEST_VERSION",
	Default: "2.18",
	List: []cli.Release[diff]{
		{Name: "2.18", Version: "2.18.0", Diff: diff{
			optionTable: release218Options, metricsTable: release218MetricsOptions,
			versionLine:   "RabbitMQ Perf Test 2.18.0 (22dc09f80075f845d6da9eb793bd871f62d6ad4f; 2022-07-01T08:50:38Z)",
			legacyMetrics: true, dropZeroLatency: true,
		}},
		{Name: "2.22", Version: "2.22.1", Also: []string{"2.19", "2.20", "2.21", "2.23"}, Diff: diff{
			optionTable: release222Options, metricsTable: release222MetricsOptions,
			versionLine:     "RabbitMQ Perf Test 2.22.1 (b9d98f48f7a79b7bed6c4e3117ebff742e37d272; 2024-11-19T14:49:09Z)",
			metricsRefactor: true, validationToStderr: true, dropZeroLatency: true, multiAckAtMostQos: true, tokenBucket: true,
		}},
		{Name: "2.24", Version: "2.24.0", Also: []string{"2.25"}, Diff: diff{
			// Neither 2.24's option table nor its build are available
			// here: 2.22's table stands in, and -v names only the release.
			optionTable: release222Options, metricsTable: release222MetricsOptions,
			versionLine:     "RabbitMQ Perf Test 2.24.0",
			metricsRefactor: true, validationToStderr: true, maxColumn: true, dropZeroLatency: true, multiAckAtMostQos: true, tokenBucket: true,
		}},
	},
}
