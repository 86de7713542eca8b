package perftest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/javafmt"
	"github.com/perfclones/perfclones/internal/jvm"
	"github.com/perfclones/perfclones/internal/lineout"
)

// PerfTestMulti (com.rabbitmq.perf.PerfTestMulti SPEC RESULT): runs the
// scenarios of a spec file one after another and writes the result file
// the html pages draw. Rates are computed as 2.18 does (msg/s); 2.19+
// divide by nanoseconds as if they were milliseconds, which this clone
// does not reproduce.

// warmUpSamples are the first samples a scenario's averages ignore.
const warmUpSamples = 3

// rateFactors are the fractions of the measured rate that rate-vs-latency
// runs at.
var rateFactors = []float64{0.01, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 0.96, 0.97, 0.98, 0.99, 1.0, 1.01, 1.02, 1.03, 1.04, 1.05}

// scenario is one entry of a spec file.
type scenario struct {
	name, typ string
	uri       string // "" when the scenario names none
	interval  int
	params    []map[string]any
	variables []scenarioVariable
}

type scenarioVariable struct {
	name   string // the property, camelCase: "minMsgSize"
	key    string // as written: "min-msg-size"
	values []any
}

// MultiMain is PerfTestMulti's main.
func MultiMain(ctx context.Context, args []string, sys cli.IO) int {
	out := lineout.New(sys.Stdout)
	if len(args) != 2 {
		out.Line("Usage: PerfTestMulti input-json-file output-json-file")
		return 1
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		out.Line("Input json file " + args[0] + " could not be found")
		return 1
	}
	scenarios, err := parseSpec(data)
	if err != nil {
		var exit *cli.Exit
		if errors.As(err, &exit) {
			return cli.Finish(sys, exit)
		}
		return cli.Finish(sys, jvm.Uncaught(jvm.Exception{Class: "java.lang.RuntimeException", Message: err.Error()}, nil))
	}
	uri := "amqp://localhost"
	for _, s := range scenarios {
		if s.uri != "" {
			uri = s.uri // every scenario shares one connection factory: the last uri wins
		}
	}
	results := map[string]any{}
	for _, s := range scenarios {
		out.Write("Running scenario '" + s.name + "' ")
		res, err := runScenario(ctx, s, uri, func() { out.Write("#") })
		if err == nil {
			out.Write("\n")
		}
		if err != nil {
			if _, ok := cli.Interrupted(ctx); ok {
				code, _ := cli.Interrupted(ctx)
				return code
			}
			e, causes := javaException(err)
			text := logTime() + " [main] ERROR com.rabbitmq.perf.PerfTestMulti - Error during test execution\n" + e.String() + "\n"
			for _, c := range causes {
				text += "Caused by: " + c.String() + "\n"
			}
			out.Write(text)
			return 1
		}
		results[s.name] = res
	}
	if err := os.WriteFile(args[1], []byte(gsonPretty(results)+"\n"), 0o644); err != nil {
		out.Write(logTime() + " [main] ERROR com.rabbitmq.perf.PerfTestMulti - Error during test execution\n" +
			"java.io.FileNotFoundException: " + args[1] + " (" + strerror(err) + ")\n")
		return 1
	}
	return 0
}

