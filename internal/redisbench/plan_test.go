package redisbench

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// selectedSuite is the first pass of the tests that o selects, for the payload data.
func selectedSuite(o *Options, data string) []benchmarkSpec {
	tag := ""
	if o.Cluster {
		tag = ":" + tagPlaceholder
	}
	var specs []benchmarkSpec
	for _, e := range selectedEntries(o) {
		specs = append(specs, e.spec(tag, data, o.RandomKeys))
	}
	return specs
}

func TestDefaultSuiteCommands(t *testing.T) {
	o := defaultOptions()
	specs := selectedSuite(&o, "VXK")
	want := []struct{ title, cmd string }{
		{"PING_INLINE", "PING\r\n"},
		{"PING_MBULK", "*1\r\n$4\r\nPING\r\n"},
		{"SET", "*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$3\r\nVXK\r\n"},
		{"GET", "*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n"},
		{"INCR", "*2\r\n$4\r\nINCR\r\n$20\r\ncounter:__rand_int__\r\n"},
		{"LPUSH", "*3\r\n$5\r\nLPUSH\r\n$6\r\nmylist\r\n$3\r\nVXK\r\n"},
		{"RPUSH", "*3\r\n$5\r\nRPUSH\r\n$6\r\nmylist\r\n$3\r\nVXK\r\n"},
		{"LPOP", "*2\r\n$4\r\nLPOP\r\n$6\r\nmylist\r\n"},
		{"RPOP", "*2\r\n$4\r\nRPOP\r\n$6\r\nmylist\r\n"},
		{"SADD", "*3\r\n$4\r\nSADD\r\n$5\r\nmyset\r\n$20\r\nelement:__rand_int__\r\n"},
		{"HSET", "*4\r\n$4\r\nHSET\r\n$6\r\nmyhash\r\n$20\r\nelement:__rand_int__\r\n$3\r\nVXK\r\n"},
		{"SPOP", "*2\r\n$4\r\nSPOP\r\n$5\r\nmyset\r\n"},
		{"ZADD", "*4\r\n$4\r\nZADD\r\n$6\r\nmyzset\r\n$1\r\n0\r\n$20\r\nelement:__rand_int__\r\n"},
		{"ZPOPMIN", "*2\r\n$7\r\nZPOPMIN\r\n$6\r\nmyzset\r\n"},
		{"LPUSH (needed to benchmark LRANGE)", "*3\r\n$5\r\nLPUSH\r\n$6\r\nmylist\r\n$3\r\nVXK\r\n"},
		{"LRANGE_100 (first 100 elements)", "*4\r\n$6\r\nLRANGE\r\n$6\r\nmylist\r\n$1\r\n0\r\n$2\r\n99\r\n"},
		{"LRANGE_300 (first 300 elements)", "*4\r\n$6\r\nLRANGE\r\n$6\r\nmylist\r\n$1\r\n0\r\n$3\r\n299\r\n"},
		{"LRANGE_500 (first 500 elements)", "*4\r\n$6\r\nLRANGE\r\n$6\r\nmylist\r\n$1\r\n0\r\n$3\r\n499\r\n"},
		{"LRANGE_600 (first 600 elements)", "*4\r\n$6\r\nLRANGE\r\n$6\r\nmylist\r\n$1\r\n0\r\n$3\r\n599\r\n"},
		{"MSET (10 keys)", "*21\r\n$4\r\nMSET\r\n" + strings.Repeat("$16\r\nkey:__rand_int__\r\n$3\r\nVXK\r\n", 10)},
		{"XADD", "*5\r\n$4\r\nXADD\r\n$8\r\nmystream\r\n$1\r\n*\r\n$7\r\nmyfield\r\n$3\r\nVXK\r\n"},
	}
	if len(specs) != len(want) {
		t.Fatalf("suite has %d tests, want %d", len(specs), len(want))
	}
	for i, w := range want {
		if specs[i].title != w.title || string(specs[i].command) != w.cmd {
			t.Errorf("test %d = %q %q, want %q %q", i, specs[i].title, specs[i].command, w.title, w.cmd)
		}
	}
}

func TestSuiteClusterAndRandomVariants(t *testing.T) {
	o, _ := parseOptions([]string{"--cluster", "-r", "100", "-t", "set,zadd"})
	specs := selectedSuite(&o, "x")
	if got := string(specs[0].command); got != "*3\r\n$3\r\nSET\r\n$22\r\nkey:{tag}:__rand_int__\r\n$1\r\nx\r\n" {
		t.Errorf("cluster SET = %q", got)
	}
	// With -r the ZADD score is random too.
	if got := string(specs[1].command); got != "*4\r\n$4\r\nZADD\r\n$12\r\nmyzset:{tag}\r\n$12\r\n__rand_int__\r\n$20\r\nelement:__rand_int__\r\n" {
		t.Errorf("cluster ZADD = %q", got)
	}
}

