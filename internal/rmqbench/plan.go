package rmqbench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
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
	p             *parsed // for what startup reads
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
	if pl.async {
		pl.threads = 1 // -w is not even read
	} else if pl.threads, err = p.integer("w", 64, false); err != nil {
		return nil, err
	}
	pl.compress = d.Compress && p.boolean("c")
	pl.reportMs = 10000
	if d.ReportInterval {
		if pl.reportMs, err = p.integer("ri", 10000, false); err != nil {
			return nil, err
		}
	}
	pl.p = p
	return pl, nil
}

// The JVM the distribution's runclass.sh starts has a 1 GB heap
// (-Xmx1g); HotSpot refuses arrays of Integer.MAX_VALUE - 1 elements and
// more whatever the heap.
const (
	jvmHeap          = 1 << 30
	jvmMaxArrayElems = math.MaxInt32 - 2
)

// jvmArray is the error of allocating a Java array of n elements of size
// bytes each (n >= 0), or nil.
func jvmArray(n int64, size int64) error {
	switch {
	case n > jvmMaxArrayElems:
		return jvm.Uncaught(jvm.Exception{Class: "java.lang.OutOfMemoryError", Message: "Requested array size exceeds VM limit"}, nil)
	case n*size > jvmHeap:
		return jvm.Uncaught(jvm.Exception{Class: "java.lang.OutOfMemoryError", Message: "Java heap space"}, nil)
	}
	return nil
}

// bodyCheck is the original's building of the one message body, right
// after the start-up lines: a StringBuilder of -s chars, its String and
// their UTF-8 bytes (three copies in the heap).
func bodyCheck(size int) error {
	if size < 0 {
		return jvm.Uncaught(jvm.Exception{Class: "java.lang.NegativeArraySizeException", Message: strconv.Itoa(size)}, nil)
	}
	return jvmArray(int64(size), 3)
}

// maxJavaThreads is how many sender threads ours starts at most. A JVM
// asked for more runs out of native threads somewhere near the host's
// limits (its main dies of an OutOfMemoryError while the threads it did
// start run on); ours refuses up front with that error instead of
// starting millions of goroutines.
const maxJavaThreads = 32768

func threadsCheck(n int) error {
	if n > maxJavaThreads {
		return jvm.Uncaught(jvm.Exception{Class: "java.lang.OutOfMemoryError",
			Message: "unable to create native thread: possibly out of memory or process/resource limits reached"}, nil)
	}
	return nil
}

// illegalArgument is the bare IllegalArgumentException that
// Executors.newFixedThreadPool(<= 0) and scheduleAtFixedRate(period <= 0)
// throw.
func illegalArgument() error {
	return jvm.Uncaught(jvm.Exception{Class: "java.lang.IllegalArgumentException"}, nil)
}

// startup is what the original does between its start-up lines and the
// client's start, in its order: the body, the sender pool, the -q shares
// (a long per thread), the report timer, and with -c true the compression
// settings (read only then). It returns the "compressType: ..." line the
// original prints when compression is on.
func (pl *producerPlan) startup() (string, error) {
	if err := bodyCheck(pl.size); err != nil {
		return "", err
	}
	if pl.threads <= 0 {
		return "", illegalArgument()
	}
	if err := jvmArray(int64(pl.threads), 8); err != nil {
		return "", err
	}
	if pl.reportMs <= 0 {
		return "", illegalArgument()
	}
	pl.compressType, pl.compressLevel, pl.compressOver = "ZLIB", 5, 4096
	if !pl.compress {
		if err := pl.sendersCheck(); err != nil {
			return "", err
		}
		pl.body = randomBody(pl.size)
		pl.shares = splitQuantity(pl.quantity, pl.threads)
		return "", nil
	}
	var err error
	pl.compressType = pl.p.str("ct", "ZLIB", true)
	if pl.compressLevel, err = pl.p.integer("cl", 5, false); err != nil {
		return "", err
	}
	if pl.compressOver, err = pl.p.integer("ch", 4096, false); err != nil {
		return "", err
	}
	if err := compressTypeCheck(pl.compressType); err != nil {
		return "", err
	}
	if err := pl.sendersCheck(); err != nil {
		return "", err
	}
	pl.body = randomBody(pl.size)
	pl.shares = splitQuantity(pl.quantity, pl.threads)
	return fmt.Sprintf("compressType: %s compressLevel: %d", pl.compressType, pl.compressLevel), nil
}

// maxMessageSize is the Java producer's default limit on a body.
const maxMessageSize = 4 * 1024 * 1024

