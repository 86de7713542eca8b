package kafkaperf

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/javafmt"
)

// consumerToolName is the original's command name, which the result file
// names the tool by.
const consumerToolName = "kafka-consumer-perf-test"

// consumerPlan is everything one consumer run needs, decided once from the
// options and the client settings.
type consumerPlan struct {
	topics            []string       // explicit topic, or resolved from include
	include           *regexp.Regexp // --include, matched against the cluster's topics
	groupID           string
	numRecords        int64
	timeoutMs         int64
	reportingInterval int64
	detailed          bool
	dateFormat        *javafmt.DateFormat
	printMetrics      bool
	joinStartAtZero   bool // the rebalance clock starts at 0 (up to 2.7)
	client            *clientSettings

	// The consumer's Java settings, which consumerClientOptions maps onto franz-go.
	fetchSize          int32 // --fetch-size: max.partition.fetch.bytes
	fetchMaxBytes      int32 // fetch.max.bytes
	fetchMinBytes      int32 // fetch.min.bytes
	fetchMaxWait       time.Duration
	maxPollRecords     int
	fromLatest         bool // --from-latest: auto.offset.reset=latest
	sessionTimeout     time.Duration
	heartbeatInterval  time.Duration
	autoCommit         bool
	autoCommitInterval time.Duration
	readCommitted      bool
	allowAutoCreate    bool     // allow.auto.create.topics
	assignors          []string // partition.assignment.strategy: range, roundrobin, sticky, cooperative-sticky
}

// newConsumerPlan maps the client settings (their warnings go to warn).
// A setting the Java consumer refuses ends the run as its construction
// failure does: the message, then the exception and its cause, on stderr.
func newConsumerPlan(o *consumerOptions, rel *consumerRelease, warn func(string)) (*consumerPlan, error) {
	// ConfigDef's refusals (types, bounds, choices) come from
	// ConsumerConfig, before the consumer is built: the tool prints the
	// message and the ConfigException itself. Later ones are the
	// consumer's construction failure.
	configDef := func(err error) error {
		ce, ok := err.(*configError)
		if !ok || rel.scala {
			return constructionFailure(err, rel)
		}
		return &cli.Exit{Code: 1, Stderr: ce.msg + "\n" + configException(ce.msg).String() + "\n"}
	}
	settings, err := newClientSettings(consumerClient, o.props, log4jTime)
	if err != nil {
		return nil, configDef(err)
	}
	for _, w := range rel.logged(settings.warnings) {
		warn(w)
	}
	p := &consumerPlan{
		include:           o.include,
		groupID:           o.group,
		numRecords:        o.numRecords,
		timeoutMs:         o.timeoutMs,
		reportingInterval: o.reportingInterval,
		detailed:          o.detailed,
		dateFormat:        o.dateFormat,
		printMetrics:      o.printMetrics,
		joinStartAtZero:   rel.joinStartAtZero,
		client:            settings,
		fetchSize:         o.fetchSize,
		fromLatest:        o.fromLatest,
	}
	if err := settings.applyConsumer(p); err != nil {
		return nil, configDef(err)
	}
	if err := resolvableBootstrap(settings.bootstrap, warn); err != nil {
		return nil, constructionFailure(err, rel)
	}
	if o.topic != "" {
		p.topics = []string{o.topic}
	}
	return p, nil
}

// constructionFailure is the consumer's construction failure: a KafkaException caused
// by the ConfigException.
func constructionFailure(err error, rel *consumerRelease) error {
	ce, ok := err.(*configError)
	if !ok {
		return err
	}
	return rel.thrown(constructionFailed("consumer", ce))
}