// lenientJSON turns the spec files' single-quoted strings (Gson reads
// them leniently) into JSON's double-quoted ones.
func lenientJSON(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			b.WriteString(s[i:min(j+1, len(s))])
			i = j
		case '\'':
			b.WriteByte('"')
			for i++; i < len(s) && s[i] != '\''; i++ {
				switch {
				case s[i] == '"':
					b.WriteString(`\"`)
				case s[i] == '\\' && i+1 < len(s):
					b.WriteByte(s[i])
					i++
					b.WriteByte(s[i])
				default:
					b.WriteByte(s[i])
				}
			}
			b.WriteByte('"')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// gsonKind is the token a lenient Gson reader sees first in text.
func gsonKind(text string) string {
	switch c := text[0]; {
	case c == '[':
		return "BEGIN_ARRAY"
	case c == '{':
		return "BEGIN_OBJECT"
	case c == '-' || '0' <= c && c <= '9':
		return "NUMBER"
	case strings.HasPrefix(text, "true") || strings.HasPrefix(text, "false"):
		return "BOOLEAN"
	case strings.HasPrefix(text, "null"):
		return "NULL"
	}
	return "STRING"
}

func parseSpec(data []byte) ([]scenario, error) {
	text := strings.TrimSpace(string(data))
	if text == "" || text == "null" {
		return nil, &cli.Exit{Code: 1, Stdout: "Input json file could not be parsed\n"}
	}
	if kind := gsonKind(text); kind != "BEGIN_ARRAY" {
		column := 1
		if kind == "BEGIN_OBJECT" {
			column = 2
		}
		return nil, &cli.Exit{Code: 1, Stderr: fmt.Sprintf("Exception in thread \"main\" com.google.gson.JsonSyntaxException: java.lang.IllegalStateException: Expected BEGIN_ARRAY but was %s at line 1 column %d path $\n", kind, column)}
	}
	var raw []map[string]any
	if err := json.Unmarshal([]byte(lenientJSON(text)), &raw); err != nil {
		return nil, &cli.Exit{Code: 1, Stderr: "Exception in thread \"main\" com.google.gson.JsonSyntaxException: " + err.Error() + "\n"}
	}
	var out []scenario
	for _, m := range raw {
		s := scenario{interval: 1000}
		var err error
		if s.typ, err = readString(m, "type"); err != nil {
			return nil, err
		}
		if s.name, err = readString(m, "name"); err != nil {
			return nil, err
		}
		if v, ok := m["interval"]; ok {
			f, ok := v.(float64)
			if !ok {
				return nil, wrongType("interval", v, "class java.lang.Double")
			}
			s.interval = int(f)
		}
		params, ok := m["params"]
		if !ok {
			return nil, errors.New("Key params not found.")
		}
		list, ok := params.([]any)
		if !ok {
			return nil, wrongType("params", params, "interface java.util.List")
		}
		for _, p := range list {
			pm, _ := p.(map[string]any)
			for k := range pm {
				if _, known := paramKeys[propertyName(k)]; !known {
					return nil, fmt.Errorf("Could not find property %s in class com.rabbitmq.perf.MulticastParams", propertyName(k))
				}
				if text, ok := pm[k].(string); ok && !numberText(propertyName(k), text) {
					return nil, &cli.Exit{Code: 1, Stderr: "Exception in thread \"main\" java.lang.NumberFormatException: For input string: \"" + text + "\"\n"}
				}
			}
			s.params = append(s.params, pm)
		}
		if u, ok := m["uri"].(string); ok {
			s.uri = u
		}
		switch s.typ {
		case "simple", "rate-vs-latency":
		case "varying":
			vars, ok := m["variables"].([]any)
			if !ok {
				return nil, errors.New("Key variables not found.")
			}
			for _, v := range vars {
				vm, _ := v.(map[string]any)
				name, err := readString(vm, "name")
				if err != nil {
					return nil, err
				}
				if t, ok := vm["type"].(string); ok && t != "multicast" {
					return nil, fmt.Errorf("Type %s was not multicast", t)
				}
				values, _ := vm["values"].([]any)
				s.variables = append(s.variables, scenarioVariable{name: propertyName(name), key: name, values: values})
			}
		default:
			return nil, fmt.Errorf("Type %s was not simple or varying.", s.typ)
		}
		out = append(out, s)
	}
	return out, nil
}

func readString(m map[string]any, key string) (string, error) {
	v, ok := m[key]
	if !ok {
		return "", fmt.Errorf("Key %s not found.", key)
	}
	s, ok := v.(string)
	if !ok {
		return "", wrongType(key, v, "class java.lang.String")
	}
	return s, nil
}

func wrongType(key string, v any, want string) error {
	class := "class java.lang.String"
	switch v.(type) {
	case float64:
		class = "class java.lang.Double"
	case bool:
		class = "class java.lang.Boolean"
	case []any:
		class = "class java.util.ArrayList"
	case map[string]any:
		class = "class com.google.gson.internal.LinkedTreeMap"
	}
	return fmt.Errorf("Object under key %s was a %s, not a %s.", key, class, want)
}

// propertyName is the MulticastParams property a spec key sets.
func propertyName(key string) string {
	switch key {
	case "body":
		return "bodyFiles"
	case "rate":
		return "producerRateLimit"
	case "consumer-rate":
		return "consumerRateLimit"
	}
	parts := strings.Split(key, "-")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// paramKeys are the properties a spec may set, and how each lands in the
// options of a run.
var paramKeys = map[string]func(o *options, v any){
	"producerCount":        func(o *options, v any) { o.producers = asInt(v) },
	"consumerCount":        func(o *options, v any) { o.consumers = asInt(v) },
	"producerChannelCount": func(o *options, v any) { o.producerChannels = asInt(v) },
	"consumerChannelCount": func(o *options, v any) { o.consumerChannels = asInt(v) },
	"timeLimit":            func(o *options, v any) { o.timeLimit = asInt(v) },
	"producerMsgCount":     func(o *options, v any) { o.producerMsgCount = asInt(v) },
	"consumerMsgCount":     func(o *options, v any) { o.consumerMsgCount = asInt(v) },
	"msgCount":             func(o *options, v any) { o.producerMsgCount, o.consumerMsgCount = asInt(v), asInt(v) },
	"minMsgSize":           func(o *options, v any) { o.minMsgSize = asInt(v) },
	"confirm":              func(o *options, v any) { o.confirm = int64(asInt(v)) },
	"confirmTimeout":       func(o *options, v any) { o.confirmTimeout = asInt(v) },
	"autoAck":              func(o *options, v any) { o.autoAck = asBool(v) },
	"multiAckEvery":        func(o *options, v any) { o.multiAckEvery = asInt(v) },
	"consumerPrefetch":     func(o *options, v any) { o.consumerPrefetch = asInt(v) },
	"channelPrefetch":      func(o *options, v any) { o.channelPrefetch = asInt(v) },
	"producerTxSize":       func(o *options, v any) { o.producerTx = asInt(v) },
	"consumerTxSize":       func(o *options, v any) { o.consumerTx = asInt(v) },
	"producerRateLimit":    func(o *options, v any) { o.producerRate = asFloat(v) },
	"consumerRateLimit":    func(o *options, v any) { o.consumerRate = asFloat(v) },
	"exchangeType":         func(o *options, v any) { o.exchangeType = fmt.Sprint(v) },
	"exchangeName":         func(o *options, v any) { o.exchangeName = fmt.Sprint(v) },
	"queueNames":           func(o *options, v any) { o.queues = asList(v) },
	"routingKey":           func(o *options, v any) { o.routingKey = fmt.Sprint(v) },
	"randomRoutingKey":     func(o *options, v any) { o.randomRoutingKey = asBool(v) },
	"skipBindingQueues":    func(o *options, v any) { o.skipBinding = asBool(v) },
	"flags":                func(o *options, v any) { o.flags = asList(v) },
	"autoDelete":           func(o *options, v any) { o.autoDelete = asBool(v) },
	"predeclared":          func(o *options, v any) { o.predeclared = asBool(v) },
	"queueArguments":       func(o *options, v any) { o.queueArgs = keyValues(fmt.Sprint(v)) },
	"useMillis":            func(o *options, v any) { o.useMillis = asBool(v) },
	"exclusive":            func(o *options, v any) { o.exclusive = asBool(v) },
	"queuePattern":         func(o *options, v any) { o.queuePattern = fmt.Sprint(v) },
	"queueSequenceFrom":    func(o *options, v any) { o.patternFrom = asInt(v) },
	"queueSequenceTo":      func(o *options, v any) { o.patternTo = asInt(v) },
	"consumerSlowStart":    func(o *options, v any) { o.slowStart = asBool(v) },
	"nack":                 func(o *options, v any) { o.nack = asBool(v) },
	"requeue":              func(o *options, v any) { o.requeue = asBool(v) },
	"shutdownTimeout":      func(o *options, v any) { o.shutdownTimeout = asInt(v) },
	"consumerLatencyInMicroseconds": func(o *options, v any) {
		o.consumerLatencyMicros = asInt(v)
	},
	"messageProperties":   func(o *options, v any) { o.messageProperties = keyValuePairs(fmt.Sprint(v)) },
	"bodyFiles":           func(o *options, v any) { o.bodyFiles = asList(v) },
	"bodyContentType":     func(o *options, v any) { o.bodyContentType = fmt.Sprint(v) },
	"jsonBody":            func(o *options, v any) { o.jsonBody = asBool(v) },
	"bodyFieldCount":      func(o *options, v any) { o.bodyFieldCount = asInt(v) },
	"bodyCount":           func(o *options, v any) { o.bodyCount = asInt(v) },
	"polling":             func(o *options, v any) { o.polling = asBool(v) },
	"pollingInterval":     func(o *options, v any) { o.pollingInterval = asInt(v) },
	"routingKeyCacheSize": func(o *options, v any) { o.routingKeyCacheSize = asInt(v) },
}

// numberText: a string value is one the property's Java setter takes
// (PerfTestMulti converts every string to the setter's type as it reads
// the spec, so a bad number stops it before any scenario runs).
func numberText(property, text string) bool {
	switch property {
	case "producerRateLimit", "consumerRateLimit":
		_, err := strconv.ParseFloat(text, 64)
		return err == nil
	case "exchangeType", "exchangeName", "queueNames", "routingKey", "flags", "queueArguments", "queuePattern",
		"messageProperties", "bodyFiles", "bodyContentType", "jsonBody", "polling",
		// booleans: any text is false but "true"
		"autoAck", "randomRoutingKey", "skipBindingQueues", "autoDelete", "predeclared", "useMillis", "exclusive",
		"consumerSlowStart", "nack", "requeue":
		return true
	}
	_, err := strconv.ParseInt(text, 10, 32)
	return err == nil
}

func asInt(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case int:
		return x
	case string:
		n, _ := strconv.Atoi(strings.TrimSpace(x))
		return n
	}
	return 0
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case string:
		f, _ := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f
	}
	return 0
}

