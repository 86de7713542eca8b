// Package redisbench is a drop-in clone of Redis's C redis-benchmark (7.4):
// the same options, the same output lines, and the same meaning of every
// number, measured by a client that is at least as fast.
package redisbench

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/lineout"
)

// runEnv is everything the benchmarks of one invocation share.
type runEnv struct {
	ctx     context.Context
	opts    *Options
	dialer  *dialer
	target  endpoint
	cluster *clusterConfig // nil unless --cluster
	threads int            // --threads, or the master count in cluster mode
	config  *serverConfig  // CONFIG GET results for the report, nil when unavailable
	random  *sharedRandom
	clock   *msClock

	out      *lineout.Writer
	errOut   *lineout.Writer
	progress *progressPrinter
}

// prefix returns the commands every new connection sends before its first
// batch (AUTH, CLIENT TRACKING, SELECT, HELLO 3, in the C tool's order) and
// how many replies they produce. SELECT is never sent to a cluster node.
func (env *runEnv) prefix(clusterClient bool) ([]byte, int) {
	o := env.opts
	var b []byte
	n := 0
	if o.HasPassword {
		if o.User != "" {
			b = append(b, encodeCommand([]string{"AUTH", o.User, o.Password})...)
		} else {
			b = append(b, encodeCommand([]string{"AUTH", o.Password})...)
		}
		n++
	}
	if o.EnableTracking {
		b = append(b, encodeCommand([]string{"CLIENT", "TRACKING", "on"})...)
		n++
	}
	if o.DBNum != 0 && !clusterClient {
		b = append(b, encodeCommand([]string{"SELECT", fmt.Sprint(o.DBNum)})...)
		n++
	}
	if o.RESP3 {
		b = append(b, encodeCommand([]string{"HELLO", "3"})...)
		n++
	}
	return b, n
}

func (env *runEnv) warn(line string) { env.errOut.Line(line) }

// msClock reads milliseconds since the epoch the way the C tool's mstime()
// does, but from the monotonic clock so that a clock step cannot distort a run.
type msClock struct {
	baseUnixMs int64
	base       time.Time
}

func newMsClock() *msClock {
	now := time.Now()
	return &msClock{baseUnixMs: now.UnixMilli(), base: now}
}

func (c *msClock) nowMs() int64 { return c.baseUnixMs + time.Since(c.base).Milliseconds() }

// Main runs redis-benchmark with the given arguments and returns the exit
// code. stdin is only read for -x.
func Main(ctx context.Context, args []string, sys cli.IO) int {
	stdin := sys.Stdin
	out := lineout.New(sys.Stdout)
	errOut := lineout.New(sys.Stderr)
	o, res := parseOptions(args)
	for _, w := range res.warnings {
		errOut.Line(w)
	}
	switch res.outcome {
	case outcomeHelp:
		out.Write(usageText)
		return 0
	case outcomeVersion:
		out.Line("redis-benchmark " + Version)
		return 0
	case outcomeInvalid:
		out.Write(fmt.Sprintf("Invalid option \"%s\" or option argument missing\n\n", res.badArg))
		out.Write(usageText)
		return 1
	case outcomeFatal:
		errOut.Line(res.fatal)
		return 1
	}

	seed := uint32(time.Now().Unix()) ^ uint32(os.Getpid())
	if o.HasSeed {
		seed = uint32(o.Seed)
	}
	env := &runEnv{
		ctx:     ctx,
		opts:    &o,
		target:  endpoint{host: o.Host, port: o.Port, socket: o.Socket},
		threads: o.Threads,
		random:  &sharedRandom{g: newGlibcRandom(seed)},
		clock:   newMsClock(),
		out:     out,
		errOut:  errOut,
	}
	env.progress = newProgressPrinter(env)
	tlsConfig, err := buildTLSConfig(o.TLS)
	if err != nil {
		errOut.Line(err.Error())
		return 1
	}
	env.dialer = &dialer{tls: tlsConfig}

	if err := env.discover(); err != nil {
		errOut.Line(err.Error())
		return 1
	}
	if o.KeepAlive == 0 {
		errOut.Line("WARNING: Keepalive disabled. You probably need 'echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse' for Linux and 'sudo sysctl -w net.inet.tcp.msl=1000' for Mac OS X in order to use a lot of clients/requests")
	}
	if len(o.Command) > 0 && o.HasTests {
		errOut.Line("WARNING: Option -t is ignored.")
	}
	if o.Idle {
		return env.idle()
	}
	if o.CSV {
		out.Line(`"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"`)
	}

	if len(o.Command) > 0 {
		var stdinArg []byte
		if o.StdinLast {
			if stdin != nil {
				stdinArg, err = io.ReadAll(stdin)
				if err != nil {
					errOut.Line("Error reading from stdin: " + err.Error())
					return 1
				}
			}
		}
		spec := customSpec(o.Command, stdinArg, o.StdinLast)
		for {
			// The report's "bytes payload" is the size of the encoded command.
			if code := env.runAndReport(spec, len(spec.command)); code != 0 {
				return code
			}
			if !o.Loop {
				return 0
			}
		}
	}

	payload := newPayloadGenerator()
	for {
		data := payload.next(o.DataSize)
		for _, spec := range selectedSuite(&o, data) {
			if code := env.runAndReport(spec, o.DataSize); code != 0 {
				return code
			}
		}
		if !o.CSV {
			out.Write("\n")
		}
		if !o.Loop {
			return 0
		}
	}
}

// runAndReport runs one benchmark and prints its report; a non-zero result
// is the exit code of a fatal error already printed.
func (env *runEnv) runAndReport(spec benchmarkSpec, payloadSize int) int {
	if err := env.ctx.Err(); err != nil {
		return 1
	}
	res, err := env.runBenchmark(spec)
	if err != nil {
		env.errOut.Line(err.Error())
		return 1
	}
	report := reportInput{
		opts:        env.opts,
		result:      res,
		payloadSize: payloadSize,
		config:      env.config,
		threads:     env.threads,
		cleanWidth:  env.progress.lastPrintedBytes(),
	}
	if env.cluster != nil {
		report.cluster = env.cluster.reportNodes()
	}
	env.out.Write(formatReport(&report))
	return 0
}

// discover connects once before the benchmarks: in cluster mode to read the
// cluster's masters, otherwise to read the server's persistence settings.
func (env *runEnv) discover() error {
	o := env.opts
	if o.Cluster {
		cc, err := fetchClusterConfig(env)
		if err != nil {
			return err
		}
		env.cluster = cc
		var b strings.Builder
		fmt.Fprintf(&b, "Cluster has %d master nodes:\n\n", len(cc.nodes))
		for i, n := range cc.nodes {
			fmt.Fprintf(&b, "Master %d: %s %s\n", i, n.name, n.ep)
		}
		b.WriteString("\n")
		env.out.Write(b.String())
		for _, n := range cc.nodes {
			s, err := openSetupConn(env.dialer, n.ep, o)
			if err == nil {
				n.config, err = fetchConfig(s, n.ep)
				s.close()
			}
			if n.config == nil {
				env.warn(fmt.Sprintf("WARNING: Could not fetch node CONFIG %s", n.ep))
			}
		}
		if env.threads == 0 {
			env.threads = len(cc.nodes)
		}
		return nil
	}
	s, err := openSetupConn(env.dialer, env.target, o)
	if err != nil {
		return err
	}
	defer s.close()
	cfg, err := fetchConfig(s, env.target)
	if err != nil {
		return err
	}
	if cfg == nil {
		env.warn("WARNING: Could not fetch server CONFIG")
	}
	env.config = cfg
	return nil
}
