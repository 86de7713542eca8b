package kafkaperf

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/perfclones/perfclones/internal/jvm"
)

// payloadSource gives the value of record i.
type payloadSource interface {
	payload(i int64) []byte
}

// randomPayloads serves --record-size values: random A-Z bytes, a different
// value for every record as in Kafka 3.0+. Instead of drawing recordSize
// random letters per record (the cost that halved the original's
// throughput, PR #13410), values are windows at random offsets into one
// block of random letters drawn once; the block is never written again, so
// the producer may keep the slices until they are sent.
type randomPayloads struct {
	size  int
	block []byte
	rng   *rand.Rand
}

const randomBlockSize = 4 << 20

func newRandomPayloads(size int, seed uint64) *randomPayloads {
	rng := rand.New(rand.NewPCG(seed, 0))
	block := make([]byte, randomBlockSize+size)
	for i := range block {
		block[i] = byte('A' + rng.IntN(26))
	}
	return &randomPayloads{size: size, block: block, rng: rng}
}

func (p *randomPayloads) payload(int64) []byte {
	off := p.rng.IntN(randomBlockSize)
	return p.block[off : off+p.size : off+p.size]
}

// fixedPayload is --record-size up to 2.8: one value of random letters,
// drawn once and sent with every record (KAFKA-12611).
type fixedPayload []byte

func (p fixedPayload) payload(int64) []byte { return p }

// filePayloads picks one of the file's payloads at random for every record.
type filePayloads struct {
	values [][]byte
	rng    *rand.Rand
}

func (p *filePayloads) payload(int64) []byte { return p.values[p.rng.IntN(len(p.values))] }

// monotonicPayloads is --payload-monotonic: the record index in decimal.
type monotonicPayloads struct{ text *decimalText }

func (p monotonicPayloads) payload(i int64) []byte { return p.text.of(i) }

// decimalText writes numbers in decimal into shared chunks, one allocation
// per few thousand records instead of one each. Written text is never
// written again, so a record may keep its slice until it is sent. A nil
// decimalText allocates every number on its own.
type decimalText struct{ chunk []byte }

// decimalChunk is the size of a decimalText chunk; the longest int64 in
// decimal, the sign included, is 20 bytes.
const decimalChunk = 32 << 10

func (d *decimalText) of(n int64) []byte {
	if d == nil {
		return strconv.AppendInt(nil, n, 10)
	}
	if cap(d.chunk)-len(d.chunk) < 20 {
		d.chunk = make([]byte, 0, decimalChunk)
	}
	start := len(d.chunk)
	d.chunk = strconv.AppendInt(d.chunk, n, 10)
	return d.chunk[start:len(d.chunk):len(d.chunk)]
}

// readPayloadFile splits the file with the delimiter, a Java regex, as the
// release does (tokens: javaStringSplit or javaScanner). It prints the
// original's two lines through out; countLine is the release's format of
// the second.
func readPayloadFile(path, delimiter, countLine string, tokens func(string, *regexp.Regexp) []string, out func(string)) ([][]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	out("Reading payloads from: " + abs)
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return nil, jvm.Uncaught(jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: "File does not exist or empty file provided."}, nil)
	}
	re, err := regexp.Compile(delimiter)
	if err != nil {
		return nil, jvm.Uncaught(jvm.Exception{Class: "java.util.regex.PatternSyntaxException", Message: err.Error()}, nil)
	}
	var values [][]byte
	for _, tok := range tokens(string(data), re) {
		values = append(values, []byte(tok))
	}
	out(fmt.Sprintf(countLine, len(values)))
	return values, nil
}

// javaStringSplit is Java's String.split(regex) (Kafka up to 3.9 reads
// the file so): every piece between matches, a leading empty one
// included, trailing empty ones dropped.
func javaStringSplit(s string, re *regexp.Regexp) []string {
	parts := re.Split(s, -1)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// javaScanner is what java.util.Scanner with the delimiter returns (Kafka
// 4.x): at each token it skips one delimiter match, then takes the text up
// to the next match, so empty tokens between two delimiters count, but a
// leading delimiter and the end of the input give none.
func javaScanner(s string, re *regexp.Regexp) []string {
	var tokens []string
	pos := 0
	for pos < len(s) {
		if m := re.FindStringIndex(s[pos:]); m != nil && m[0] == 0 && m[1] > 0 {
			pos += m[1]
		}
		if pos >= len(s) {
			break
		}
		m := re.FindStringIndex(s[pos:])
		if m == nil || m[1] == 0 {
			tokens = append(tokens, s[pos:])
			break
		}
		tokens = append(tokens, s[pos:pos+m[0]])
		pos += m[0]
	}
	return tokens
}

// keySource gives the key of record i (--key-distribution, Kafka 4.4): none
// (null keys), range (0, 1, ... KEY-RANGE-1 round robin) or random, written
// as decimal text.
type keySource interface {
	key(i int64) []byte
}

type nullKeys struct{}

func (nullKeys) key(int64) []byte { return nil }

type rangeKeys struct {
	n    int64
	text decimalText
}

func (k *rangeKeys) key(i int64) []byte { return k.text.of(i % k.n) }

type randomKeys struct {
	n    int64
	rng  *rand.Rand
	text decimalText
}

func (k *randomKeys) key(int64) []byte { return k.text.of(k.rng.Int64N(k.n)) }

func newKeySource(dist string, n int64, seed uint64) keySource {
	switch dist {
	case "range":
		return &rangeKeys{n: n}
	case "random":
		return &randomKeys{n: n, rng: rand.New(rand.NewPCG(seed, 1))}
	}
	return nullKeys{}
}
