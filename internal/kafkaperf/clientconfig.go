package kafkaperf

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/perfclones/perfclones/internal/javaprops"
)

// clientKind says which Java client's configuration names apply.
type clientKind int

const (
	producerClient clientKind = iota
	consumerClient
)

// javaConfigClass is the class named in the Java client's warning for an unknown setting.
func (k clientKind) javaConfigClass() string {
	if k == producerClient {
		return "org.apache.kafka.clients.producer.ProducerConfig"
	}
	return "org.apache.kafka.clients.consumer.ConsumerConfig"
}

// commonConfigs are settings both Java clients know. The ones our sarama
// mapping acts on are handled in applyCommon; the rest are accepted without
// effect, as they tune parts of the Java client that sarama does not have.
var commonConfigs = words(`bootstrap.servers client.id client.dns.lookup client.rack connections.max.idle.ms
	enable.metrics.push metadata.max.age.ms metadata.recovery.strategy metadata.recovery.rebootstrap.trigger.ms
	metric.reporters metrics.num.samples metrics.recording.level metrics.sample.window.ms receive.buffer.bytes
	reconnect.backoff.max.ms reconnect.backoff.ms request.timeout.ms retry.backoff.max.ms retry.backoff.ms
	security.protocol security.providers send.buffer.bytes socket.connection.setup.timeout.max.ms
	socket.connection.setup.timeout.ms interceptor.classes auto.include.jmx.reporter`)

var producerConfigs = words(`acks batch.size buffer.memory compression.type compression.gzip.level compression.lz4.level
	compression.zstd.level delivery.timeout.ms enable.idempotence key.serializer linger.ms max.block.ms
	max.in.flight.requests.per.connection max.request.size metadata.max.idle.ms partitioner.adaptive.partitioning.enable
	partitioner.availability.timeout.ms partitioner.class partitioner.ignore.keys retries transaction.timeout.ms
	transactional.id value.serializer`)

var consumerConfigs = words(`allow.auto.create.topics auto.commit.interval.ms auto.offset.reset check.crcs default.api.timeout.ms
	enable.auto.commit exclude.internal.topics fetch.max.bytes fetch.max.wait.ms fetch.min.bytes group.id group.instance.id
	group.protocol group.remote.assignor heartbeat.interval.ms isolation.level key.deserializer max.partition.fetch.bytes
	max.poll.interval.ms max.poll.records partition.assignment.strategy session.timeout.ms value.deserializer
	share.acknowledgement.mode`)

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// isKnownConfig reports whether the Java client of kind k knows key.
func isKnownConfig(k clientKind, key string) bool {
	if commonConfigs[key] || strings.HasPrefix(key, "sasl.") || strings.HasPrefix(key, "ssl.") ||
		key == "client.callback.handler.class" {
		return true
	}
	if k == producerClient {
		return producerConfigs[key]
	}
	return consumerConfigs[key]
}

// clientSettings reads the Java client settings both tools share and
// returns the sarama configuration they describe plus the bootstrap list.
type clientSettings struct {
	props     *javaprops.Properties
	kind      clientKind
	bootstrap []string
	cfg       *sarama.Config
	warnings  []string // stderr lines, in the Java client's log format
}

func (s *clientSettings) get(key string) (string, bool) { return s.props.Get(key) }

func (s *clientSettings) intValue(key string, def int64) (int64, error) {
	v, ok := s.get(key)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, &configError{fmt.Sprintf("Invalid value %s for configuration %s: Not a number of type %s", v, key, javaType(key))}
	}
	return n, nil
}

// atLeast reads an integer setting that ConfigDef bounds below, with
// the Java client's text for a value under the bound.
func (s *clientSettings) atLeast(key string, def, least int64) (int64, error) {
	n, err := s.intValue(key, def)
	if err == nil && n < least {
		return 0, &configError{fmt.Sprintf("Invalid value %d for configuration %s: Value must be at least %d", n, key, least)}
	}
	return n, err
}

