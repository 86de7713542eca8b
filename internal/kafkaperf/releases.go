package kafkaperf

import "github.com/perfclones/perfclones/internal/cli"

// Releases are the Kafka releases whose two tools these clones emulate,
// selected by PERFCLONES_KAFKA_VERSION. The default is 3.9: the vendors'
// documents (seeds 000 and 004) use the 2.2 and 2.7 tools, whose stdout for
// their command lines is 3.9's (no deprecation notices, the program named
// producer-performance), so their parsers keep working. 4.4 is the newest
// release, whose tools print the deprecation notices and the 4.x texts.
//
// Every release's options are accepted in every release (a 3.9 run takes
// --bootstrap-server, a 4.4 run takes --broker-list); what a release
// decides is what is printed: help, errors, notices, warnings, --version,
// and the defaults that changed under the tools.
var Releases = cli.Releases[kafkaRelease]{
	Env:     "PERFCLONES_KAFKA_VERSION",
	Default: "3.9",
	List: []cli.Release[kafkaRelease]{
		{
			Name: "2.7", Version: "2.7.2",
			// 2.4-2.6 print the same lines for the seeds' command lines
			// (their consumer's rebalance clock starts at 0 too, since the
			// 2.4 client); their help and parse errors differ in ways this
			// row does not emulate.
			Also: []string{"2.4", "2.5", "2.6", "2.7.0", "2.7.1"},
			Diff: kafka27,
		},
		{
			Name: "3.9", Version: "3.9.2",
			// These print 3.9's lines for the seeds' command lines (2.2 and
			// 2.3 call onPartitionsRevoked before the first assignment, 2.8
			// fixed the rebalance clock); their help, some parse errors and
			// client defaults differ (no --payload-monotonic before 3.9, the
			// Scala consumer before 3.5, acks=1 before 3.0), which this row
			// does not emulate.
			Also: []string{"2.2", "2.3", "2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9.0", "3.9.1"},
			Diff: kafka39,
		},
		{Name: "4.4", Version: "4.4.0", Diff: kafka44},
	},
}

// kafkaRelease is everything the two tools of one release print or
// default differently from the other releases.
type kafkaRelease struct {
	producer producerRelease
	consumer consumerRelease
}

var kafka39 = kafkaRelease{
	producer: producerRelease{
		prog:           "producer-performance",
		description:    "This tool is used to verify the producer performance.",
		args:           producerArgs39,
		payloadGroup:   "either --record-size or --payload-file must be specified but not both.",
		noClientConfig: "Either --producer-props or --producer.config must be specified.",
		transactions: transactionRules{
			onlyWithDuration: true,
			defaultID:        "performance-producer-default-transactional-id",
		},
		payloadCountLine: "Number of messages read: %d",
		payloadTokens:    javaStringSplit,
		noPayloads:       "no payload File Path or record Size or payload-monotonic option provided",
		clientID:         "perf-producer-client",
		client:           producerClientDefaults{acks: "all", idempotence: true, lingerMs: 0},
	},
	consumer: consumerRelease{
		description:    consumerDescription,
		options:        consumerOptions39,
		checks:         consumerChecks39,
		threadsWarning: "WARNING: option [threads] and [num-fetch-threads] have been deprecated and will be ignored by the test",
		timeoutWarning: "WARNING: Exiting before consuming the expected number of messages: timeout (%d ms) exceeded. You can use the --timeout option to increase the timeout.",
	},
}

var kafka27 = kafkaRelease{
	producer: producerRelease{
		prog:             "producer-performance",
		description:      "This tool is used to verify the producer performance.",
		args:             producerArgs27,
		payloadGroup:     "either --record-size or --payload-file must be specified but not both.",
		noClientConfig:   "Either --producer-props or --producer.config must be specified.",
		transactions:     kafka39.producer.transactions,
		payloadCountLine: "Number of messages read: %d",
		payloadTokens:    javaStringSplit,
		// Random.nextInt(0) on the first record.
		noPayloads:        "bound must be positive",
		onePayload:        true,
		client:            producerClientDefaults{acks: "1", idempotence: false, lingerMs: 0},
		unknownConfigWarn: true,
	},
	consumer: consumerRelease{
		description:     "This tool helps in performance test for the full zookeeper consumer",
		version:         "2.7.2 (Commit:37a1cc36bf4d76f3)",
		scala:           true,
		joinStartAtZero: true,
		options:         consumerOptions27,
		checks:          consumerChecks39,
		threadsWarning:  kafka39.consumer.threadsWarning,
		timeoutWarning:  kafka39.consumer.timeoutWarning,
		// The Scala tool's 2.7 client.
		unknownConfigWarn: true,
	},
}

var kafka44 = kafkaRelease{
	producer: producerRelease{
		prog: "kafka-producer-perf-test",
		description: "This tool is used to verify the producer performance. To enable transactions, you can specify a " +
			"transactional id or set a transaction duration using --transaction-duration-ms. There are three ways to specify " +
			"the transactional id: set transactional.id=<id> via --command-property, set transactional.id=<id> in the config " +
			"file via --command-config, or use --transactional-id <id>.",
		args:               producerArgs44,
		payloadGroup:       exactlyOnePayload44,
		noClientConfig:     "At least one of --bootstrap-server, --command-property, --producer-props, --producer.config or --command-config must be specified.",
		checksAtParse:      true,
		deprecationNotices: true,
		transactions:       transactionRules{defaultDurationMs: 3000},
		payloadCountLine:   "Number of records read: %d",
		payloadTokens:      javaScanner,
		noPayloads:         "No payload file, record size or payload-monotonic option provided.",
		clientID:           "perf-producer-client",
		client:             producerClientDefaults{acks: "all", idempotence: true, lingerMs: 5, inFlightOver5Fails: true},
		bootstrapRequired:  true,
		dirHasNoPayloads:   true,
	},
	consumer: consumerRelease{
		description:           consumerDescription,
		options:               consumerOptions44,
		checks:                consumerChecks44,
		deprecationNotices:    true,
		bootstrapStrict:       true,
		emptyGroupAtConstruct: true,
		timeoutWarning:        "WARNING: Exiting before consuming the expected number of records: timeout (%d ms) exceeded. You can use the --timeout option to increase the timeout.",
	},
}

// selectRelease is the release PERFCLONES_KAFKA_VERSION asks for.
func selectRelease(getenv func(string) string) (*cli.Release[kafkaRelease], error) {
	return Releases.Select(getenv)
}