func asBool(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return strings.EqualFold(x, "true")
	}
	return false
}

func asList(v any) []string {
	switch x := v.(type) {
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = fmt.Sprint(e)
		}
		return out
	case string:
		return strings.Split(x, ",")
	}
	return nil
}

// multicastDefaults are MulticastParams' defaults (auto-delete on, as
// ScenarioFactory sets it).
func multicastDefaults(uri string) *options {
	return &options{
		exchangeType: "direct", exchangeName: "direct", interval: 1, producerRate: -1, consumerRate: -1,
		producers: 1, consumers: 1, producerChannels: 1, consumerChannels: 1, confirm: -1, confirmTimeout: 30,
		autoDelete: true, uris: []string{uri}, patternFrom: -1, patternTo: -1, requeue: true, metricsFormat: "default",
		shutdownTimeout: 5, bodyFieldCount: 1000, bodyCount: 100, pollingInterval: -1, nioThreads: -1, nioPool: -1,
	}
}

// scenarioStats are SimpleScenarioStats: a sample per interval, and
// averages that ignore the first warmUpSamples samples.
type scenarioStats struct {
	interval   int
	minMsgSize int
	samples    []map[string]any
	// totals since the warm-up, as PerfTest resets them on the 4th report.
	elapsedTotal, elapsedIgnored int64
	sendTotal, recvTotal         int64
	latSum, latCount             float64
}

