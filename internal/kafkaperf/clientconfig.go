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

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"software.sslmate.com/src/go-pkcs12"

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

// commonConfigs are settings both Java clients know. The ones our franz-go
// mapping acts on are handled in applyCommon; the rest are accepted without
// effect, as they tune parts of the Java client that franz-go does not have.
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

// clientSettings reads the Java client settings both tools share: the
// bootstrap list, and the franz-go options they describe.
type clientSettings struct {
	props     *javaprops.Properties
	kind      clientKind
	bootstrap []string
	clientID  string // "" leaves franz-go's own
	// requestTimeout is request.timeout.ms; retryBackoff and
	// retryBackoffMax the bounds of the exponential retry backoff.
	requestTimeout, dialTimeout     time.Duration
	retryBackoff, retryBackoffMax   time.Duration
	metadataMaxAge                  time.Duration // 0: franz-go's (Java's) 5 minutes
	tls                             *tls.Config   // SSL, SASL_SSL
	saslMechanism, saslUser, saslPw string        // SASL_*: the mechanism's Java name
	sasl                            sasl.Mechanism
	// produceLimiter, when set, dials the connections and keeps fewer
	// produce requests in flight on each than franz-go would.
	produceLimiter *produceLimiter
	hooks          *clientHooks
	warnings       []string // stderr lines, in the Java client's log format
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

// newClientSettings reads the settings both clients share. Unknown keys
// produce the Java client's warning and are otherwise ignored, as Java does.
func newClientSettings(kind clientKind, props *javaprops.Properties, warnTime func() string) (*clientSettings, error) {
	s := &clientSettings{props: props, kind: kind, hooks: &clientHooks{}}
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
	if id, ok := s.get("client.id"); ok {
		s.clientID = id
	}
	var err error
	if s.requestTimeout, err = s.durationMs("request.timeout.ms", 30000); err != nil {
		return err
	}
	if s.dialTimeout, err = s.durationMs("socket.connection.setup.timeout.ms", 10000); err != nil {
		return err
	}
	if s.retryBackoff, err = s.durationMs("retry.backoff.ms", 100); err != nil {
		return err
	}
	if s.retryBackoffMax, err = s.durationMs("retry.backoff.max.ms", 1000); err != nil {
		return err
	}
	if v, ok := s.get("metadata.max.age.ms"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return &configError{fmt.Sprintf("Invalid value %s for configuration metadata.max.age.ms: Not a number of type LONG", v)}
		}
		s.metadataMaxAge = time.Duration(n) * time.Millisecond
	}
	return s.applySecurity()
}

// backoff is the Java client's retry backoff (3.7+): exponential from
// retry.backoff.ms, doubling per attempt, at most retry.backoff.max.ms.
func (s *clientSettings) backoff(attempt int) time.Duration {
	return min(s.retryBackoff<<min(max(attempt-1, 0), 20), max(s.retryBackoffMax, s.retryBackoff))
}

// options are the franz-go options of the shared settings.
func (s *clientSettings) options() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(s.bootstrap...),
		kgo.DialTimeout(max(s.dialTimeout, time.Millisecond)),
		// request.timeout.ms bounds every wait for a response, the produce
		// requests' own timeout included (see the producer's options).
		kgo.RequestTimeoutOverhead(max(s.requestTimeout, time.Millisecond)),
		kgo.RetryBackoffFn(s.backoff),
		// Java refreshes metadata after retry.backoff.ms when it needs to
		// (a leader moved); franz-go's default waits at least 5 s.
		kgo.MetadataMinAge(max(s.retryBackoff, 10*time.Millisecond)),
		kgo.WithHooks(s.hooks),
		// A connection closed before its first answer is retried, as the
		// Java client retries every disconnect (franz-go otherwise takes
		// it for a TLS or SASL mismatch and gives up, which a proxy or load
		// balancer in front of a dead broker also looks like).
		kgo.AlwaysRetryEOF(),
	}
	if s.clientID != "" {
		opts = append(opts, kgo.ClientID(s.clientID))
	}
	if s.metadataMaxAge > 0 {
		opts = append(opts, kgo.MetadataMaxAge(s.metadataMaxAge))
	}
	switch {
	case s.produceLimiter != nil:
		// It does TLS itself: franz-go takes a dialer or a TLS
		// configuration, not both.
		opts = append(opts, kgo.Dialer(s.produceLimiter.dial))
	case s.tls != nil:
		opts = append(opts, kgo.DialTLSConfig(s.tls))
	}
	if s.sasl != nil {
		opts = append(opts, kgo.SASL(s.sasl))
	}
	return opts
}