func TestCustomSpec(t *testing.T) {
	s := customSpec([]string{"lpush", "mylist", "__rand_int__"}, nil, false)
	if s.title != "lpush mylist __rand_int__" || len(s.command) != 46 {
		t.Errorf("custom spec = %q, %d bytes; want the C tool's title and 46 bytes payload", s.title, len(s.command))
	}
	s = customSpec([]string{"set", "k"}, []byte("a\x00b"), true)
	if s.title != "set k" || string(s.command) != "*3\r\n$3\r\nset\r\n$1\r\nk\r\n$3\r\na\x00b\r\n" {
		t.Errorf("-x spec = %q %q", s.title, s.command)
	}
}

func TestPayloadGenerator(t *testing.T) {
	g := newPayloadGenerator()
	const first100 = `VXKeHogKgJ=[5V9_X^b?48OKF2jGA<f:iR@50o7dS3JV4Q6L68lC[GTA]0DaMg?_oSmcS2^N1J?ELSX@CfKQ7cM5aea\ngY8a3LG`
	if got := g.next(100); got != first100 {
		t.Errorf("payload = %q\nwant      %q", got, first100)
	}
	if got := newPayloadGenerator().next(3); got != "VXK" {
		t.Errorf("default payload = %q, want VXK", got)
	}
	// The state carries on between -l passes.
	if g.next(3) == "VXK" {
		t.Error("second pass repeated the first payload")
	}
}

func TestGlibcRandom(t *testing.T) {
	// Values printed by glibc's random() after srandom(seed), on Debian 12.
	tests := []struct {
		seed uint32
		want []int32
	}{
		{42, []int32{71876166, 708592740, 1483128881, 907283241, 442951012}},
		{0x80000001, []int32{1081815585, 5219348, 1080917272}},
		{1, []int32{1804289383, 846930886, 1681692777, 1714636915, 1957747793}},
	}
	for _, tt := range tests {
		g := newGlibcRandom(tt.seed)
		for i, w := range tt.want {
			if got := g.next(); got != w {
				t.Errorf("seed %d: value %d = %d, want %d", tt.seed, i, got, w)
			}
		}
	}
	// srandom(0) is srandom(1).
	if newGlibcRandom(0).next() != 1804289383 {
		t.Error("seed 0 should act as seed 1")
	}
}

func TestFillKeys(t *testing.T) {
	buf := []byte("k:__rand_int__:__rand_int__")
	r := &sharedRandom{g: newGlibcRandom(42)}
	r.fillKeys(buf, findAll(buf, randPlaceholder), 1000)
	if got := string(buf); got != "k:000000000166:000000000740" {
		t.Errorf("keys = %q", got)
	}
	r.fillKeys(buf, findAll([]byte("k:__rand_int__:__rand_int__"), randPlaceholder), 0)
	if got := string(buf); got != "k:000000000000:000000000000" {
		t.Errorf("keyspace 0 keys = %q", got)
	}
}

func TestKeySlot(t *testing.T) {
	tests := map[string]int{
		"123456789":            0x31C3 & 16383, // the CRC-16/XMODEM check value
		"foo":                  12182,
		"bar":                  5061,
		"{user1000}.following": keySlot("user1000"),
		"foo{{bar}}zap":        keySlot("{bar"),
	}
	for key, want := range tests {
		if got := keySlot(key); got != want {
			t.Errorf("keySlot(%q) = %d, want %d", key, got, want)
		}
	}
	if keySlot("foo{}{bar}") != int(crc16("foo{}{bar}")&16383) {
		t.Error("empty hash tag must hash the whole key")
	}
}

func TestSlotTags(t *testing.T) {
	for slot := range clusterSlots {
		tag := slotTag(slot)
		if tag == "" || len(tag) > 3 {
			t.Fatalf("slot %d has tag %q", slot, tag)
		}
		if got := keySlot("key:{" + tag + "}:1"); got != slot {
			t.Fatalf("tag %q for slot %d hashes to %d", tag, slot, got)
		}
	}
	// Padded with '}' as the C tool writes it into the 5-byte "{tag}".
	n := &clusterNode{}
	slots := []int{1}
	n.slots.Store(&slots)
	buf := []byte("k{tag}:x")
	n.writeTag(buf, findAll(buf, tagPlaceholder), &sharedRandom{g: newGlibcRandom(1)})
	if keySlot(string(buf)) != 1 {
		t.Errorf("tagged key %q is not in slot 1", buf)
	}
}