func (st *scenarioStats) onReport(r intervalReport) {
	if len(st.samples) == warmUpSamples {
		st.sendTotal, st.recvTotal, st.latSum, st.latCount = 0, 0, 0, 0
		st.elapsedIgnored = st.elapsedTotal
	}
	st.elapsedTotal += r.elapsedMs
	st.sendTotal += r.sent
	st.recvTotal += r.received
	send := 1000 * float64(r.sent) / float64(r.elapsedMs)
	recv := 1000 * float64(r.received) / float64(r.elapsedMs)
	sample := map[string]any{
		"send-msg-rate": send, "send-bytes-rate": send * float64(st.minMsgSize),
		"recv-msg-rate": recv, "recv-bytes-rate": recv * float64(st.minMsgSize),
		"elapsed": st.elapsedTotal,
	}
	if r.latencyCount > 0 {
		sample["avg-latency"] = int64(r.latencyMean)
		sample["min-latency"] = r.latencyMin
		sample["max-latency"] = r.latencyMax
		st.latSum += r.latencyMean * float64(r.latencyCount)
		st.latCount += float64(r.latencyCount)
	}
	st.samples = append(st.samples, sample)
}

func (st *scenarioStats) rate(count int64) float64 {
	el := st.elapsedTotal - st.elapsedIgnored
	if el == 0 {
		return 0
	}
	return 1000 * float64(count) / float64(el)
}

func (st *scenarioStats) sendRate() float64 { return st.rate(st.sendTotal) }
func (st *scenarioStats) recvRate() float64 { return st.rate(st.recvTotal) }

func (st *scenarioStats) results() map[string]any {
	m := map[string]any{
		"send-msg-rate": st.sendRate(), "send-bytes-rate": st.sendRate() * float64(st.minMsgSize),
		"recv-msg-rate": st.recvRate(), "recv-bytes-rate": st.recvRate() * float64(st.minMsgSize),
		"samples": st.samples,
	}
	if st.latCount > 0 {
		m["avg-latency"] = int64(st.latSum / st.latCount)
	}
	return m
}

// runParams runs one params set into st.
func runParams(ctx context.Context, params map[string]any, uri string, st *scenarioStats, overrides map[string]any) error {
	o := multicastDefaults(uri)
	for k, v := range params {
		paramKeys[propertyName(k)](o, v)
	}
	for k, v := range overrides {
		paramKeys[k](o, v)
	}
	st.minMsgSize = o.minMsgSize
	if o.queuePattern == "" {
		o.patternFrom, o.patternTo = -1, -1
	}
	rel := releases.Must("2.18")
	p := buildPlan(&rel.Diff, o, "perftest")
	p.quiet = true
	p.interval = time.Duration(st.interval) * time.Millisecond
	ex, err := execute(ctx, p, lineout.New(io.Discard), func(string) {}, nil, st.onReport)
	if ex == nil {
		return ctx.Err()
	}
	return err
}