// limitProduceInflight keeps at most n produce requests unanswered on each
// connection, for max.in.flight.requests.per.connection below the 5
// franz-go keeps with idempotence (without it franz-go takes the bound
// itself, MaxProduceRequestsInflightPerBroker).
func (s *clientSettings) limitProduceInflight(n int) {
	s.produceLimiter = newProduceLimiter(n, max(s.dialTimeout, time.Millisecond), s.tls)
}

// applySecurity maps security.protocol, sasl.* and ssl.* settings.
func (s *clientSettings) applySecurity() error {
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
		s.tls = tlsCfg
	}
	if proto == "SASL_PLAINTEXT" || proto == "SASL_SSL" {
		mech, ok := s.get("sasl.mechanism")
		if !ok {
			mech = "GSSAPI"
		}
		jaas, _ := s.get("sasl.jaas.config")
		user, pass := jaasCredentials(jaas)
		s.saslMechanism, s.saslUser, s.saslPw = mech, user, pass
		switch mech {
		case "PLAIN":
			s.sasl = plain.Auth{User: user, Pass: pass}.AsMechanism()
		case "SCRAM-SHA-256":
			s.sasl = scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			s.sasl = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
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

// tlsConfig builds the TLS settings from the ssl.* properties. PEM and
// PKCS12 stores are read; JKS stores, which only Java reads, are refused
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
		switch strings.ToUpper(orDefault(storeType, "JKS")) {
		case "PEM":
			if !pool.AppendCertsFromPEM(data) {
				return nil, &configError{fmt.Sprintf("Failed to load SSL keystore %s of type PEM: no PEM certificate found", loc)}
			}
		case "PKCS12":
			password, _ := s.get("ssl.truststore.password")
			certs, err := pkcs12.DecodeTrustStore(data, password)
			if err != nil || len(certs) == 0 {
				return nil, &configError{fmt.Sprintf("Failed to load SSL keystore %s of type PKCS12: %v", loc, orDefault(errText(err), "no trusted certificate entry"))}
			}
			for _, c := range certs {
				pool.AddCert(c)
			}
		default:
			// JKS is a Java-only format; a PEM file given as JKS (the
			// default type) is still read, as before.
			if !pool.AppendCertsFromPEM(data) {
				return nil, &configError{fmt.Sprintf("Failed to load SSL keystore %s of type %s: JKS stores can be read only by a JVM; use PKCS12 or PEM (keytool -importkeystore -deststoretype PKCS12)", loc, orDefault(storeType, "JKS"))}
			}
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
		keyType, _ := s.get("ssl.keystore.type")
		var pair tls.Certificate
		switch strings.ToUpper(orDefault(keyType, "JKS")) {
		case "PKCS12":
			pair, err = pkcs12KeyPair(data, s)
			if err != nil {
				return nil, &configError{fmt.Sprintf("Failed to load SSL keystore %s of type PKCS12: %v", loc, err)}
			}
		default:
			pair, err = tls.X509KeyPair(data, data)
			if err != nil {
				return nil, &configError{fmt.Sprintf("Failed to load SSL keystore %s: only PKCS12 and PEM key stores (certificate and private key in one file) can be read without a JVM", loc)}
			}
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// pkcs12KeyPair reads the private key and its certificate chain from a
// PKCS12 key store. The store's password (ssl.keystore.password) opens it;
// Java's separate ssl.key.password is tried when it differs, as a store
// written with one password for both is the common case.
func pkcs12KeyPair(data []byte, s *clientSettings) (tls.Certificate, error) {
	storePw, _ := s.get("ssl.keystore.password")
	key, leaf, chain, err := pkcs12.DecodeChain(data, storePw)
	if keyPw, ok := s.get("ssl.key.password"); err != nil && ok && keyPw != storePw {
		key, leaf, chain, err = pkcs12.DecodeChain(data, keyPw)
	}
	if err != nil {
		return tls.Certificate{}, err
	}
	pair := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
	for _, c := range chain {
		pair.Certificate = append(pair.Certificate, c.Raw)
	}
	return pair, nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
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
