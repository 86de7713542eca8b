package rmqbench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	rmqerrors "github.com/apache/rocketmq-client-go/v2/errors"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
	"github.com/perfclones/perfclones/internal/clock"
)

// quietLogs turns rocketmq-client-go's logger (logrus on stderr at Info)
// off, once per process: stdout carries only the original's lines and
// stderr only what the original prints there. Setting
// ROCKETMQ_GO_LOG_LEVEL keeps the client's own logging, for debugging.
func quietLogs(getenv func(string) string) {
	quietOnce.Do(func() {
		if strings.TrimSpace(getenv("ROCKETMQ_GO_LOG_LEVEL")) != "" {
			return
		}
		rlog.SetLogger(silentLogger{})
	})
}

var quietOnce sync.Once

// gcPercent is the collector's target when GOGC is not set. The live heap
// of a run is a few MB (routes, tables, histograms) while every send
// leaves garbage: about 5 KB in some 90 objects through
// rocketmq-client-go (its JSON request and reply headers and their maps,
// the reply future, the send context), far less on the plain producer's
// own path, where Go's default of 100 still costs about 3 us more CPU per
// message at -w 64 -s 1024. At 400 the collector runs a quarter as often
// for about 10 MB more resident memory.
const gcPercent = 400

// relaxGC sets the collector's target to gcPercent unless GOGC chooses
// one.
func relaxGC(getenv func(string) string) {
	if strings.TrimSpace(getenv("GOGC")) == "" {
		debug.SetGCPercent(gcPercent)
	}
}

type silentLogger struct{}

func (silentLogger) Debug(string, map[string]interface{})   {}
func (silentLogger) Info(string, map[string]interface{})    {}
func (silentLogger) Warning(string, map[string]interface{}) {}
func (silentLogger) Error(string, map[string]interface{})   {}
func (silentLogger) Fatal(string, map[string]interface{})   {}
func (silentLogger) Level(string)                           {}
func (silentLogger) OutputPath(string) error                { return nil }

// sendOutcome is how the original's sender counts one attempt.
type sendOutcome int

const (
	sent sendOutcome = iota
	// sendFailedPause: RemotingException (connection, timeout): Send
	// Failed, then the sender sleeps 3 s.
	sendFailedPause
	// sendFailedNow: MQClientException (no route, no name server): Send
	// Failed, no sleep.
	sendFailedNow
	// responseFailed: MQBrokerException (the broker answered an error
	// code): Response Failed, then 3 s of sleep.
	responseFailed
	// sendRefused: the broker refused the connection (it is gone). The
	// original counts a RemotingException and sleeps 3 s, and its route
	// still names the dead broker, so a -q run would take hours to use up
	// its quota: ours counts Send Failed without the pause when the
	// sender has a quota, so the run ends with its summary.
	sendRefused
)

// failurePause is the original senders' sleep after most failures.
const failurePause = 3 * time.Second

// classify maps a rocketmq-client-go error to the original's counters.
func classify(err error) sendOutcome {
	if err == nil {
		return sent
	}
	var broker *primitive.MQBrokerErr
	if errors.As(err, &broker) {
		return responseFailed
	}
	msg := err.Error()
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), strings.Contains(msg, "connection refused"):
		return sendRefused
	case strings.HasPrefix(msg, "CODE: "):
		return responseFailed
	case strings.Contains(msg, "route info not found"),
		errors.Is(err, rmqerrors.ErrTopicNotExist),
		errors.Is(err, rmqerrors.ErrRouteNotFound),
		errors.Is(err, rmqerrors.ErrNoNameserver),
		errors.Is(err, rmqerrors.ErrNotRunning):
		return sendFailedNow
	}
	return sendFailedPause
}