// runScenario runs a scenario and returns its result-file value; tick is
// called after each combination of a varying scenario.
func runScenario(ctx context.Context, s scenario, uri string, tick func()) (map[string]any, error) {
	switch s.typ {
	case "simple":
		st := &scenarioStats{interval: s.interval}
		for _, p := range s.params {
			if err := runParams(ctx, p, uri, st, nil); err != nil {
				return nil, err
			}
		}
		return st.results(), nil
	case "varying":
		return runVarying(ctx, s.params, s.variables, uri, tick)
	default: // rate-vs-latency
		st := &scenarioStats{interval: 1000}
		if err := runParams(ctx, s.params[0], uri, st, nil); err != nil {
			return nil, err
		}
		maxRate := int(st.recvRate()+st.sendRate()) / 2
		values := make([]any, len(rateFactors))
		for i, f := range rateFactors {
			values[i] = int(f * float64(maxRate))
		}
		return runVarying(ctx, s.params[:1], []scenarioVariable{{name: "producerRateLimit", values: values}}, uri, tick)
	}
}

// valueString is a variable value as PerfTest keys results by it: Gson
// reads spec numbers as doubles ("1000.0"); rate-vs-latency's are ints.
func valueString(v any) string {
	switch x := v.(type) {
	case float64:
		return javafmt.DoubleToString(x)
	case int:
		return strconv.Itoa(x)
	}
	return fmt.Sprint(v)
}

func runVarying(ctx context.Context, params []map[string]any, vars []scenarioVariable, uri string, tick func()) (map[string]any, error) {
	dims := make([]any, len(vars))
	dimValues := map[string]any{}
	for i, v := range vars {
		dims[i] = v.name
		var list []any
		for _, x := range v.values {
			list = append(list, valueString(x))
		}
		dimValues[v.name] = list
	}
	data := map[string]any{}
	var walk func(i int, chosen map[string]any, node map[string]any) error
	walk = func(i int, chosen map[string]any, node map[string]any) error {
		if i == len(vars) {
			return nil
		}
		for _, x := range vars[i].values {
			key := valueString(x)
			next := map[string]any{}
			for k, v := range chosen {
				next[k] = v
			}
			next[vars[i].name] = x
			if i == len(vars)-1 {
				st := &scenarioStats{interval: 1000}
				for _, p := range params {
					if err := runParams(ctx, p, uri, st, next); err != nil {
						return err
					}
				}
				node[key] = st.results()
				tick()
				continue
			}
			child, _ := node[key].(map[string]any)
			if child == nil {
				child = map[string]any{}
				node[key] = child
			}
			if err := walk(i+1, next, child); err != nil {
				return err
			}
		}
		return nil
	}
	for _, v := range vars {
		if _, ok := paramKeys[v.name]; !ok {
			return nil, fmt.Errorf("Could not find property %s in class com.rabbitmq.perf.MulticastParams", v.name)
		}
	}
	if err := walk(0, map[string]any{}, data); err != nil {
		return nil, err
	}
	return map[string]any{"dimensions": dims, "dimension-values": dimValues, "data": data}, nil
}

// gsonPretty is Gson's pretty printing (two-space indents, "key": value)
// of maps (keys sorted), lists, strings, doubles (Double.toString),
// integers and booleans.
func gsonPretty(v any) string {
	var b strings.Builder
	writeGson(&b, v, "")
	return b.String()
}

func writeGson(b *strings.Builder, v any, indent string) {
	inner := indent + "  "
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("{\n")
		for i, k := range keys {
			kb, _ := json.Marshal(k)
			b.WriteString(inner + string(kb) + ": ")
			writeGson(b, x[k], inner)
			if i < len(keys)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(indent + "}")
	case []map[string]any:
		list := make([]any, len(x))
		for i := range x {
			list[i] = x[i]
		}
		writeGson(b, list, indent)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range x {
			b.WriteString(inner)
			writeGson(b, e, inner)
			if i < len(x)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(indent + "]")
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b.WriteString("0.0")
			return
		}
		b.WriteString(javafmt.DoubleToString(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int:
		b.WriteString(strconv.Itoa(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		sb, _ := json.Marshal(x)
		b.WriteString(string(sb))
	default:
		sb, _ := json.Marshal(x)
		b.WriteString(string(sb))
	}
}
