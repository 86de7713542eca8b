// Package redisbench is a drop-in clone of Redis's C redis-benchmark (7.4):
// the same options, the same output lines, and the same meaning of every
// number, measured by a client that is at least as fast.
//
// options.go parses the command line into Options; plan.go turns them into
// the plan of a run (endpoints, TLS, connection prefixes, the tests and
// their encoded commands); run.go connects and runs the clients, which only
// count and record; report.go formats the original's lines and the result
// file's tests from what was recorded; releases.go holds the emulated
// release's texts.
package redisbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/clock"
	"github.com/perfclones/perfclones/internal/lineout"
	"github.com/perfclones/perfclones/internal/result"
)

// Tool is redis-benchmark as cmd/ binaries run it. Like the C tool, a
// closed pipe or a hang-up does not end the run, and SIGINT or SIGTERM
// kills it (after our result file is written).
var Tool = cli.Tool{
	Name:          toolName,
	About:         "Redis's redis-benchmark",
	Main:          Main,
	IgnoreSignals: []os.Signal{syscall.SIGPIPE, syscall.SIGHUP},
	DiesBySignal:  true,
	// Where a Redis source tree keeps the binary after make (./redis-benchmark
	// in src/, /root/redis-6.2.6/src/redis-benchmark); bin/redis-benchmark
	// stands for make install's copy on PATH.
	Layout: []cli.Entry{{Path: "redis/src/redis-benchmark"}},
}

// toolName is the original's command name, which the result file names.
const toolName = "redis-benchmark"

// Main runs redis-benchmark with the given arguments and returns the exit
// code. stdin is only read for -x.
func Main(ctx context.Context, args []string, sys cli.IO) int {
	rel, err := releases.Select(sys.Getenv)
	if err != nil {
		return cli.Finish(sys, err)
	}
	out := lineout.New(sys.Stdout)
	errOut := lineout.New(sys.Stderr)
	o, parsed := parseOptions(args)
	for _, w := range parsed.warnings {
		errOut.Line(w)
	}
	switch parsed.outcome {
	case outcomeHelp:
		out.Write(rel.Diff.usage)
		return 0
	case outcomeVersion:
		out.Line("redis-benchmark " + rel.Version)
		return 0
	case outcomeInvalid:
		out.Write(fmt.Sprintf("Invalid option \"%s\" or option argument missing\n\n", parsed.badArg))
		out.Write(rel.Diff.usage)
		return 1
	case outcomeFatal:
		errOut.Line(parsed.fatal)
		return 1
	}

	rec := result.New(toolName, rel.Name, args)
	inv := &invocation{ctx: ctx, stdin: sys.Stdin, out: out, errOut: errOut}
	if sys.Getenv(result.Env) != "" {
		inv.rec = rec
	}
	err = inv.run(&o)
	if ctx.Err() != nil {
		// The C tool dies by the signal and prints nothing more; we stop,
		// keep what was measured and return the code of that death.
		code, ok := cli.Interrupted(ctx)
		if !ok {
			code = 130 // cancelled by our caller: as if by Ctrl+C
		}
		rec.Finish("interrupted", code, nil)
		rec.Save(sys.Getenv, sys.Stderr)
		return code
	}
	code := cli.Finish(sys, err)
	ending := "completed"
	if err != nil {
		ending = "failed"
	}
	rec.Finish(ending, code, err)
	rec.Save(sys.Getenv, sys.Stderr)
	return code
}

// invocation is one run of Main past option parsing.
type invocation struct {
	ctx    context.Context
	stdin  io.Reader
	out    *lineout.Writer
	errOut *lineout.Writer
	// rec collects the tests for the result file; nil when none is asked for
	// (an -l run would otherwise grow it forever for nothing).
	rec *result.Run
}

// run connects, runs every test and prints their reports. Its error is
// the fatal message the C tool prints.
func (inv *invocation) run(o *Options) error {
	wall := clock.NewWall()
	progress := newProgressPrinter(inv.out, wall, o.CSV)
	p, err := buildPlan(o)
	if err != nil {
		return err
	}
	if msg := memoryRefusal(p.bufferBytes(p.command), availableMemory()); msg != "" {
		return cli.Failure(msg)
	}
	s := &session{
		plan:    p,
		threads: p.threads,
		random:  &sharedRandom{g: newGlibcRandom(p.seed)},
		clock:   wall,
		notify:  func(f *requestFailure) { inv.errOut.Line(f.Error()) },
	}
	if err := inv.discover(s); err != nil {
		return err
	}
	if p.warnKeepAliveOff {
		inv.errOut.Line(keepAliveOffWarning)
	}
	if p.warnTestsIgnored {
		inv.errOut.Line(testsIgnoredWarning)
	}
	if p.idle {
		return inv.idle(s, progress)
	}
	if p.report.csv {
		inv.out.Line(csvHeader)
	}

	if p.command != nil {
		var stdinArg []byte
		if p.stdinLast {
			if stdinArg, err = readAll(inv.ctx, inv.stdin); err != nil {
				return err
			}
		}
		spec := p.customTest(stdinArg)
		for {
			if err := inv.runTest(s, progress, spec); err != nil {
				return err
			}
			if !p.loop {
				return nil
			}
		}
	}
	for {
		for _, spec := range p.nextPass() {
			if err := inv.runTest(s, progress, spec); err != nil {
				return err
			}
		}
		if !p.report.csv {
			inv.out.Write("\n")
		}
		if !p.loop {
			return nil
		}
	}
}