func TestParseClusterNodes(t *testing.T) {
	text := "" +
		"aaa 127.0.0.1:7101@17101 myself,master - 0 0 1 connected 0-5460\n" +
		"bbb 127.0.0.1:7102@17102,host-b master - 0 1 2 connected 5461-10922 [5461->-ccc]\n" +
		"ccc 127.0.0.1:7103@17103 master - 0 1 3 connected 10923 10924-16383\n" +
		"ddd 127.0.0.1:7104@17104 slave aaa 0 1 1 connected\n" +
		"eee 127.0.0.1:7105@17105 master - 0 1 4 connected\n"
	nodes, warnings, err := parseClusterNodes(text, endpoint{host: "127.0.0.1", port: 7101})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3 {
		t.Fatalf("got %d masters, want 3", len(nodes))
	}
	wantSlots := []int{5461, 5462, 5461}
	for i, n := range nodes {
		if got := len(*n.slots.Load()); got != wantSlots[i] {
			t.Errorf("node %s has %d slots, want %d", n.name, got, wantSlots[i])
		}
	}
	if nodes[1].ep.String() != "127.0.0.1:7102" {
		t.Errorf("address = %s", nodes[1].ep)
	}
	if len(warnings) != 1 || warnings[0] != "WARNING: Master node 127.0.0.1:7105 has no slots, skipping..." {
		t.Errorf("warnings = %q", warnings)
	}
	if _, _, err := parseClusterNodes("x\n", endpoint{}); err == nil || err.Error() != "Invalid CLUSTER NODES reply: missing flags." {
		t.Errorf("short line error = %v", err)
	}
	cc := &clusterConfig{nodes: nodes}
	for i, want := range []string{"aaa", "bbb", "ccc", "aaa"} {
		if got := cc.nodeForClient(i, 3).name; got != want {
			t.Errorf("client %d goes to %s, want %s", i, got, want)
		}
	}
}

func TestBuildPlan(t *testing.T) {
	tests := []struct {
		args                  string
		prefix, clusterPrefix string
		auth                  []string
		connections           int
		reconnect             bool
		tests                 []string // titles of the first pass
		payloadSize           int
	}{
		{args: "-c 0 -t set,get", connections: 1, tests: []string{"SET", "GET"}, payloadSize: 3},
		{args: "-a pw --user u --dbnum 2 -3 --enable-tracking -k 0 -d 10 -t mset",
			prefix:        "*3\r\n$4\r\nAUTH\r\n$1\r\nu\r\n$2\r\npw\r\n*3\r\n$6\r\nCLIENT\r\n$8\r\nTRACKING\r\n$2\r\non\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n",
			clusterPrefix: "*3\r\n$4\r\nAUTH\r\n$1\r\nu\r\n$2\r\npw\r\n*3\r\n$6\r\nCLIENT\r\n$8\r\nTRACKING\r\n$2\r\non\r\n*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n",
			auth:          []string{"AUTH", "u", "pw"}, connections: 50, reconnect: true, tests: []string{"MSET (10 keys)"}, payloadSize: 10},
		{args: "-a pw -c 7 get k", prefix: "*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n", clusterPrefix: "*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n",
			auth: []string{"AUTH", "pw"}, connections: 7},
	}
	for _, tt := range tests {
		o, _ := parseOptions(strings.Fields(tt.args))
		p, err := buildPlan(&o)
		if err != nil {
			t.Fatalf("%s: %v", tt.args, err)
		}
		if string(p.conn.prefix) != tt.prefix || string(p.clusterConn.prefix) != tt.clusterPrefix ||
			p.conn.prefixReplies != strings.Count(tt.prefix, "*") || p.conn.reconnect != tt.reconnect {
			t.Errorf("%s: conn %+v, cluster conn %+v", tt.args, p.conn, p.clusterConn)
		}
		if !reflect.DeepEqual(p.auth, tt.auth) || p.connections != tt.connections {
			t.Errorf("%s: auth %q connections %d", tt.args, p.auth, p.connections)
		}
		if p.command != nil {
			if s := p.customTest(nil); s.title != strings.Join(p.command, " ") || s.payloadSize != len(s.command) {
				t.Errorf("%s: custom test %+v", tt.args, s)
			}
			continue
		}
		var titles []string
		for _, s := range p.nextPass() {
			titles = append(titles, s.title)
			if s.payloadSize != tt.payloadSize {
				t.Errorf("%s: %s payload %d", tt.args, s.title, s.payloadSize)
			}
		}
		if !reflect.DeepEqual(titles, tt.tests) {
			t.Errorf("%s: tests %q, want %q", tt.args, titles, tt.tests)
		}
	}
	// Each -l pass gets new data, as the C tool's do.
	o, _ := parseOptions([]string{"-t", "set"})
	p, _ := buildPlan(&o)
	if a, b := p.nextPass()[0].command, p.nextPass()[0].command; bytes.Equal(a, b) {
		t.Errorf("two passes sent the same payload %q", a)
	}
}

func TestMemoryRefusal(t *testing.T) {
	for _, tt := range []struct {
		args    string
		refused bool
	}{
		{"-n 1000 -t set -q -P 2000000000", true},
		{"-d 1000000000", true}, // MSET alone carries ten copies
		{"-c 5000 -n 200000 -t set,get -q", false},
		{"-c 50 -P 16 -d 1000", false},
		{"-P 2000000000 ping", true},
	} {
		o, res := parseOptions(strings.Fields(tt.args))
		if res.outcome != outcomeRun {
			t.Fatalf("%s: outcome %d", tt.args, res.outcome)
		}
		p, err := buildPlan(&o)
		if err != nil {
			t.Fatal(err)
		}
		msg := memoryRefusal(p.bufferBytes(p.command), 8<<30) // an 8 GiB host
		if (msg != "") != tt.refused {
			t.Errorf("%s: refusal %q, want refused %v", tt.args, msg, tt.refused)
		}
	}
	if memoryRefusal(1<<40, 0) != "" {
		t.Error("refused with the available memory unknown")
	}
}
