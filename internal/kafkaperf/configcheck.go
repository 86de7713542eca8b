package kafkaperf

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/perfclones/perfclones/internal/javaprops"
	"github.com/perfclones/perfclones/internal/jvm"
)

// The Java clients' configuration checks, made on the properties before
// any client library sees them, so that a bad setting ends the tool with
// Java's ConfigException text whatever client runs underneath. Two
// stages, as in the Java clients:
//
//   - ConfigDef, when ProducerConfig or ConsumerConfig is built: every
//     defined setting is parsed by its type (INT, LONG, BOOLEAN, ...) and
//     checked by its validator (a range, a list of choices, a class that
//     must exist). A failure is a bare ConfigException.
//   - the client's constructor: bootstrap.servers must hold at least one
//     well-formed host:port. A failure there is a KafkaException "Failed
//     to construct kafka producer" (or consumer) caused by the
//     ConfigException.
//
// Resolving the bootstrap hosts, and the cross-checks that need the
// client's own defaults (delivery.timeout.ms against linger.ms and
// request.timeout.ms, idempotence against acks), stay with the client
// settings.

// configType is a ConfigDef type.
type configType int

const (
	typeString configType = iota
	typeInt
	typeLong
	typeShort
	typeDouble
	typeBoolean
	typeList
	typeClass
)

func (t configType) String() string {
	return [...]string{"STRING", "INT", "LONG", "SHORT", "DOUBLE", "BOOLEAN", "LIST", "CLASS"}[t]
}

// configKey is one defined setting: its type and its validator.
type configKey struct {
	name string
	typ  configType
	// least and most bound a number (ConfigDef.Range) when set.
	least, most *int64
	// choices are ValidString's (or CaseInsensitiveValidString's when
	// anyCase) values, in the order Java's message lists them.
	choices []string
	anyCase bool
	// nonEmpty: ConfigDef.NonEmptyString.
	nonEmpty bool
}

func bound(n int64) *int64 { return &n }

func atLeast(name string, typ configType, n int64) configKey {
	return configKey{name: name, typ: typ, least: bound(n)}
}

func oneOf(name string, anyCase bool, choices ...string) configKey {
	return configKey{name: name, typ: typeString, choices: choices, anyCase: anyCase}
}

// commonConfigKeys are CommonClientConfigs' settings both clients define.
var commonConfigKeys = []configKey{
	{name: "bootstrap.servers", typ: typeList},
	oneOf("client.dns.lookup", false, "use_all_dns_ips", "resolve_canonical_bootstrap_servers_only"),
	{name: "client.id", typ: typeString},
	{name: "client.rack", typ: typeString},
	atLeast("metadata.max.age.ms", typeLong, 0),
	atLeast("send.buffer.bytes", typeInt, -1),
	atLeast("receive.buffer.bytes", typeInt, -1),
	atLeast("reconnect.backoff.ms", typeLong, 0),
	atLeast("reconnect.backoff.max.ms", typeLong, 0),
	atLeast("retry.backoff.ms", typeLong, 0),
	atLeast("retry.backoff.max.ms", typeLong, 0),
	atLeast("request.timeout.ms", typeInt, 0),
	{name: "socket.connection.setup.timeout.ms", typ: typeLong},
	{name: "socket.connection.setup.timeout.max.ms", typ: typeLong},
	{name: "connections.max.idle.ms", typ: typeLong},
	atLeast("metrics.sample.window.ms", typeLong, 0),
	atLeast("metrics.num.samples", typeInt, 1),
	oneOf("metrics.recording.level", false, "INFO", "DEBUG", "TRACE"),
	{name: "metric.reporters", typ: typeList},
	{name: "interceptor.classes", typ: typeList},
	oneOf("security.protocol", true, "SASL_SSL", "PLAINTEXT", "SSL", "SASL_PLAINTEXT"),
	{name: "auto.include.jmx.reporter", typ: typeBoolean},
	{name: "enable.metrics.push", typ: typeBoolean},
}

// producerConfigKeys are ProducerConfig's own settings.
var producerConfigKeys = []configKey{
	atLeast("buffer.memory", typeLong, 0),
	{name: "retries", typ: typeInt, least: bound(0), most: bound(1<<31 - 1)},
	oneOf("acks", false, "all", "-1", "0", "1"),
	oneOf("compression.type", false, "none", "gzip", "snappy", "lz4", "zstd"),
	atLeast("batch.size", typeInt, 0),
	{name: "partitioner.adaptive.partitioning.enable", typ: typeBoolean},
	atLeast("partitioner.availability.timeout.ms", typeLong, 0),
	{name: "partitioner.ignore.keys", typ: typeBoolean},
	atLeast("linger.ms", typeLong, 0),
	atLeast("delivery.timeout.ms", typeInt, 0),
	atLeast("max.request.size", typeInt, 0),
	atLeast("max.block.ms", typeLong, 0),
	atLeast("metadata.max.idle.ms", typeLong, 5000),
	atLeast("max.in.flight.requests.per.connection", typeInt, 1),
	{name: "enable.idempotence", typ: typeBoolean},
	{name: "transaction.timeout.ms", typ: typeInt},
	{name: "transactional.id", typ: typeString, nonEmpty: true},
	{name: "partitioner.class", typ: typeClass},
}