// readAll reads -x's argument from stdin, or gives up when ctx ends.
func readAll(ctx context.Context, stdin io.Reader) ([]byte, error) {
	if stdin == nil {
		return nil, nil
	}
	type read struct {
		b   []byte
		err error
	}
	done := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(stdin)
		done <- read{b, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, cli.Failure("Error reading from stdin: " + r.err.Error())
		}
		return r.b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// runTest runs one test, records it and prints its report.
func (inv *invocation) runTest(s *session, progress *progressPrinter, spec benchmarkSpec) error {
	if err := inv.ctx.Err(); err != nil {
		return err
	}
	r := s.newBenchmark(inv.ctx, spec)
	if err := r.openClients(s.plan.connections); err != nil {
		return err
	}
	progress.beginTest(spec, s.threads)
	r.start()
	ticker := progress.follow(r, r.startMs, r.done)
	res := r.wait()
	ticker.stop()
	intervals := progress.endTest(res)
	if inv.rec != nil {
		t, err := resultTest(res, intervals)
		if err != nil {
			return err
		}
		inv.rec.Tests = append(inv.rec.Tests, t)
	}
	if res.fatal != nil {
		return res.fatal
	}
	if err := inv.ctx.Err(); err != nil {
		return err
	}
	report := reportInput{
		cfg:        s.plan.report,
		result:     res,
		config:     s.config,
		threads:    s.threads,
		cleanWidth: progress.lastPrintedBytes(),
	}
	if s.cluster != nil {
		report.cluster = s.cluster.reportNodes()
	}
	inv.out.Write(formatReport(&report))
	return nil
}

// discover connects once before the benchmarks: in cluster mode to read the
// cluster's masters, otherwise to read the server's persistence settings.
func (inv *invocation) discover(s *session) error {
	p := s.plan
	if p.cluster {
		cc, err := fetchClusterConfig(inv.ctx, p.dialer, p.target, p.auth, inv.errOut.Line)
		if err != nil {
			return err
		}
		s.cluster = cc
		inv.out.Write(clusterBanner(cc.nodes))
		for _, n := range cc.nodes {
			conn, err := openSetupConn(inv.ctx, p.dialer, n.ep, p.auth)
			if err == nil {
				// A node that refuses CONFIG only loses its report lines.
				n.config, _ = fetchConfig(conn, n.ep)
				conn.shut()
			}
			if err := inv.ctx.Err(); err != nil {
				return err // the reply was cut short by the signal
			}
			if n.config == nil {
				inv.errOut.Line(noNodeConfigWarning(n.ep))
			}
		}
		if s.threads == 0 {
			s.threads = len(cc.nodes)
		}
		return nil
	}
	conn, err := openSetupConn(inv.ctx, p.dialer, p.target, p.auth)
	if err != nil {
		return inv.setupFailed(err, p.dialer)
	}
	defer conn.shut()
	cfg, err := fetchConfig(conn, p.target)
	if ctxErr := inv.ctx.Err(); ctxErr != nil {
		return ctxErr // the reply was cut short by the signal
	}
	if err != nil {
		return err
	}
	if cfg == nil {
		inv.errOut.Line(noConfigWarning)
	}
	s.config = cfg
	return nil
}

// setupFailed handles a failed set-up connection as the C tool does where
// that can be told apart: a TLS failure is only a missing CONFIG there (its
// set-up names a bad CA file or certificate, not a failed handshake), and
// the clients' connections then fail with the TLS set-up's error, which
// becomes the run's. Anything else ends the run with its own error.
func (inv *invocation) setupFailed(err error, d *dialer) error {
	var te *tlsError
	var ce *connectError
	switch {
	case errors.As(err, &te) && !te.timeout:
		if !te.handshake {
			inv.errOut.Line(te.Error())
		}
		inv.errOut.Line(noConfigWarning)
		return nil
	case errors.As(err, &ce) && d.tlsErr != nil:
		inv.errOut.Line(ce.Error())
		inv.errOut.Line(noConfigWarning)
		return d.tlsErr
	}
	return err
}

// idle is -I: open the connections, send nothing, and print the number of
// live clients on every tick until interrupted or a connection breaks.
func (inv *invocation) idle(s *session, progress *progressPrinter) error {
	inv.out.Write(idleBanner(s.plan.report.clients))
	ic, err := s.openIdle(inv.ctx)
	if err != nil {
		return err
	}
	defer ic.close()
	timer := time.NewTimer(progress.untilNextTick())
	defer timer.Stop()
	for {
		select {
		case <-inv.ctx.Done():
			return inv.ctx.Err()
		case msg := <-ic.failed:
			return cli.Failure(msg)
		case <-timer.C:
			if !s.plan.report.csv {
				inv.out.Write(idleTick(len(ic.conns)))
			}
			timer.Reset(tickMs * time.Millisecond)
		}
	}
}
