package kafkaperf

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/clock"
	"github.com/perfclones/perfclones/internal/jvm"
	"github.com/perfclones/perfclones/internal/lineout"
	"github.com/perfclones/perfclones/internal/result"
)

// ConsumerMain runs kafka-consumer-perf-test as the release that
// PERFCLONES_KAFKA_VERSION selects and returns its exit code.
// PERFCLONES_RESULT names the result file, written when the run ends (also
// by a signal).
func ConsumerMain(ctx context.Context, args []string, sys cli.IO) int {
	rel, err := selectRelease(sys.Getenv)
	if err != nil {
		return cli.Finish(sys, err)
	}
	out, errOut := lineout.New(sys.Stdout), lineout.New(sys.Stderr)
	// The default group is random per run, as in the original, so that
	// every run reads the topic from the start.
	group := fmt.Sprintf("perf-consumer-%d", rand.IntN(100000))
	o, err := parseConsumerOptions(args, group, &rel.Diff.consumer, rel.Version)
	if err != nil {
		return cli.Finish(sys, err)
	}
	rec := result.New(consumerToolName, rel.Name, args)
	test, err := runConsumer(ctx, o, &rel.Diff.consumer, out, errOut)
	if test != nil {
		rec.Tests = append(rec.Tests, *test)
	}
	// A signal ends the run as it ends the JVM: nothing more is printed,
	// and the exit code is 128 + the signal's number.
	code, ending := 0, "completed"
	if c, ok := cli.Interrupted(ctx); ok {
		code, ending = c, "interrupted"
	} else if code = cli.Finish(sys, err); err != nil {
		ending = "failed"
	}
	rec.Finish(ending, code, err)
	rec.Save(sys.Getenv, sys.Stderr)
	return code
}

// runConsumer prints the notices and the header, builds the plan, runs and
// reports. It returns the result file's test (nil when no run started) and
// how the run ended early, if it did.
func runConsumer(ctx context.Context, o *consumerOptions, rel *consumerRelease, out, errOut *lineout.Writer) (*result.Test, error) {
	for _, n := range o.notices {
		out.Line(n)
	}
	// The Scala tool reads every value before the header, the Java tool
	// after it.
	if rel.scala {
		if err := o.readValues(rel); err != nil {
			return nil, err
		}
	}
	if !o.hideHeader {
		if o.detailed {
			out.Line(detailedHeader)
		} else {
			out.Line(consumerHeader)
		}
	}
	if !rel.scala {
		if err := o.readValues(rel); err != nil {
			return nil, err
		}
	}
	plan, err := newConsumerPlan(o, rel, errOut.Line)
	if err != nil {
		return nil, err
	}
	wall := clock.NewWall()
	reports := make(chan detailedLine, 64)
	run := &consumerRun{plan: plan, clock: wall.Ms, reports: reports}
	var kept []detailedLine
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		printDetailed(reports, plan.dateFormat, out.Line, &kept)
	}()
	timedOut, runErr := run.run(ctx)
	close(reports)
	<-printed
	snap := run.snapshot()
	test := consumerTest(snap, kept)
	if ctx.Err() != nil {
		return &test, context.Cause(ctx)
	}
	if runErr != nil {
		line := exceptionLine(runErr)
		class := exceptionClass(line)
		return &test, rel.thrown(jvm.Exception{Class: class, Message: strings.TrimPrefix(line, class+": ")})
	}
	if timedOut {
		out.Line(fmt.Sprintf(rel.timeoutWarning, plan.timeoutMs))
	}
	if !plan.detailed {
		out.Line(summaryLine(snap, plan.dateFormat))
	}
	if plan.printMetrics {
		out.Write(formatMetrics(consumerMetrics(snap, plan.client.clientID)))
	}
	return &test, nil
}