// consumerConfigKeys are ConsumerConfig's own settings.
var consumerConfigKeys = []configKey{
	{name: "group.id", typ: typeString},
	{name: "group.instance.id", typ: typeString},
	{name: "session.timeout.ms", typ: typeInt},
	{name: "heartbeat.interval.ms", typ: typeInt},
	{name: "enable.auto.commit", typ: typeBoolean},
	atLeast("auto.commit.interval.ms", typeInt, 0),
	atLeast("max.partition.fetch.bytes", typeInt, 0),
	atLeast("fetch.min.bytes", typeInt, 0),
	atLeast("fetch.max.bytes", typeInt, 0),
	atLeast("fetch.max.wait.ms", typeInt, 0),
	{name: "check.crcs", typ: typeBoolean},
	atLeast("default.api.timeout.ms", typeInt, 0),
	atLeast("max.poll.interval.ms", typeInt, 1),
	atLeast("max.poll.records", typeInt, 1),
	{name: "exclude.internal.topics", typ: typeBoolean},
	oneOf("isolation.level", false, "read_committed", "read_uncommitted"),
	oneOf("group.protocol", true, "CONSUMER", "CLASSIC"),
	{name: "allow.auto.create.topics", typ: typeBoolean},
}

// configDefError is a ConfigDef refusal: the ConfigException's message.
type configDefError struct{ msg string }

func (e *configDefError) Error() string { return e.msg }

func invalidValue(value any, key, why string) *configDefError {
	return &configDefError{fmt.Sprintf("Invalid value %v for configuration %s: %s", value, key, why)}
}