// boolValue reads a BOOLEAN setting as ConfigDef does: true or false in
// any case, around spaces.
func (s *clientSettings) boolValue(key string, def bool) (value, explicit bool, err error) {
	v, ok := s.get(key)
	if !ok {
		return def, false, nil
	}
	switch t := strings.TrimSpace(v); {
	case strings.EqualFold(t, "true"):
		return true, true, nil
	case strings.EqualFold(t, "false"):
		return false, true, nil
	}
	return false, true, &configError{fmt.Sprintf("Invalid value %s for configuration %s: Expected value to be either true or false", v, key)}
}

func javaType(key string) string {
	switch key {
	case "linger.ms", "buffer.memory", "retry.backoff.ms", "max.block.ms", "metadata.max.age.ms", "session.timeout.ms":
		return "LONG"
	}
	return "INT"
}

func (s *clientSettings) durationMs(key string, def int64) (time.Duration, error) {
	n, err := s.intValue(key, def)
	return time.Duration(n) * time.Millisecond, err
}

// newClientSettings maps the properties onto sarama. Unknown keys produce
// the Java client's warning and are otherwise ignored, as Java does.
func newClientSettings(kind clientKind, props *javaprops.Properties, warnTime func() string) (*clientSettings, error) {
	s := &clientSettings{props: props, kind: kind, cfg: sarama.NewConfig()}
	for _, k := range props.Keys() {
		if !isKnownConfig(kind, k) {
			s.warnings = append(s.warnings, fmt.Sprintf("[%s] WARN The configuration '%s' was supplied but isn't a known config. (%s)",
				warnTime(), k, kind.javaConfigClass()))
		}
	}
	servers, ok := props.Get("bootstrap.servers")
	if !ok || strings.TrimSpace(servers) == "" {
		return nil, &configError{`Missing required configuration "bootstrap.servers" which has no default value.`}
	}
	for _, addr := range strings.Split(servers, ",") {
		if addr = strings.TrimSpace(addr); addr != "" {
			s.bootstrap = append(s.bootstrap, addr)
		}
	}
	if err := s.applyCommon(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *clientSettings) applyCommon() error {
	c := s.cfg
	c.Version = sarama.V3_6_0_0
	if id, ok := s.get("client.id"); ok {
		c.ClientID = id
	}
	reqTimeout, err := s.durationMs("request.timeout.ms", 30000)
	if err != nil {
		return err
	}
	c.Net.ReadTimeout = reqTimeout
	c.Net.WriteTimeout = reqTimeout
	connTimeout, err := s.durationMs("socket.connection.setup.timeout.ms", 10000)
	if err != nil {
		return err
	}
	c.Net.DialTimeout = connTimeout
	backoff, err := s.durationMs("retry.backoff.ms", 100)
	if err != nil {
		return err
	}
	c.Metadata.Retry.Backoff = backoff
	if v, ok := s.get("metadata.max.age.ms"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return &configError{fmt.Sprintf("Invalid value %s for configuration metadata.max.age.ms: Not a number of type LONG", v)}
		}
		c.Metadata.RefreshFrequency = time.Duration(n) * time.Millisecond
	}
	c.Metadata.Full = false
	return s.applySecurity()
}

// applySecurity maps security.protocol, sasl.* and ssl.* settings.
func (s *clientSettings) applySecurity() error {
	c := s.cfg
	proto, _ := s.get("security.protocol")
	proto = strings.ToUpper(strings.TrimSpace(proto))
	switch proto {
	case "", "PLAINTEXT":
	case "SSL", "SASL_SSL", "SASL_PLAINTEXT":
	default:
		return &configError{fmt.Sprintf("Invalid value %s for configuration security.protocol: String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", proto)}
	}
	if proto == "SSL" || proto == "SASL_SSL" {
		tlsCfg, err := s.tlsConfig()
		if err != nil {
			return err
		}
		c.Net.TLS.Enable = true
		c.Net.TLS.Config = tlsCfg
	}
	if proto == "SASL_PLAINTEXT" || proto == "SASL_SSL" {
		mech, ok := s.get("sasl.mechanism")
		if !ok {
			mech = "GSSAPI"
		}
		jaas, _ := s.get("sasl.jaas.config")
		user, pass := jaasCredentials(jaas)
		c.Net.SASL.Enable = true
		c.Net.SASL.User, c.Net.SASL.Password = user, pass
		switch mech {
		case "PLAIN":
			c.Net.SASL.Mechanism = sarama.SASLTypePlaintext
		case "SCRAM-SHA-256":
			c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
			c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return newSCRAMClient(sha256Hash) }
		case "SCRAM-SHA-512":
			c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
			c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return newSCRAMClient(sha512Hash) }
		default:
			return &configError{fmt.Sprintf("Unsupported SASL mechanism %s (this clone supports PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512)", mech)}
		}
		if jaas == "" {
			return &configError{"Could not find a 'KafkaClient' entry in the JAAS configuration. System property 'java.security.auth.login.config' is not set"}
		}
	}
	return nil
}