// applyConsumer reads the consumer settings into the plan, with the Java
// consumer's defaults.
func (s *clientSettings) applyConsumer(p *consumerPlan) error {
	intSetting := func(key string, def, least int64) (int32, error) {
		n, err := s.atLeast(key, def, least)
		return int32(min(n, 1<<31-1)), err
	}
	var err error
	if p.fetchMinBytes, err = intSetting("fetch.min.bytes", 1, 0); err != nil {
		return err
	}
	if p.fetchMaxBytes, err = intSetting("fetch.max.bytes", 52428800, 0); err != nil {
		return err
	}
	waitMs, err := s.atLeast("fetch.max.wait.ms", 500, 0)
	if err != nil {
		return err
	}
	p.fetchMaxWait = time.Duration(waitMs) * time.Millisecond
	maxPoll, err := s.atLeast("max.poll.records", 500, 1)
	if err != nil {
		return err
	}
	p.maxPollRecords = int(min(maxPoll, 1<<31-1))
	if p.sessionTimeout, err = s.durationMs("session.timeout.ms", 45000); err != nil {
		return err
	}
	if p.heartbeatInterval, err = s.durationMs("heartbeat.interval.ms", 3000); err != nil {
		return err
	}
	p.autoCommit = true
	if v, ok := s.get("enable.auto.commit"); ok && strings.EqualFold(strings.TrimSpace(v), "false") {
		p.autoCommit = false
	}
	if p.autoCommitInterval, err = s.durationMs("auto.commit.interval.ms", 5000); err != nil {
		return err
	}
	switch v, _ := s.get("isolation.level"); v {
	case "read_committed":
		p.readCommitted = true
	case "", "read_uncommitted":
	default:
		return &configError{fmt.Sprintf("Invalid value %s for configuration isolation.level: String must be one of: read_committed, read_uncommitted", v)}
	}
	p.allowAutoCreate = true
	if v, ok := s.get("allow.auto.create.topics"); ok && strings.EqualFold(strings.TrimSpace(v), "false") {
		p.allowAutoCreate = false
	}
	// The Java consumer's default: range, then cooperative sticky.
	p.assignors = []string{"range", "cooperative-sticky"}
	if v, ok := s.get("partition.assignment.strategy"); ok {
		var names []string
		for _, class := range strings.Split(v, ",") {
			switch class = strings.TrimSpace(class); {
			case strings.HasSuffix(class, "CooperativeStickyAssignor"):
				names = append(names, "cooperative-sticky")
			case strings.HasSuffix(class, "StickyAssignor"):
				names = append(names, "sticky")
			case strings.HasSuffix(class, "RoundRobinAssignor"):
				names = append(names, "roundrobin")
			case strings.HasSuffix(class, "RangeAssignor"):
				names = append(names, "range")
			}
		}
		if len(names) > 0 {
			p.assignors = names
		}
	}
	return nil
}

// consumerClientOptions are the franz-go options of the plan's consumer:
// a member of the group, reading the plan's topics (or those --include
// matches) from the start, or the end with --from-latest, when the group
// has no committed offset.
func (p *consumerPlan) consumerClientOptions() []kgo.Opt {
	opts := append(p.client.options(),
		kgo.ConsumerGroup(p.groupID),
		kgo.FetchMaxPartitionBytes(p.fetchSize),
		kgo.FetchMaxBytes(max(p.fetchMaxBytes, p.fetchSize)),
		kgo.FetchMinBytes(p.fetchMinBytes),
		kgo.FetchMaxWait(max(p.fetchMaxWait, time.Millisecond)),
		kgo.SessionTimeout(p.sessionTimeout),
		kgo.HeartbeatInterval(p.heartbeatInterval),
		kgo.AutoCommitInterval(max(p.autoCommitInterval, time.Millisecond)),
	)
	if p.include != nil {
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(p.include.String()))
	} else {
		opts = append(opts, kgo.ConsumeTopics(p.topics...))
	}
	if p.fromLatest {
		opts = append(opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
	} else {
		opts = append(opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	}
	if !p.autoCommit {
		opts = append(opts, kgo.DisableAutoCommit())
	}
	if p.readCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	if p.allowAutoCreate {
		opts = append(opts, kgo.AllowAutoTopicCreation())
	}
	var balancers []kgo.GroupBalancer
	for _, a := range p.assignors {
		switch a {
		case "range":
			balancers = append(balancers, kgo.RangeBalancer())
		case "roundrobin":
			balancers = append(balancers, kgo.RoundRobinBalancer())
		case "sticky":
			balancers = append(balancers, kgo.StickyBalancer())
		case "cooperative-sticky":
			balancers = append(balancers, kgo.CooperativeStickyBalancer())
		}
	}
	return append(opts, kgo.Balancers(balancers...))
}