// javaTrimSet is what String.trim strips: every char up to U+0020.
func javaTrimSet(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// check parses value as ConfigDef parses k's type and applies k's
// validator.
func (k configKey) check(value string) *configDefError {
	trimmed := javaTrimSet(value)
	switch k.typ {
	case typeInt, typeLong, typeShort:
		bits := map[configType]int{typeInt: 32, typeLong: 64, typeShort: 16}[k.typ]
		n, err := strconv.ParseInt(trimmed, 10, bits)
		if err != nil || strings.Contains(trimmed, "_") {
			return invalidValue(value, k.name, "Not a number of type "+k.typ.String())
		}
		if k.least != nil && n < *k.least {
			return invalidValue(n, k.name, fmt.Sprintf("Value must be at least %d", *k.least))
		}
		if k.most != nil && n > *k.most {
			return invalidValue(n, k.name, fmt.Sprintf("Value must be no more than %d", *k.most))
		}
	case typeDouble:
		if _, err := strconv.ParseFloat(trimmed, 64); err != nil {
			return invalidValue(value, k.name, "Not a number of type DOUBLE")
		}
	case typeBoolean:
		if !strings.EqualFold(trimmed, "true") && !strings.EqualFold(trimmed, "false") {
			return invalidValue(value, k.name, "Expected value to be either true or false")
		}
	case typeClass:
		// Only the Java client's own classes exist here.
		if !strings.HasPrefix(trimmed, "org.apache.kafka.") {
			return invalidValue(trimmed, k.name, "Class "+trimmed+" could not be found.")
		}
	case typeString:
		if k.nonEmpty && trimmed == "" {
			return invalidValue(trimmed, k.name, "String must be non-empty")
		}
		if len(k.choices) > 0 {
			for _, c := range k.choices {
				if c == trimmed || (k.anyCase && strings.EqualFold(c, trimmed)) {
					return nil
				}
			}
			what := "String must be one of: "
			if k.anyCase {
				what = "String must be one of (case insensitive): "
			}
			return invalidValue(trimmed, k.name, what+strings.Join(k.choices, ", "))
		}
	}
	return nil
}

// checkConfigDef applies ConfigDef to props, in the order the settings
// are defined, and returns the first refusal.
func checkConfigDef(props *javaprops.Properties, producer bool) *configDefError {
	own := consumerConfigKeys
	if producer {
		own = producerConfigKeys
	}
	for _, keys := range [][]configKey{commonConfigKeys, own} {
		for _, k := range keys {
			if v, ok := props.Get(k.name); ok {
				if err := k.check(v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// hostPortRe is the Java clients' host:port pattern (Utils.getHost,
// Utils.getPort), matched against the whole address.
var hostPortRe = regexp.MustCompile(`^.*?\[?([0-9a-zA-Z\-%._:]*)\]?:([0-9]+)$`)

// checkBootstrap is the constructor's check of bootstrap.servers: each
// address must be host:port with a port that fits, and there must be one.
// Whether the hosts resolve is checked later, with the client's warnings.
func checkBootstrap(props *javaprops.Properties) *configDefError {
	v, _ := props.Get("bootstrap.servers")
	n := 0
	for _, url := range strings.Split(javaTrimSet(v), ",") {
		url = javaTrimSet(url)
		if url == "" {
			continue
		}
		m := hostPortRe.FindStringSubmatch(url)
		if m == nil {
			return &configDefError{"Invalid url in bootstrap.servers: " + url}
		}
		if port, err := strconv.ParseInt(m[2], 10, 32); err != nil || port > 65535 {
			return &configDefError{"Invalid port in bootstrap.servers: " + url}
		}
		n++
	}
	if n == 0 {
		return &configDefError{"No resolvable bootstrap urls given in bootstrap.servers"}
	}
	return nil
}

// configDefException is the ConfigException of a refusal.
func configDefException(e *configDefError) jvm.Exception {
	return jvm.Exception{Class: "org.apache.kafka.common.config.ConfigException", Message: e.msg}
}

// constructionException is the KafkaException a Java client's
// constructor throws for cause.
func constructionException(client string, cause *configDefError) (jvm.Exception, jvm.Exception) {
	return jvm.Exception{Class: "org.apache.kafka.common.KafkaException", Message: "Failed to construct kafka " + client},
		configDefException(cause)
}

// checkProducerConfig is what building the Java producer checks first; a
// refusal ends the program as the uncaught exception does.
// bootstrapRequired: from 4.0 bootstrap.servers has no default, so
// ConfigDef refuses a producer without it.
func checkProducerConfig(props *javaprops.Properties, bootstrapRequired bool) error {
	err := checkBootstrapList(props, bootstrapRequired)
	if err == nil {
		err = checkConfigDef(props, true)
	}
	if err != nil {
		return jvm.Uncaught(configDefException(err), nil)
	}
	if err := checkConstruction(props); err != nil {
		e, cause := constructionException("producer", err)
		return jvm.Uncaught(e, nil, cause)
	}
	return nil
}

// loggedWarnings drops the "isn't a known config" lines unless the
// release's clients log them at WARN.
func loggedWarnings(warnings []string, unknownConfigWarn bool) []string {
	if unknownConfigWarn {
		return warnings
	}
	var out []string
	for _, w := range warnings {
		if !strings.Contains(w, "was supplied but isn't a known config.") {
			out = append(out, w)
		}
	}
	return out
}

// checkConstruction is what the clients' constructors refuse after
// ConfigDef: bootstrap.servers, then a SASL login without its JAAS entry.
func checkConstruction(props *javaprops.Properties) *configDefError {
	if err := checkBootstrap(props); err != nil {
		return err
	}
	proto, _ := props.Get("security.protocol")
	if p := strings.ToUpper(javaTrimSet(proto)); p == "SASL_PLAINTEXT" || p == "SASL_SSL" {
		if jaas, _ := props.Get("sasl.jaas.config"); jaas == "" {
			return &configDefError{"Could not find a 'KafkaClient' entry in the JAAS configuration. System property 'java.security.auth.login.config' is not set"}
		}
	}
	return nil
}

// checkBootstrapList is 4.x's ConfigDef for bootstrap.servers (strict):
// required, not empty, no empty entry. Before 4.0 it is a list with an
// empty default, and the constructor finds no address instead.
func checkBootstrapList(props *javaprops.Properties, strict bool) *configDefError {
	if !strict {
		return nil
	}
	v, ok := props.Get("bootstrap.servers")
	switch {
	case !ok:
		return &configDefError{`Missing required configuration "bootstrap.servers" which has no default value.`}
	case javaTrimSet(v) == "":
		return &configDefError{"Configuration 'bootstrap.servers' must not be empty. Valid values include: any non-empty value"}
	}
	for _, url := range strings.Split(javaTrimSet(v), ",") {
		if javaTrimSet(url) == "" {
			return &configDefError{"Configuration 'bootstrap.servers' values must not be empty."}
		}
	}
	return nil
}

// checkHeartbeat is the consumer constructor's check that heartbeats come
// more often than the session times out.
func checkHeartbeat(props *javaprops.Properties) *configDefError {
	hb, ok := props.Get("heartbeat.interval.ms")
	if !ok {
		return nil
	}
	session := int64(45000)
	if v, ok := props.Get("session.timeout.ms"); ok {
		session, _ = strconv.ParseInt(javaTrimSet(v), 10, 32)
	}
	if n, _ := strconv.ParseInt(javaTrimSet(hb), 10, 32); n < 0 || n >= session {
		return &configDefError{"Heartbeat must be set lower than the session timeout"}
	}
	return nil
}
