package redisbench

import (
	"strconv"
	"strings"
)

// randPlaceholder is replaced in place, per batch, by a 12-digit random number when -r is given.
const randPlaceholder = "__rand_int__"

// tagPlaceholder is replaced in place, per batch, by a hash tag routing the key to the client's node in --cluster mode.
const tagPlaceholder = "{tag}"

// benchmarkSpec is one benchmark to run: the title printed in every report
// line and the bytes of one command, repeated -P times per batch.
type benchmarkSpec struct {
	title   string
	command []byte
}

// suiteEntry is one test of the default suite.
type suiteEntry struct {
	title string
	// names are the -t names that select the test.
	names []string
	// args builds the command; tag is "" or ":{tag}", data the payload, rnd whether -r is on.
	args func(tag, data string, rnd bool) []string
	// inline marks PING_INLINE, which is sent as the inline "PING\r\n" rather than RESP.
	inline bool
}

var lrangeNames = []string{"lrange", "lrange_100", "lrange_300", "lrange_500", "lrange_600"}

// defaultSuite is redis-benchmark 7.4's default test list, in its order.
var defaultSuite = []suiteEntry{
	{title: "PING_INLINE", names: []string{"ping_inline", "ping"}, inline: true},
	{title: "PING_MBULK", names: []string{"ping_mbulk", "ping"}, args: fixed("PING")},
	{title: "SET", names: []string{"set"}, args: func(tag, data string, _ bool) []string {
		return []string{"SET", "key" + tag + ":" + randPlaceholder, data}
	}},
	{title: "GET", names: []string{"get"}, args: func(tag, _ string, _ bool) []string {
		return []string{"GET", "key" + tag + ":" + randPlaceholder}
	}},
	{title: "INCR", names: []string{"incr"}, args: func(tag, _ string, _ bool) []string {
		return []string{"INCR", "counter" + tag + ":" + randPlaceholder}
	}},
	{title: "LPUSH", names: []string{"lpush"}, args: func(tag, data string, _ bool) []string {
		return []string{"LPUSH", "mylist" + tag, data}
	}},
	{title: "RPUSH", names: []string{"rpush"}, args: func(tag, data string, _ bool) []string {
		return []string{"RPUSH", "mylist" + tag, data}
	}},
	{title: "LPOP", names: []string{"lpop"}, args: keyOnly("LPOP", "mylist")},
	{title: "RPOP", names: []string{"rpop"}, args: keyOnly("RPOP", "mylist")},
	{title: "SADD", names: []string{"sadd"}, args: func(tag, _ string, _ bool) []string {
		return []string{"SADD", "myset" + tag, "element:" + randPlaceholder}
	}},
	{title: "HSET", names: []string{"hset"}, args: func(tag, data string, _ bool) []string {
		return []string{"HSET", "myhash" + tag, "element:" + randPlaceholder, data}
	}},
	{title: "SPOP", names: []string{"spop"}, args: keyOnly("SPOP", "myset")},
	{title: "ZADD", names: []string{"zadd"}, args: func(tag, _ string, rnd bool) []string {
		score := "0"
		if rnd {
			score = randPlaceholder
		}
		return []string{"ZADD", "myzset" + tag, score, "element:" + randPlaceholder}
	}},
	{title: "ZPOPMIN", names: []string{"zpopmin"}, args: keyOnly("ZPOPMIN", "myzset")},
	{title: "LPUSH (needed to benchmark LRANGE)", names: lrangeNames, args: func(tag, data string, _ bool) []string {
		return []string{"LPUSH", "mylist" + tag, data}
	}},
	{title: "LRANGE_100 (first 100 elements)", names: []string{"lrange", "lrange_100"}, args: lrange(99)},
	{title: "LRANGE_300 (first 300 elements)", names: []string{"lrange", "lrange_300"}, args: lrange(299)},
	{title: "LRANGE_500 (first 500 elements)", names: []string{"lrange", "lrange_500"}, args: lrange(499)},
	{title: "LRANGE_600 (first 600 elements)", names: []string{"lrange", "lrange_600"}, args: lrange(599)},
	{title: "MSET (10 keys)", names: []string{"mset"}, args: func(tag, data string, _ bool) []string {
		args := []string{"MSET"}
		for range 10 {
			args = append(args, "key"+tag+":"+randPlaceholder, data)
		}
		return args
	}},
	{title: "XADD", names: []string{"xadd"}, args: func(tag, data string, _ bool) []string {
		return []string{"XADD", "mystream" + tag, "*", "myfield", data}
	}},
}

func fixed(args ...string) func(string, string, bool) []string {
	return func(string, string, bool) []string { return args }
}

func keyOnly(cmd, key string) func(string, string, bool) []string {
	return func(tag, _ string, _ bool) []string { return []string{cmd, key + tag} }
}

func lrange(stop int) func(string, string, bool) []string {
	return func(tag, _ string, _ bool) []string {
		return []string{"LRANGE", "mylist" + tag, "0", strconv.Itoa(stop)}
	}
}

// selectedSuite returns the default tests that o selects, in suite order,
// with their commands built for the given payload.
func selectedSuite(o *Options, data string) []benchmarkSpec {
	tag := ""
	if o.Cluster {
		tag = ":" + tagPlaceholder
	}
	var specs []benchmarkSpec
	for _, e := range defaultSuite {
		selected := false
		for _, n := range e.names {
			selected = selected || o.testSelected(n)
		}
		if !selected {
			continue
		}
		if e.inline {
			specs = append(specs, benchmarkSpec{title: e.title, command: []byte("PING\r\n")})
			continue
		}
		specs = append(specs, benchmarkSpec{title: e.title, command: encodeCommand(e.args(tag, data, o.RandomKeys))})
	}
	return specs
}

// customSpec is the benchmark for a command given on the command line; its
// title is the arguments joined by spaces (without the -x stdin argument).
func customSpec(args []string, stdinArg []byte, hasStdin bool) benchmarkSpec {
	title := strings.Join(args, " ")
	all := make([][]byte, 0, len(args)+1)
	for _, a := range args {
		all = append(all, []byte(a))
	}
	if hasStdin {
		all = append(all, stdinArg)
	}
	return benchmarkSpec{title: title, command: encodeArgs(all)}
}

// encodeCommand RESP-encodes a command as a multibulk request.
func encodeCommand(args []string) []byte {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return encodeArgs(b)
}

func encodeArgs(args [][]byte) []byte {
	out := make([]byte, 0, 64)
	out = append(out, '*')
	out = strconv.AppendInt(out, int64(len(args)), 10)
	out = append(out, '\r', '\n')
	for _, a := range args {
		out = append(out, '$')
		out = strconv.AppendInt(out, int64(len(a)), 10)
		out = append(out, '\r', '\n')
		out = append(out, a...)
		out = append(out, '\r', '\n')
	}
	return out
}

// payloadGenerator produces -d payloads with redis-benchmark's 32-bit LCG.
// Its state starts at 1234 and carries on across -l passes, so the data
// changes from one pass to the next exactly as the C tool's does.
type payloadGenerator struct{ state uint32 }

func newPayloadGenerator() *payloadGenerator { return &payloadGenerator{state: 1234} }

func (g *payloadGenerator) next(n int) string {
	b := make([]byte, n)
	for i := range b {
		g.state = g.state*1103515245 + 12345
		b[i] = '0' + byte((g.state>>16)&63)
	}
	return string(b)
}
