package rmqbench

import "github.com/perfclones/perfclones/internal/cli"

// diff is everything that differs between the emulated benchmark releases.
// No other file checks a version: they read these fields.
type diff struct {
	// Pipes: 5.1.0+ separate the fields of every report line with " | "
	// and the producer's start-up line with ", "; 4.9 with blanks.
	Pipes bool
	// HumanConsumerTime: the 5.x consumer prints Current Time as a local
	// date with milliseconds, the 4.9 one as epoch milliseconds (the 4.9
	// producer already prints the date).
	HumanConsumerTime bool
	// ReportInterval: -ri exists (5.1.2+); otherwise every report is 10 s
	// apart.
	ReportInterval bool
	// Compress: the producer's -c/-ct/-cl/-ch exist (5.1.1+) and the
	// batch producer's ACL keys are -ak/-sk (4.9: -c/-e).
	Compress bool
	// ParseErrorLine: a parse error prints the exception's message on
	// stderr before the help (5.1.4+).
	ParseErrorLine bool
	// DefaultParser: commons-cli 1.5's DefaultParser (5.1.0+: unique long
	// prefixes, -t=X gives X); otherwise 1.2's PosixParser (-t=X gives =X).
	DefaultParser bool
}

// releases is the table behind PERFCLONES_ROCKETMQ_VERSION. 5.x is the
// default: the seeds' vendor pages use 5.1.4 and later.
var releases = cli.Releases[diff]{
	Env:     "PERFCLONES_ROCKETMQ_VERSION",
	Default: "5.3",
	List: []cli.Release[diff]{
		{
			Name: "5.3", Version: "5.3.3",
			Also: []string{"5", "5.x", "5.1", "5.1.4", "5.2", "5.2.0", "5.3.0", "5.3.1", "5.3.2"},
			Diff: diff{Pipes: true, HumanConsumerTime: true, ReportInterval: true, Compress: true,
				ParseErrorLine: true, DefaultParser: true},
		},
		{
			Name: "4.9", Version: "4.9.8",
			Also: []string{"4", "4.x", "4.9.4", "4.9.5", "4.9.6", "4.9.7"},
			Diff: diff{},
		},
	},
}
