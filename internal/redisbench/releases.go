package redisbench

import (
	_ "embed"

	"github.com/perfclones/perfclones/internal/cli"
)

// usage74 is redis-benchmark 7.4's --help output (built with TLS), byte for byte.
//
//go:embed usage-7.4.txt
var usage74 string

// release holds every text and behaviour in which the redis-benchmark
// releases we emulate differ. The release's full version (what --version
// prints after "redis-benchmark ") is the table entry's Version.
type release struct {
	// usage is the --help text, also printed after "Invalid option".
	usage string
}

// releases is the table behind PERFCLONES_REDIS_VERSION. The vendors'
// documents use 7.x; 7.4 is the only release emulated.
var releases = cli.Releases[release]{
	Env:     "PERFCLONES_REDIS_VERSION",
	Default: "7.4",
	List: []cli.Release[release]{
		{Name: "7.4", Version: "7.4.1", Diff: release{usage: usage74}},
	},
}
