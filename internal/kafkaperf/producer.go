package kafkaperf

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/clock"
	"github.com/perfclones/perfclones/internal/javaopts"
	"github.com/perfclones/perfclones/internal/lineout"
	"github.com/perfclones/perfclones/internal/result"
)

// ProducerMain runs kafka-producer-perf-test as the release that
// PERFCLONES_KAFKA_VERSION selects and returns its exit code. COLUMNS sets
// the help's wrap width as in argparse4j; PERFCLONES_RESULT names the
// result file, written when the run ends (also by a signal).
func ProducerMain(ctx context.Context, args []string, sys cli.IO) int {
	rel, err := selectRelease(sys.Getenv)
	if err != nil {
		return cli.Finish(sys, err)
	}
	out, errOut := lineout.New(sys.Stdout), lineout.New(sys.Stderr)
	o, err := parseProducerOptions(args, javaopts.FormatWidth(sys.Getenv("COLUMNS")), &rel.Diff.producer)
	if err != nil {
		return cli.Finish(sys, err)
	}
	rec := result.New(producerToolName, rel.Name, args)
	tests, err := runProducer(ctx, o, &rel.Diff.producer, out, errOut)
	rec.Tests = tests
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

// runProducer runs the producer: the plan, the run, the report. It returns the
// result file's tests and how the run ended early, if it did (a *cli.Exit,
// or the context's error after a signal, when nothing more is printed).
func runProducer(ctx context.Context, o *producerOptions, rel *producerRelease, out, errOut *lineout.Writer) ([]result.Test, error) {
	plan, err := newProducerPlan(o, rel, out.Line, errOut.Line)
	if err != nil {
		return nil, err
	}
	client, err := kgo.NewClient(plan.producerClientOptions()...)
	if err != nil {
		return nil, cli.Failure(javaClientError(err))
	}
	defer client.Close()
	var refused *authRefusal
	if err := waitForTopic(ctx, client, plan.topic, plan.maxBlock, plan.client.retryBackoff); errors.As(err, &refused) {
		// Java's sends fail one by one; the run ends with its final line
		// and exit code 0.
	} else if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, cli.Failure(err.Error())
	}
	if plan.warmupRecords > 0 {
		out.Line(fmt.Sprintf("Warmup first %d records. Steady state results will print after the complete test summary.", plan.warmupRecords))
	}
	wall := clock.NewWall()
	run := newProducerRun(plan, client, wall, errOut.Line)
	if refused != nil {
		run.refused = refused.line
	}
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		printWindows(run.cuts, wall.Ms, out.Line)
	}()
	runErr := run.run(ctx)
	close(run.cuts)
	<-printed

	// The result holds what was measured, also when a signal ended the run.
	whole, steady := run.snapshots(wall.Ms())
	tests, resErr := producerTests(run, whole, steady)
	if ctx.Err() != nil {
		// Java dies by the signal: nothing more is printed.
		return tests, context.Cause(ctx)
	}
	if runErr != nil {
		errOut.Line(javaClientError(runErr))
	}
	out.Line(finalLine(whole, ""))
	if steady != nil {
		out.Line(finalLine(*steady, " steady state"))
	}
	if plan.printMetrics {
		completed := run.acked.Load() + run.failed.Load()
		out.Write(formatMetrics(producerMetrics(plan.clientID, completed, run.failed.Load(),
			plan.client.hooks.snapshot(time.Duration(whole.elapsedMs)*time.Millisecond))))
	}
	return tests, resErr
}

// producerTests are the result file's tests: the whole run ("produce")
// and, after a warm-up, the steady state.
func producerTests(run *producerRun, whole sendSnapshot, steady *sendSnapshot) ([]result.Test, error) {
	t, err := producerTest("produce", run.whole, whole, run.errorCounts())
	if err != nil {
		return nil, err
	}
	tests := []result.Test{t}
	if steady != nil {
		st, err := producerTest("produce steady state", run.steady.Load(), *steady, nil)
		if err != nil {
			return tests, err
		}
		tests = append(tests, st)
	}
	return tests, nil
}
