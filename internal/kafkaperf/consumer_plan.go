package kafkaperf

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/javafmt"
)

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
			return failed(err, rel)
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
	if err := settings.applyConsumer(o); err != nil {
		return nil, configDef(err)
	}
	if err := resolvableBootstrap(settings.bootstrap, warn); err != nil {
		return nil, failed(err, rel)
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
	}
	if o.topic != "" {
		p.topics = []string{o.topic}
	}
	return p, nil
}

// failed is the consumer's construction failure: a KafkaException caused
// by the ConfigException.
func failed(err error, rel *consumerRelease) error {
	ce, ok := err.(*configError)
	if !ok {
		return err
	}
	return rel.thrown(constructionFailed("consumer", ce))
}

// applyConsumer maps the consumer settings onto sarama.
func (s *clientSettings) applyConsumer(o *consumerOptions) error {
	c := s.cfg
	c.Consumer.Return.Errors = false
	c.Consumer.Fetch.Default = o.fetchSize
	c.Consumer.Fetch.Max = o.fetchSize
	if v, ok := s.get("fetch.min.bytes"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return &configError{fmt.Sprintf("Invalid value %s for configuration fetch.min.bytes: Not a number of type INT", v)}
		}
		c.Consumer.Fetch.Min = int32(n)
	}
	waitMs, err := s.atLeast("fetch.max.wait.ms", 500, 0)
	if err != nil {
		return err
	}
	c.Consumer.MaxWaitTime = time.Duration(waitMs) * time.Millisecond
	if _, err := s.atLeast("max.poll.records", 500, 1); err != nil {
		return err
	}
	if o.fromLatest {
		c.Consumer.Offsets.Initial = sarama.OffsetNewest
	} else {
		c.Consumer.Offsets.Initial = sarama.OffsetOldest
	}
	session, err := s.durationMs("session.timeout.ms", 45000)
	if err != nil {
		return err
	}
	c.Consumer.Group.Session.Timeout = session
	heartbeat, err := s.durationMs("heartbeat.interval.ms", 3000)
	if err != nil {
		return err
	}
	c.Consumer.Group.Heartbeat.Interval = heartbeat
	if v, ok := s.get("enable.auto.commit"); ok && strings.EqualFold(v, "false") {
		c.Consumer.Offsets.AutoCommit.Enable = false
	}
	interval, err := s.durationMs("auto.commit.interval.ms", 5000)
	if err != nil {
		return err
	}
	c.Consumer.Offsets.AutoCommit.Interval = interval
	switch v, _ := s.get("isolation.level"); v {
	case "read_committed":
		c.Consumer.IsolationLevel = sarama.ReadCommitted
	case "", "read_uncommitted":
	default:
		return &configError{fmt.Sprintf("Invalid value %s for configuration isolation.level: String must be one of: read_committed, read_uncommitted", v)}
	}
	if v, ok := s.get("partition.assignment.strategy"); ok && strings.Contains(v, "RoundRobin") {
		c.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRoundRobin()}
	}
	return nil
}