// refused reports whether the Java client refuses every message of the
// run before sending it (Validators.checkMessage: a blank, too long or
// illegal topic, an empty body or one over 4 MB). Each attempt is then a
// Send Failed without a pause, as the MQClientException it throws is.
func (pl *producerPlan) refused() bool {
	t := pl.topic
	return javaTrim(t) == "" || utf16Len(t) > 127 || !groupPattern.MatchString(t) ||
		pl.size == 0 || pl.size > maxMessageSize
}

// sendersCheck refuses more sender threads than ours starts: with -q only
// the threads with a share start.
func (pl *producerPlan) sendersCheck() error {
	n := int64(pl.threads)
	if pl.quantity > 0 {
		n = min(n, pl.quantity)
	}
	return threadsCheck(int(min(n, math.MaxInt32)))
}

// compressTypeCheck is CompressionType.of: ZLIB, LZ4 or ZSTD in any
// case, around blanks.
func compressTypeCheck(name string) error {
	switch strings.ToUpper(javaTrim(name)) {
	case "ZLIB", "LZ4", "ZSTD":
		return nil
	}
	return jvm.Uncaught(jvm.Exception{Class: "java.lang.RuntimeException", Message: "Unsupported compress type name: " + name}, nil)
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
	failRate       float64
	trace          bool
	acl            bool
	cred           credentials
	reportMs       int
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

// groupPattern is the characters Validators allows in a group name.
var groupPattern = regexp.MustCompile(`^[%|a-zA-Z0-9_-]+$`)

// checkConfig is the checks the original's consumer.start() makes before
// it connects (Validators.checkGroup, then DefaultMQPushConsumerImpl's
// checkConfig), each an MQClientException that ends main.
func (pl *consumerPlan) checkConfig() error {
	fail := func(msg string) error {
		return jvm.Uncaught(jvm.Exception{Class: "org.apache.rocketmq.client.exception.MQClientException", Message: msg}, nil)
	}
	g := pl.group
	switch {
	case javaTrim(g) == "":
		return fail("the specified group is blank")
	case utf16Len(g) > 255:
		return fail("the specified group is longer than group max length 255.")
	case !groupPattern.MatchString(g):
		return fail("the specified group[" + g + "] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$")
	case g == "DEFAULT_CONSUMER":
		return fail("consumerGroup can not equal DEFAULT_CONSUMER, please specify another one.")
	case pl.threads < 1 || pl.threads > 1000:
		return fail("consumeThreadMin Out of range [1, 1000]")
	}
	return nil
}

// utf16Len is String.length.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
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
	p             *parsed // for what startup reads
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
	// 5.x reads -ak/-sk untrimmed; 4.9's -c/-e go through the trimming
	// getOptionValue.
	trimKeys := !d.Compress
	pl.cred = credentials{enabled: pl.acl, accessKey: p.str(akKey, "rocketmq2", trimKeys), secretKey: p.str(skKey, skDef, trimKeys)}
	pl.reportMs, pl.compressLevel, pl.compressOver = 10000, 5, 4096
	pl.compress = d.Compress && p.boolean("c")
	if d.ReportInterval {
		if pl.reportMs, err = p.integer("ri", 10000, false); err != nil {
			return nil, err
		}
	}
	pl.p = p
	return pl, nil
}

// startup is what the batch producer does after its start-up lines, in
// its order: the body, the report timer, and with -c true the
// compression settings (read only then; the "compressType: ..." line is
// returned). A thread count <= 0 fails only after the client has started
// (startErr), which the original's JVM outlives.
func (pl *batchPlan) startup() (string, error) {
	if err := bodyCheck(pl.size); err != nil {
		return "", err
	}
	if pl.reportMs <= 0 {
		return "", illegalArgument()
	}
	line := ""
	if pl.compress {
		var err error
		ct := pl.p.str("ct", "ZLIB", true)
		if pl.compressLevel, err = pl.p.integer("cl", 5, false); err != nil {
			return "", err
		}
		if pl.compressOver, err = pl.p.integer("ch", 4096, false); err != nil {
			return "", err
		}
		if err := compressTypeCheck(ct); err != nil {
			return "", err
		}
		line = fmt.Sprintf("compressType: %s compressLevel: %d", ct, pl.compressLevel)
	}
	pl.body = randomBody(pl.size)
	return line, nil
}

// startErr is the error the batch producer's main dies of once its
// client has started: newFixedThreadPool(<= 0).
func (pl *batchPlan) startErr() error {
	if pl.threads <= 0 {
		return illegalArgument()
	}
	return threadsCheck(pl.threads)
}
