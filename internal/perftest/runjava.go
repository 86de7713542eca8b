package perftest

import (
	"context"
	"fmt"
	"strings"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/jvm"
)

// This file is the top of the package: the tool as the binaries run it,
// and the dispatch on the class name that reaches PerfTest (main.go),
// PerfTestMulti (multi.go) and WebServer (web.go).

// Tool is PerfTest as the cmd/ binaries run it. The JVM exits with 128 +
// the signal's number on SIGINT and SIGTERM. The distribution's
// bin/runjava is a script that passes the class name first; Runjava
// dispatches on it.
var Tool = cli.Tool{
	Name:    "perftest",
	Aliases: []string{"perf-test"},
	About:   "RabbitMQ PerfTest (com.rabbitmq.perf.PerfTest); bin/runjava CLASS ARGS...",
	Main:    Runjava,
	Layout: []cli.Entry{
		{Path: "rabbitmq-perf-test/bin/runjava", Script: true},
		{Path: "rabbitmq-perf-test/html", Files: Assets},
	},
}

// classPrefix starts the class names bin/runjava is given.
const classPrefix = "com.rabbitmq.perf."

// Runjava is `perftest ARGS...` (PerfTest), or
// `perftest com.rabbitmq.perf.CLASS ARGS...` as bin/runjava runs it.
// bin/runjava hands JAVA_OPTS to java; here it stays in the environment,
// where PerfTest's Main reads its javax.net.ssl system properties (the
// key and trust stores of the JVM's default SSL context, auth.go).
func Runjava(ctx context.Context, args []string, sys cli.IO) int {
	args = jvm.Args(args)
	if len(args) > 0 && strings.HasPrefix(args[0], classPrefix) {
		switch args[0] {
		case classPrefix + "PerfTest":
			args = args[1:]
		case classPrefix + "PerfTestMulti":
			return MultiMain(ctx, args[1:], sys)
		case classPrefix + "WebServer":
			return WebMain(ctx, args[1:], sys)
		default:
			fmt.Fprintf(sys.Stderr, "Error: Could not find or load main class %s\nCaused by: java.lang.ClassNotFoundException: %s\n", args[0], args[0])
			return 1
		}
	}
	return Main(ctx, args, sys)
}
