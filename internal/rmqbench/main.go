// Package rmqbench is rocketmq-benchmark: Apache RocketMQ's benchmark
// programs (benchmark/producer.sh, consumer.sh, batchproducer.sh and
// tproducer.sh: the Producer, Consumer, BatchProducer and
// TransactionProducer classes of rocketmq-example) on rocketmq-client-go,
// printing the lines of the release PERFCLONES_ROCKETMQ_VERSION selects
// (5.3.3 by default, 4.9.8).
package rmqbench

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/lineout"
	"github.com/perfclones/perfclones/internal/result"
)

// Tool is rocketmq-benchmark for cmd/ binaries and the multi-call binary.
// The distribution's benchmark/ scripts run it in the background and
// return at once, as the originals do (their command ends with &).
var Tool = cli.Tool{
	Name:  ToolName,
	About: "Apache RocketMQ's benchmark/producer.sh, consumer.sh, batchproducer.sh, tproducer.sh",
	Main:  Main,
	Layout: []cli.Entry{
		{Path: "rocketmq/benchmark/producer.sh", Script: true, Args: []string{"producer"}, Background: true},
		{Path: "rocketmq/benchmark/consumer.sh", Script: true, Args: []string{"consumer"}, Background: true},
		{Path: "rocketmq/benchmark/tproducer.sh", Script: true, Args: []string{"tproducer"}, Background: true},
		{Path: "rocketmq/benchmark/batchproducer.sh", Script: true, Args: []string{"batchproducer"}, Background: true},
		{Path: "rocketmq/benchmark/shutdown.sh", Script: true, Args: []string{"shutdown"}},
	},
}

// modeUsage is the ending for a missing or unknown mode word.
func modeUsage() *cli.Exit {
	names := make([]string, 0, len(modes))
	for n := range modes {
		names = append(names, n)
	}
	sort.Strings(names)
	return &cli.Exit{Code: 2, Stderr: fmt.Sprintf("usage: %s %s|shutdown [ARGS...]\n", ToolName, strings.Join(names, "|"))}
}

// Main runs one mode: rocketmq-benchmark producer|consumer|batchproducer|
// tproducer ARGS..., or shutdown producer|consumer|tproducer|bproducer.
func Main(ctx context.Context, args []string, sys cli.IO) int {
	rel, err := releases.Select(sys.Getenv)
	if err != nil {
		return cli.Finish(sys, err)
	}
	if len(args) == 0 {
		return cli.Finish(sys, modeUsage())
	}
	if args[0] == "shutdown" {
		return cli.Finish(sys, shutdown(args[1:], sys))
	}
	m, ok := modes[args[0]]
	if !ok {
		return cli.Finish(sys, modeUsage())
	}
	d := &rel.Diff
	p, err := parse(m, d, args[1:])
	if err != nil {
		return cli.Finish(sys, err)
	}
	quietLogs(sys.Getenv)
	if m.Name != "consumer" {
		// A producer's live heap is its sends in flight; a consumer's is
		// the client's cache of pulled messages (up to a thousand per
		// queue), which a higher target would multiply.
		relaxGC(sys.Getenv)
	}
	out, errOut := lineout.New(sys.Stdout), lineout.New(sys.Stderr)
	rec := result.New(ToolName, rel.Name, args)
	var tests []result.Test
	switch m.Name {
	case "producer":
		tests, err = runProducer(ctx, d, p, sys.Getenv, out, errOut)
	case "consumer":
		tests, err = consume(ctx, d, p, sys.Getenv, out, errOut)
	case "batchproducer":
		tests, err = produceBatches(ctx, d, p, out, errOut)
	case "tproducer":
		tests, err = produceTransactions(ctx, d, p, sys.Getenv, out, errOut)
	}
	rec.Tests = tests
	if rec.Tests == nil {
		rec.Tests = []result.Test{}
	}
	ending := "completed"
	code, interrupted := cli.Interrupted(ctx)
	if interrupted {
		// The originals have no shutdown hook: nothing more is printed.
		ending, err = "interrupted", nil
	} else {
		code = cli.Finish(sys, err)
		if err != nil {
			ending = "failed"
		}
	}
	rec.Finish(ending, code, err)
	rec.Save(sys.Getenv, sys.Stderr)
	return code
}