var jaasOption = regexp.MustCompile(`(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"`)

// jaasCredentials reads username and password from a sasl.jaas.config value
// such as `...PlainLoginModule required username="u" password="p";`.
func jaasCredentials(jaas string) (user, pass string) {
	for _, m := range jaasOption.FindAllStringSubmatch(jaas, -1) {
		switch m[1] {
		case "username":
			user = m[2]
		case "password":
			pass = m[2]
		}
	}
	return user, pass
}

// tlsConfig builds the TLS settings from the ssl.* properties. PEM files and
// PKCS12 trust stores are read; JKS stores, which only Java reads, are refused
// with a clear message.
func (s *clientSettings) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{}
	if alg, ok := s.get("ssl.endpoint.identification.algorithm"); ok && alg == "" {
		cfg.InsecureSkipVerify = true
	}
	storeType, _ := s.get("ssl.truststore.type")
	if pemText, ok := s.get("ssl.truststore.certificates"); ok {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(pemText)) {
			return nil, &configError{"Invalid value for configuration ssl.truststore.certificates: no PEM certificate found"}
		}
		cfg.RootCAs = pool
	} else if loc, ok := s.get("ssl.truststore.location"); ok {
		data, err := os.ReadFile(loc)
		if err != nil {
			return nil, &configError{fmt.Sprintf("Failed to load SSL keystore %s of type %s: %v", loc, orDefault(storeType, "JKS"), err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data) {
			return nil, &configError{fmt.Sprintf("Failed to load SSL keystore %s of type %s: only PEM trust stores can be read without a JVM; convert it with keytool -exportcert -rfc", loc, orDefault(storeType, "JKS"))}
		}
		cfg.RootCAs = pool
	}
	certChain, hasChain := s.get("ssl.keystore.certificate.chain")
	key, hasKey := s.get("ssl.keystore.key")
	if hasChain && hasKey {
		pair, err := tls.X509KeyPair([]byte(certChain), []byte(key))
		if err != nil {
			return nil, &configError{"Invalid PEM keystore configs: " + err.Error()}
		}
		cfg.Certificates = []tls.Certificate{pair}
	} else if loc, ok := s.get("ssl.keystore.location"); ok {
		data, err := os.ReadFile(loc)
		if err != nil {
			return nil, &configError{fmt.Sprintf("Failed to load SSL keystore %s: %v", loc, err)}
		}
		pair, err := tls.X509KeyPair(data, data)
		if err != nil {
			return nil, &configError{fmt.Sprintf("Failed to load SSL keystore %s: only PEM key stores (certificate and private key in one file) can be read without a JVM", loc)}
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// resolvableBootstrap fails as the Java clients do when no bootstrap
// address resolves: they refuse to be built at all. Each address that does
// not resolve gets the Java client's warning.
func resolvableBootstrap(addrs []string, warn func(string)) error {
	ok := false
	for _, a := range addrs {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			continue
		}
		if _, err := net.LookupHost(host); err == nil {
			ok = true
			continue
		}
		warn(fmt.Sprintf("[%s] WARN Couldn't resolve server %s from bootstrap.servers as DNS resolution failed for %s (org.apache.kafka.clients.ClientUtils)",
			log4jTime(), a, host))
	}
	if !ok {
		return &configError{"No resolvable bootstrap urls given in bootstrap.servers"}
	}
	return nil
}