// resolveNamesrv turns host:port entries into ip:port, which the Go
// client insists on (Java resolves names itself).
func resolveNamesrv(addrs []string) ([]string, error) {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			return nil, fmt.Errorf("bad name server address %q: %v", a, err)
		}
		if net.ParseIP(host) == nil {
			ips, err := net.LookupHost(host)
			if err != nil || len(ips) == 0 {
				return nil, fmt.Errorf("cannot resolve name server %q: %v", host, err)
			}
			host = ips[0]
		}
		out = append(out, net.JoinHostPort(host, port))
	}
	return out, nil
}

// namesrvReachable dials every name server; it returns nil when one
// accepts a connection, else the last error. The original's client finds
// out on its first route lookup; ours asks before it blames a failed
// send on the topic.
func namesrvReachable(ctx context.Context, addrs []string) error {
	if len(addrs) == 0 {
		return rmqerrors.ErrNoNameserver
	}
	var last error
	d := net.Dialer{Timeout: 3 * time.Second}
	for _, a := range addrs {
		c, err := d.DialContext(ctx, "tcp", a)
		if err == nil {
			c.Close()
			return nil
		}
		last = err
	}
	return last
}

// credentials are the ACL keys: only used with -a true. The real defaults
// are the other way round from what the help says.
type credentials struct {
	enabled              bool
	accessKey, secretKey string
}

// instanceMillis is the client instance name the originals use, the
// current time in milliseconds, made unique within this process: the Go
// client shares one connection set per instance name, so two runs in one
// process (tests, the multi-call binary) must not start in the same
// millisecond under the same name.
func instanceMillis() int64 {
	for {
		now, last := clock.NewWall().Ms(), lastInstance.Load()
		if now <= last {
			now = last + 1
		}
		if lastInstance.CompareAndSwap(last, now) {
			return now
		}
	}
}

var lastInstance atomic.Int64

// producerGroup is the Java benchmark producer's group.
const producerGroup = "benchmark_producer"

// producerOptions are the Java benchmark producer's client settings:
// group benchmark_producer, the start time as instance name, 3 s send
// timeout, 2 retries, and compression only when -c true.
func producerOptions(namesrv []string, instance int64, cred credentials, trace, compress bool, level, over int) []producer.Option {
	opts := []producer.Option{
		producer.WithNameServer(namesrv),
		producer.WithGroupName(producerGroup),
		producer.WithInstanceName(strconv.FormatInt(instance, 10)),
		producer.WithSendMsgTimeout(3 * time.Second),
		producer.WithRetry(2),
		producer.WithDefaultTopicQueueNums(4),
	}
	if compress {
		opts = append(opts, producer.WithCompressMsgBodyOverHowmuch(over), producer.WithCompressLevel(level))
	} else {
		opts = append(opts, producer.WithCompressMsgBodyOverHowmuch(math.MaxInt32))
	}
	if cred.enabled {
		opts = append(opts, producer.WithCredentials(primitive.Credentials{AccessKey: cred.accessKey, SecretKey: cred.secretKey}))
	}
	if trace {
		tc := &primitive.TraceConfig{Access: primitive.Local, NamesrvAddrs: namesrv}
		if cred.enabled {
			tc.Credentials = primitive.Credentials{AccessKey: cred.accessKey, SecretKey: cred.secretKey}
		}
		opts = append(opts, producer.WithTrace(tc))
	}
	return opts
}

// noNamesrv is the client of a run without any name server address: every
// send fails at once, as the original's does.
type noNamesrv struct{}

func (noNamesrv) SendSync(context.Context, ...*primitive.Message) (*primitive.SendResult, error) {
	return nil, rmqerrors.ErrNoNameserver
}

func (noNamesrv) SendAsync(_ context.Context, f func(context.Context, *primitive.SendResult, error), _ ...*primitive.Message) error {
	return rmqerrors.ErrNoNameserver
}

func (noNamesrv) Start() error    { return nil }
func (noNamesrv) Shutdown() error { return nil }

func (noNamesrv) SendMessageInTransaction(context.Context, *primitive.Message) (*primitive.TransactionSendResult, error) {
	return nil, rmqerrors.ErrNoNameserver
}
