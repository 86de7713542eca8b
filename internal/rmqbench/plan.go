package rmqbench

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/perfclones/perfclones/internal/jvm"
)

// javaDefaultNamesrv is where the originals look for name servers when -n
// is absent: the rocketmq.namesrv.addr property (a JVM has none here),
// then the NAMESRV_ADDR environment variable.
func namesrvList(p *parsed, getenv func(string) string) []string {
	v, ok := p.line.Value("n")
	if !ok {
		v = getenv("NAMESRV_ADDR")
	}
	var out []string
	for _, a := range strings.Split(v, ";") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// producerPlan is everything a producer run needs.
type producerPlan struct {
	namesrv       []string
	topic         string
	threads       int
	size          int
	keys          bool
	tagCount      int
	trace         bool
	acl           bool
	cred          credentials
	quantity      int64
	delay         bool
	delayLevel    int
	async         bool
	compress      bool
	compressType  string
	compressLevel int
	compressOver  int
	reportMs      int
	body          []byte
	// shares are the sends of each sender (-q split as the original
	// splits it); nil means every sender runs until stopped.
	shares []int64
}

// newProducerPlan reads the producer's options in the original's order
// (the first bad number wins).
func newProducerPlan(d *diff, p *parsed, getenv func(string) string) (*producerPlan, error) {
	var err error
	pl := &producerPlan{namesrv: namesrvList(p, getenv)}
	pl.topic = p.str("t", "BenchmarkTest", true)
	if pl.size, err = p.integer("s", 128, false); err != nil {
		return nil, err
	}
	pl.keys = p.boolean("k")
	if pl.tagCount, err = p.integer("l", 0, false); err != nil {
		return nil, err
	}
	pl.trace = p.boolean("m")
	pl.acl = p.boolean("a")
	pl.cred = credentials{enabled: pl.acl, accessKey: p.str("ak", "rocketmq2", false), secretKey: p.str("sk", "12345678", false)}
	if pl.quantity, err = p.long("q", 0); err != nil {
		return nil, err
	}
	pl.delay = p.boolean("d")
	if pl.delayLevel, err = p.integer("e", 1, false); err != nil {
		return nil, err
	}
	pl.async = p.boolean("y")
	if pl.threads, err = p.integer("w", 64, false); err != nil {
		return nil, err
	}
	if pl.async {
		pl.threads = 1
	}
	pl.reportMs = 10000
	if d.ReportInterval {
		if pl.reportMs, err = p.integer("ri", 10000, false); err != nil {
			return nil, err
		}
	}
	pl.compressType, pl.compressLevel, pl.compressOver = "ZLIB", 5, 4096
	if d.Compress {
		pl.compress = p.boolean("c")
		pl.compressType = p.str("ct", "ZLIB", true)
		if pl.compressLevel, err = p.integer("cl", 5, true); err != nil {
			return nil, err
		}
		if pl.compressOver, err = p.integer("ch", 4096, true); err != nil {
			return nil, err
		}
	}
	if pl.threads <= 0 || pl.size < 0 {
		// Executors.newFixedThreadPool(<=0) and a negative body length.
		return nil, jvm.Uncaught(jvm.Exception{Class: "java.lang.IllegalArgumentException"}, nil)
	}
	pl.body = randomBody(pl.size)
	pl.shares = splitQuantity(pl.quantity, pl.threads)
	return pl, nil
}

// compressCheck is the original's check of -ct, which only runs with
// -c true, after the start-up lines.
func (pl *producerPlan) compressCheck() error {
	if !pl.compress {
		return nil
	}
	switch strings.ToUpper(pl.compressType) {
	case "ZLIB", "LZ4", "ZSTD":
		return nil
	}
	return jvm.Uncaught(jvm.Exception{Class: "java.lang.RuntimeException", Message: "Unsupported compress type name: " + pl.compressType}, nil)
}

// splitQuantity splits -q as the original: every sender gets q/threads,
// the first also the remainder, and senders left with nothing do not
// start. q <= 0 runs forever (nil).
func splitQuantity(q int64, threads int) []int64 {
	if q <= 0 {
		return nil
	}
	per, rest := q/int64(threads), q%int64(threads)
	var shares []int64
	for i := 0; i < threads; i++ {
		n := per
		if i == 0 {
			n += rest
		}
		if n > 0 {
			shares = append(shares, n)
		}
	}
	return shares
}

const bodyAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomBody is the one body every message shares: size random letters
// and digits (RandomStringUtils.randomAlphanumeric), so size bytes.
func randomBody(size int) []byte {
	out := make([]byte, size)
	for i := range out {
		out[i] = bodyAlphabet[rand.IntN(len(bodyAlphabet))]
	}
	return out
}

// consumerPlan is everything a consumer run needs.
type consumerPlan struct {
	namesrv        []string
	topic          string
	threads        int
	group          string
	suffix         string
	filterType     string
	hasFilterType  bool
	expressionPath string
	hasExpression  bool
	// expression is the content of the expression file, when -f and -e
	// are both given; selector is "TAG" or "SQL92" then.
	expression string
	selector   string
	failRate   float64
	trace      bool
	acl        bool
	cred       credentials
	reportMs   int
}

func newConsumerPlan(d *diff, p *parsed, getenv func(string) string, nowMs int64) (*consumerPlan, error) {
	var err error
	pl := &consumerPlan{namesrv: namesrvList(p, getenv)}
	pl.topic = p.str("t", "BenchmarkTest", true)
	if pl.threads, err = p.integer("w", 20, false); err != nil {
		return nil, err
	}
	prefix := p.str("g", "benchmark_consumer", true)
	pl.suffix = p.str("p", "false", true)
	pl.filterType, pl.hasFilterType = p.str("f", "", true), p.has("f")
	pl.expressionPath, pl.hasExpression = p.str("e", "", true), p.has("e")
	if pl.failRate, err = p.double("r", 0); err != nil {
		return nil, err
	}
	pl.trace = p.boolean("m")
	pl.acl = p.boolean("a")
	pl.cred = credentials{enabled: pl.acl, accessKey: p.str("ak", "rocketmq2", false), secretKey: p.str("sk", "12345678", false)}
	pl.reportMs = 10000
	if d.ReportInterval {
		if pl.reportMs, err = p.integer("ri", 10000, false); err != nil {
			return nil, err
		}
	}
	pl.group = prefix
	if strings.EqualFold(pl.suffix, "true") {
		pl.group = prefix + "_" + strconv.FormatInt(nowMs%100, 10)
	}
	return pl, nil
}

// readExpression reads the -e file as MixAll.file2String does: its text,
// or "null" when it cannot be read.
func (pl *consumerPlan) readExpression() (string, bool) {
	b, err := os.ReadFile(pl.expressionPath)
	if err != nil {
		return "null", false
	}
	return string(b), true
}

// batchPlan is everything a batch producer run needs.
type batchPlan struct {
	namesrv       []string
	topic         string
	threads       int
	size          int
	batch         int
	keys          bool
	propertySize  int
	tagCount      int
	trace         bool
	acl           bool
	cred          credentials
	compress      bool
	compressLevel int
	compressOver  int
	reportMs      int
	body          []byte
}

func newBatchPlan(d *diff, p *parsed) (*batchPlan, error) {
	var err error
	pl := &batchPlan{}
	for _, a := range strings.Split(p.str("n", "127.0.0.1:9876", true), ";") {
		if a = strings.TrimSpace(a); a != "" {
			pl.namesrv = append(pl.namesrv, a)
		}
	}
	pl.topic = p.str("t", "BenchmarkTest", true)
	ints := []struct {
		key string
		def int
		dst *int
	}{{"w", 64, &pl.threads}, {"s", 128, &pl.size}, {"b", 16, &pl.batch}, {"p", 0, &pl.propertySize}, {"l", 0, &pl.tagCount}}
	for _, f := range ints {
		if *f.dst, err = p.integer(f.key, f.def, true); err != nil {
			return nil, err
		}
	}
	pl.keys = strings.EqualFold(p.str("k", "false", true), "true")
	pl.trace = strings.EqualFold(p.str("m", "false", true), "true")
	pl.acl = strings.EqualFold(p.str("a", "false", true), "true")
	akKey, skKey, skDef := "c", "e", "12346789"
	if d.Compress {
		akKey, skKey, skDef = "ak", "sk", "12345678"
	}
	pl.cred = credentials{enabled: pl.acl, accessKey: p.str(akKey, "rocketmq2", true), secretKey: p.str(skKey, skDef, true)}
	pl.reportMs, pl.compressLevel, pl.compressOver = 10000, 5, 4096
	if d.Compress {
		pl.compress = strings.EqualFold(p.str("c", "false", true), "true")
		if pl.compressLevel, err = p.integer("cl", 5, true); err != nil {
			return nil, err
		}
		if pl.compressOver, err = p.integer("ch", 4096, true); err != nil {
			return nil, err
		}
	}
	if d.ReportInterval {
		if pl.reportMs, err = p.integer("ri", 10000, true); err != nil {
			return nil, err
		}
	}
	if pl.threads <= 0 || pl.size < 0 || pl.batch <= 0 {
		return nil, jvm.Uncaught(jvm.Exception{Class: "java.lang.IllegalArgumentException"}, nil)
	}
	pl.body = randomBody(pl.size)
	return pl, nil
}
