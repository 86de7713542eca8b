package perftest

// The messages a run sends, as PerfTest lays them out: the bodies (time
// sequence, files or random JSON), the properties of -mp, the values that
// take turns on a schedule (-vr, -vs, -vl), and the text --verbose prints
// for a message. The run's settings build these from the command line; the workers use
// them. Nothing here touches the network.

import (
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/perfclones/perfclones/internal/jvm"
)

// schedule is a variable value (-vr, -vs, -vl): each VALUE:DURATION holds
// for DURATION seconds, in the order given, and the cycle starts over
// after the last. PerfTest checks the clock every gcd(durations) seconds,
// so a value changes exactly at the boundaries, as at() computes it.
type schedule struct {
	values []int64
	ends   []time.Duration // cumulative end of each value in the cycle
}

// newSchedule reads definitions the command line's checks already validated (none
// of zero length).
func newSchedule(defs []string) *schedule {
	if len(defs) == 0 {
		return nil
	}
	s := &schedule{}
	var end time.Duration
	for _, d := range defs {
		v, secs, _ := strings.Cut(d, ":")
		value, _ := strconv.ParseInt(v, 10, 64)
		n, _ := strconv.ParseInt(secs, 10, 64)
		end += time.Duration(n) * time.Second
		s.values = append(s.values, value)
		s.ends = append(s.ends, end)
	}
	if end <= 0 {
		return nil
	}
	return s
}

// at is the value in force elapsed after the schedule started.
func (s *schedule) at(elapsed time.Duration) int64 {
	t := elapsed % s.ends[len(s.ends)-1]
	for i, end := range s.ends {
		if t < end {
			return s.values[i]
		}
	}
	return s.values[len(s.values)-1]
}

// bodyKind is where bodies come from: the time-sequence layout (sequence
// and timestamp in the body), files (-B) or random JSON (-jb); the last two
// carry the timestamp in a "timestamp" header instead.
type bodyKind int

const (
	timeSequenceBodies bodyKind = iota
	fileBodies
	jsonBodies
)

// bodySettings are the settings that shape bodies.
type bodySettings struct {
	kind        bodyKind
	files       []string
	contentType string // -T, with -B
	fieldCount  int    // -bfc, with -jb
	count       int    // -bc, with -jb
}

// loadBodyFiles reads -B's files as LocalFilesMessageBodySource does when
// a producer is created.
func loadBodyFiles(files []string) ([][]byte, error) {
	var bodies [][]byte
	for _, f := range files {
		st, err := os.Stat(f)
		var data []byte
		if err == nil && st.Mode().IsRegular() {
			data, err = os.ReadFile(f)
		}
		if err != nil || !st.Mode().IsRegular() {
			return nil, &javaThrow{jvm.Exception{Class: "java.lang.IllegalArgumentException", Message: f + " isn't a valid body file."}}
		}
		bodies = append(bodies, data)
	}
	return bodies, nil
}

const (
	jsonLower    = "abcdefghijklmnopqrstuvwxyz"
	jsonAlphanum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

// jsonBodyPool is RandomJsonMessageBodySource's pool: fieldCount field names
// (5 to 30 lower-case letters) and as many values (5 to 200 letters and
// digits), then count bodies `{ "name" : "value","name" : "value" }`, each
// with the names shuffled and fields added until the body reaches size.
// Without any field name PerfTest fails with NoSuchElementException.
func jsonBodyPool(size, fieldCount, count int) ([][]byte, error) {
	randomText := func(maxLen int, alphabet string) string {
		n := rand.IntN(maxLen-4) + 5
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rand.IntN(len(alphabet))]
		}
		return string(b)
	}
	names := make([]string, fieldCount)
	values := make([]string, fieldCount)
	for i := range names {
		names[i] = randomText(30, jsonLower)
		values[i] = randomText(200, jsonAlphanum)
	}
	if count > 0 && fieldCount == 0 {
		return nil, &javaThrow{jvm.Exception{Class: "java.util.NoSuchElementException"}}
	}
	bodies := make([][]byte, count)
	for i := range bodies {
		rand.Shuffle(len(names), func(a, b int) { names[a], names[b] = names[b], names[a] })
		var sb strings.Builder
		sb.WriteString("{ ")
		for next := 0; ; next = (next + 1) % len(names) {
			sb.WriteString(`"` + names[next] + `" : "` + values[rand.IntN(len(values))] + `"`)
			if sb.Len() >= size {
				break
			}
			sb.WriteByte(',')
		}
		sb.WriteString(" }")
		bodies[i] = []byte(sb.String())
	}
	return bodies, nil
}

// keyValue is one k=v pair of -mp, in the order given.
type keyValue struct {
	key   string
	value any // int64 when the text is a Java long, else the text
}

// keyValuePairs splits "k=v,k=v" as the queue-argument splitting does, keeping the order; a
// later pair replaces an earlier one of the same key in place.
func keyValuePairs(s string) []keyValue {
	if s == "" {
		return nil
	}
	var out []keyValue
	index := map[string]int{}
	for _, pair := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(pair, "=")
		var value any = v
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			value = n
		}
		if i, ok := index[k]; ok {
			out[i].value = value
			continue
		}
		index[k] = len(out)
		out = append(out, keyValue{key: k, value: value})
	}
	return out
}

// messageProperties are -mp's settings: the AMQP properties PerfTest knows
// by name, and every other key as a header.
type messageProperties struct {
	contentType, contentEncoding, correlationID, replyTo string
	expiration, messageID, typ, userID, appID, clusterID string
	deliveryMode, priority                               *uint8
	timestamp                                            *time.Time
	headers                                              []keyValue
}

// javaString is Object.toString of a -mp value.
func javaString(v any) string {
	if n, ok := v.(int64); ok {
		return strconv.FormatInt(n, 10)
	}
	return v.(string)
}

// newMessageProperties is what the Producer's constructor makes of -mp:
// deliveryMode and priority must be numbers (else Java's cast fails) and
// timestamp an ISO offset date-time (else DateTimeParseException).
func newMessageProperties(pairs []keyValue) (*messageProperties, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	m := &messageProperties{}
	number := func(v any) (*uint8, error) {
		n, ok := v.(int64)
		if !ok {
			return nil, &javaThrow{jvm.Exception{Class: "java.lang.ClassCastException",
				Message: "class java.lang.String cannot be cast to class java.lang.Number (java.lang.String and java.lang.Number are in module java.base of loader 'bootstrap')"}}
		}
		// Number.intValue, then an AMQP octet.
		b := uint8(int32(n))
		return &b, nil
	}
	get := func(key string) (any, bool) {
		for _, p := range pairs {
			if p.key == key {
				return p.value, true
			}
		}
		return nil, false
	}
	// PerfTest reads the known keys in this order, so the first bad one
	// is the one reported.
	for _, key := range []string{"contentType", "contentEncoding", "deliveryMode", "priority", "correlationId", "replyTo",
		"expiration", "messageId", "timestamp", "type", "userId", "appId", "clusterId"} {
		v, ok := get(key)
		if !ok {
			continue
		}
		var err error
		switch key {
		case "contentType":
			m.contentType = javaString(v)
		case "contentEncoding":
			m.contentEncoding = javaString(v)
		case "deliveryMode":
			m.deliveryMode, err = number(v)
		case "priority":
			m.priority, err = number(v)
		case "correlationId":
			m.correlationID = javaString(v)
		case "replyTo":
			m.replyTo = javaString(v)
		case "expiration":
			m.expiration = javaString(v)
		case "messageId":
			m.messageID = javaString(v)
		case "timestamp":
			var t time.Time
			t, err = parseOffsetDateTime(javaString(v))
			m.timestamp = &t
		case "type":
			m.typ = javaString(v)
		case "userId":
			m.userID = javaString(v)
		case "appId":
			m.appID = javaString(v)
		case "clusterId":
			m.clusterID = javaString(v)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, p := range pairs {
		if !isPropertyKey(p.key) {
			m.headers = append(m.headers, p)
		}
	}
	return m, nil
}

func isPropertyKey(k string) bool {
	switch k {
	case "contentType", "contentEncoding", "deliveryMode", "priority", "correlationId", "replyTo",
		"expiration", "messageId", "timestamp", "type", "userId", "appId", "clusterId":
		return true
	}
	return false
}

// apply sets the properties on msg, after the body's content type and the
// timestamp header (so -mp wins over both, as in PerfTest).
func (m *messageProperties) apply(msg *amqp.Publishing) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&msg.ContentType, m.contentType)
	set(&msg.ContentEncoding, m.contentEncoding)
	set(&msg.CorrelationId, m.correlationID)
	set(&msg.ReplyTo, m.replyTo)
	set(&msg.Expiration, m.expiration)
	set(&msg.MessageId, m.messageID)
	set(&msg.Type, m.typ)
	set(&msg.UserId, m.userID)
	set(&msg.AppId, m.appID)
	if m.deliveryMode != nil {
		msg.DeliveryMode = *m.deliveryMode
	}
	if m.priority != nil {
		msg.Priority = *m.priority
	}
	if m.timestamp != nil {
		msg.Timestamp = *m.timestamp
	}
	if len(m.headers) > 0 && msg.Headers == nil {
		msg.Headers = amqp.Table{}
	}
	for _, h := range m.headers {
		msg.Headers[h.key] = h.value
	}
	_ = m.clusterID // amqp091-go has no cluster-id property to send
}

// parseOffsetDateTime is java.time.OffsetDateTime.parse (ISO_OFFSET_DATE_TIME):
// 2026-12-01T10:15:30+01:00, seconds and fraction optional, Z for UTC; a
// text it refuses gives Java's exception with the index it stopped at.
func parseOffsetDateTime(s string) (time.Time, error) {
	fail := func(i int) error {
		return &javaThrow{jvm.Exception{Class: "java.time.format.DateTimeParseException",
			Message: fmt.Sprintf("Text '%s' could not be parsed at index %d", s, i)}}
	}
	pos := 0
	digits := func(minN, maxN int) (int, bool) {
		start := pos
		for pos < len(s) && pos-start < maxN && s[pos] >= '0' && s[pos] <= '9' {
			pos++
		}
		if pos-start < minN {
			pos = start
			return 0, false
		}
		n, _ := strconv.Atoi(s[start:pos])
		return n, true
	}
	lit := func(c byte) bool {
		if pos < len(s) && (s[pos] == c || c == 'T' && s[pos] == 't') {
			pos++
			return true
		}
		return false
	}
	var f [6]int // year month day hour minute second
	nanos := 0
	start := pos
	sign := 1
	if pos < len(s) && (s[pos] == '+' || s[pos] == '-') {
		if s[pos] == '-' {
			sign = -1
		}
		pos++
	}
	year, ok := digits(4, 10)
	if !ok || (pos-start > 4 && start == 0 && s[0] != '+' && s[0] != '-') {
		return time.Time{}, fail(start)
	}
	f[0] = sign * year
	for i, sep := range []byte{'-', '-', 'T', ':'} {
		at := pos
		if !lit(sep) {
			return time.Time{}, fail(at)
		}
		at = pos
		if f[i+1], ok = digits(2, 2); !ok {
			return time.Time{}, fail(at)
		}
	}
	if pos < len(s) && s[pos] == ':' {
		at := pos + 1
		pos++
		if f[5], ok = digits(2, 2); !ok {
			return time.Time{}, fail(at)
		}
		if pos < len(s) && s[pos] == '.' {
			pos++
			fs := pos
			if _, ok := digits(0, 9); ok && pos > fs {
				frac := s[fs:pos] + strings.Repeat("0", 9-(pos-fs))
				nanos, _ = strconv.Atoi(frac)
			}
		}
	}
	at := pos
	offset := 0
	switch {
	case pos < len(s) && (s[pos] == 'Z' || s[pos] == 'z'):
		pos++
	case pos < len(s) && (s[pos] == '+' || s[pos] == '-'):
		osign := 1
		if s[pos] == '-' {
			osign = -1
		}
		pos++
		hh, ok1 := digits(2, 2)
		if !ok1 || !lit(':') {
			return time.Time{}, fail(at)
		}
		mm, ok2 := digits(2, 2)
		if !ok2 {
			return time.Time{}, fail(at)
		}
		ss := 0
		if pos < len(s) && s[pos] == ':' {
			pos++
			if ss, ok = digits(2, 2); !ok {
				return time.Time{}, fail(at)
			}
		}
		offset = osign * (hh*3600 + mm*60 + ss)
	default:
		return time.Time{}, fail(at)
	}
	if pos != len(s) {
		return time.Time{}, &javaThrow{jvm.Exception{Class: "java.time.format.DateTimeParseException",
			Message: fmt.Sprintf("Text '%s' could not be parsed, unparsed text found at index %d", s, pos)}}
	}
	for i, r := range []struct {
		name     string
		min, max int
	}{{"Year", -999999999, 999999999}, {"MonthOfYear", 1, 12}, {"DayOfMonth", 1, 31}, {"HourOfDay", 0, 23}, {"MinuteOfHour", 0, 59}, {"SecondOfMinute", 0, 59}} {
		if f[i] < r.min || f[i] > r.max {
			valid := fmt.Sprintf("%d - %d", r.min, r.max)
			if r.name == "DayOfMonth" {
				valid = "1 - 28/31"
			}
			return time.Time{}, &javaThrow{jvm.Exception{Class: "java.time.format.DateTimeParseException",
				Message: fmt.Sprintf("Text '%s' could not be parsed: Invalid value for %s (valid values %s): %d", s, r.name, valid, f[i])}}
		}
	}
	t := time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], nanos, time.FixedZone("", offset))
	if t.Day() != f[2] {
		return time.Time{}, &javaThrow{jvm.Exception{Class: "java.time.format.DateTimeParseException",
			Message: fmt.Sprintf("Text '%s' could not be parsed: Invalid date '%s %d'", s, strings.ToUpper(time.Month(f[1]).String()), f[2])}}
	}
	return t, nil
}

// javaHashMap follows the table size of a java.util.HashMap of String
// keys as PerfTest and the Java client fill one (put, putAll), so that
// iteration order, which --verbose-full's header lists show, is Java's:
// by bucket of the final table, then in insertion order.
type javaHashMap struct {
	keys            []string
	capacity, limit int // table length (0 before the first put), resize threshold
}

func (m *javaHashMap) resize() {
	switch {
	case m.capacity > 0:
		m.capacity *= 2
		if m.capacity >= 32 {
			m.limit *= 2
		} else {
			m.limit = m.capacity * 3 / 4
		}
	case m.limit > 0:
		m.capacity = m.limit
		m.limit = m.capacity * 3 / 4
	default:
		m.capacity, m.limit = 16, 12
	}
}

func (m *javaHashMap) put(k string) {
	for _, have := range m.keys {
		if have == k {
			return
		}
	}
	if m.capacity == 0 {
		m.resize()
	}
	m.keys = append(m.keys, k)
	if len(m.keys) > m.limit {
		m.resize()
	}
}

// putAll sizes the table for the other map first, as HashMap.putAll does.
func (m *javaHashMap) putAll(keys []string) {
	if len(keys) == 0 {
		return
	}
	if m.capacity == 0 {
		if t := int(float32(len(keys))/0.75 + 1); t > m.limit {
			n := 1
			for n < t {
				n *= 2
			}
			m.limit = n
		}
	} else {
		for len(keys) > m.limit {
			m.resize()
		}
	}
	for _, k := range keys {
		m.put(k)
	}
}

// order is the iteration order.
func (m *javaHashMap) order() []string {
	bucket := func(k string) int {
		var h int32
		for _, c := range utf16.Encode([]rune(k)) {
			h = 31*h + int32(c)
		}
		u := uint32(h)
		return int((u ^ u>>16) & uint32(m.capacity-1))
	}
	out := append([]string(nil), m.keys...)
	sort.SliceStable(out, func(i, j int) bool { return bucket(out[i]) < bucket(out[j]) })
	return out
}

// publishedHeaderOrder is the order of a published message's headers:
// -mp's extra keys collected into a HashMap, and with -B or -jb a new
// HashMap of the timestamp header and then those.
func publishedHeaderOrder(timestampHeader bool, extra []string) []string {
	mp := &javaHashMap{}
	for _, k := range extra {
		mp.put(k)
	}
	if !timestampHeader {
		return mp.order()
	}
	all := &javaHashMap{}
	all.putAll([]string{"timestamp"})
	all.putAll(mp.order())
	return all.order()
}

// receivedHeaderOrder is the order of a delivery's headers as the Java
// client reads them into a HashMap, in the order a Java PerfTest
// publisher would have sent them.
func receivedHeaderOrder(timestampHeader bool, headers amqp.Table) []string {
	var extra []string
	hasTimestamp := false
	for k := range headers {
		if k == "timestamp" && timestampHeader {
			hasTimestamp = true
			continue
		}
		extra = append(extra, k)
	}
	sort.Strings(extra)
	m := &javaHashMap{}
	for _, k := range publishedHeaderOrder(hasTimestamp, extra) {
		m.put(k)
	}
	return m.order()
}

// verboseDetails is --verbose-full's ", properties = {...}, body = ..." of a
// message, its headers in headerOrder. ts is the timestamp PerfTest read
// or wrote for it: a time-sequence body carrying it prints as its
// sequence and timestamp.
func verboseDetails(ts int64, p *amqp.Publishing, headerOrder []string) string {
	var props []string
	add := func(label, v string) {
		if v != "" {
			props = append(props, label+" = "+v)
		}
	}
	add("content-type", p.ContentType)
	add("content-encoding", p.ContentEncoding)
	if len(p.Headers) > 0 {
		keys := headerOrder
		if len(keys) != len(p.Headers) {
			keys = receivedHeaderOrder(false, p.Headers)
		}
		var hs []string
		for _, k := range keys {
			hs = append(hs, k+" = "+fmt.Sprint(p.Headers[k]))
		}
		props = append(props, "headers = {"+strings.Join(hs, ", ")+"}")
	}
	if p.DeliveryMode != 0 {
		add("delivery-mode", strconv.Itoa(int(p.DeliveryMode)))
	}
	if p.Priority != 0 {
		add("priority", strconv.Itoa(int(p.Priority)))
	}
	add("correlation-id", p.CorrelationId)
	add("reply-to", p.ReplyTo)
	add("expiration", p.Expiration)
	add("message-id", p.MessageId)
	if !p.Timestamp.IsZero() {
		// java.util.Date.toString, in the local zone.
		add("timestamp", p.Timestamp.Local().Format("Mon Jan 02 15:04:05 MST 2006"))
	}
	add("type", p.Type)
	add("user-id", p.UserId)
	add("app-id", p.AppId)
	out := "properties = {" + strings.Join(props, ", ") + "}"
	body := p.Body
	switch {
	case body == nil:
		return out + ", body = null"
	case textContentType(p.ContentType):
	case len(body) >= 12 && ts != math.MaxInt64 && int64(binary.BigEndian.Uint64(body[4:12])) == ts:
		return out + fmt.Sprintf(", body = [sequence = %d, timestamp = %d]", int32(binary.BigEndian.Uint32(body[0:4])), ts)
	}
	return out + ", body = " + strings.ToValidUTF8(string(body), "\uFFFD")
}

// textContentType: PerfTest prints such a body as text.
func textContentType(ct string) bool {
	ct = strings.ToLower(ct)
	for _, p := range []string{"text/", "application/javascript", "application/xhtml", "application/json", "application/ld+json", "application/xml"} {
		if strings.HasPrefix(ct, p) {
			return true
		}
	}
	return false
}

// randomUUID is a random (version 4) UUID, as java.util.UUID.randomUUID.
func randomUUID() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// outgoing makes the messages of one producer channel, reusing one
// Publishing (amqp091 encodes it before Publish returns).
type outgoing struct {
	kind     bodyKind
	bodies   [][]byte // -B's files or -jb's pool
	buf      []byte   // the time-sequence body, as long as the largest size
	size     int
	sizes    *schedule
	start    time.Time
	inHeader bool
	msg      amqp.Publishing
	// headerOrder is the order headers were put, for --verbose-full.
	headerOrder []string
	props       *messageProperties
	// keys is -rkcs's cache, cycled through; randomKey -K without it.
	keys      []string
	nextKey   int
	randomKey bool
	key       string
}

// outgoingSettings are what a producer channel's messages are made of.
type outgoingSettings struct {
	bodies     bodySettings
	size       int       // -s
	sizes      *schedule // -vs
	properties []keyValue
	persistent bool
	keyCache   int
	randomKey  bool
	routingKey string
}

// newOutgoing prepares a producer's messages as PerfTest does when it
// creates the producer: the body source first (reading -B's files or
// making -jb's pool), then -mp's properties, then -rkcs's keys.
func newOutgoing(s outgoingSettings) (*outgoing, error) {
	o := &outgoing{kind: s.bodies.kind, size: max(s.size, 12), sizes: s.sizes, randomKey: s.randomKey, key: s.routingKey}
	var err error
	switch s.bodies.kind {
	case fileBodies:
		if o.bodies, err = loadBodyFiles(s.bodies.files); err != nil {
			return nil, err
		}
		o.msg.ContentType = s.bodies.contentType
	case jsonBodies:
		if o.bodies, err = jsonBodyPool(s.size, s.bodies.fieldCount, s.bodies.count); err != nil {
			return nil, err
		}
		o.msg.ContentType = "application/json"
	default:
		longest := o.size
		if s.sizes != nil {
			for _, v := range s.sizes.values {
				longest = max(longest, int(v))
			}
		}
		o.buf = make([]byte, longest)
	}
	o.inHeader = s.bodies.kind != timeSequenceBodies
	if s.persistent {
		o.msg.DeliveryMode = amqp.Persistent
	}
	if o.inHeader {
		o.msg.Headers = amqp.Table{"timestamp": int64(0)}
		o.headerOrder = []string{"timestamp"}
	}
	if o.props, err = newMessageProperties(s.properties); err != nil {
		return nil, err
	}
	if o.props != nil {
		o.props.apply(&o.msg)
		var extra []string
		for _, h := range o.props.headers {
			extra = append(extra, h.key)
		}
		o.headerOrder = publishedHeaderOrder(o.inHeader, extra)
	}
	for range s.keyCache {
		o.keys = append(o.keys, randomUUID())
	}
	return o, nil
}

// begin starts -vs's schedule.
func (o *outgoing) begin(t time.Time) { o.start = t }

// next is message n (counted from 0) with timestamp ts, and its routing
// key. -jb without a pre-generated body fails as Java's random bound does.
func (o *outgoing) next(n int, ts int64) (*amqp.Publishing, string, error) {
	switch o.kind {
	case fileBodies:
		o.msg.Body = o.bodies[n%len(o.bodies)]
	case jsonBodies:
		if len(o.bodies) == 0 {
			return nil, "", errors.New("bound must be positive")
		}
		o.msg.Body = o.bodies[rand.IntN(len(o.bodies))]
	default:
		size := o.size
		if o.sizes != nil {
			size = max(int(o.sizes.at(time.Since(o.start))), 12)
		}
		body := o.buf[:size]
		binary.BigEndian.PutUint32(body[0:4], uint32(n))
		binary.BigEndian.PutUint64(body[4:12], uint64(ts))
		o.msg.Body = body
	}
	if o.inHeader {
		o.msg.Headers["timestamp"] = ts
		if o.props != nil {
			// A "timestamp" pair of -mp is put after PerfTest's own.
			for _, h := range o.props.headers {
				o.msg.Headers[h.key] = h.value
			}
		}
	}
	key := o.key
	switch {
	case len(o.keys) > 0:
		key = o.keys[o.nextKey]
		o.nextKey = (o.nextKey + 1) % len(o.keys)
	case o.randomKey:
		key = randomUUID()
	}
	return &o.msg, key, nil
}

// deliveryTimestamp is the timestamp a delivery carries: the "timestamp"
// header with -B or -jb, else bytes 4 to 12 of the body.
func deliveryTimestamp(d *amqp.Delivery, inHeader bool) (int64, bool) {
	if inHeader {
		ts, ok := d.Headers["timestamp"].(int64)
		return ts, ok
	}
	return bodyTimestamp(d.Body)
}

// bodyTimestamp is the timestamp a body of PerfTest's layout carries:
// bytes 4 to 12, after the sequence number; none in a shorter one.
func bodyTimestamp(body []byte) (int64, bool) {
	if len(body) < 12 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(body[4:12])), true
}

// PerfTest's --verbose lines (2.20+), one per message event.

func verbosePublished(producer int, ts int64, publishingID uint64, msg *amqp.Publishing, full bool, headerOrder []string) string {
	line := fmt.Sprintf("publisher %d: message published, timestamp = %d, publishing ID = %d", producer, ts, publishingID)
	if full {
		line += ", " + verboseDetails(ts, msg, headerOrder)
	}
	return line
}

func verboseReceived(consumer int, ts int64, d *amqp.Delivery, full, inHeader bool) string {
	line := fmt.Sprintf("consumer %d: received message, timestamp = %d, delivery tag = %d", consumer, ts, d.DeliveryTag)
	if full {
		p := amqp.Publishing{
			Headers: d.Headers, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding,
			DeliveryMode: d.DeliveryMode, Priority: d.Priority, CorrelationId: d.CorrelationId, ReplyTo: d.ReplyTo,
			Expiration: d.Expiration, MessageId: d.MessageId, Timestamp: d.Timestamp, Type: d.Type, UserId: d.UserId,
			AppId: d.AppId, Body: d.Body,
		}
		line += ", " + verboseDetails(ts, &p, receivedHeaderOrder(inHeader, d.Headers))
	}
	return line
}

func verboseAcknowledged(consumer int, ts int64, tag uint64, count int) string {
	return fmt.Sprintf("consumer %d: acknowledged message(s), timestamp = %d, delivery tag = %d, message count = %d", consumer, ts, tag, count)
}

func verboseConfirm(producer int, ack bool, publishingID uint64, count int) string {
	return fmt.Sprintf("publisher %d: publish confirm, type = %s, publishing ID = %d, confirm count = %d", producer, ackText(ack), publishingID, count)
}

func verboseConfirmed(producer int, ack bool, ts int64, publishingID uint64) string {
	return fmt.Sprintf("publisher %d: message confirmed, type = %s, timestamp = %d, publishing ID = %d", producer, ackText(ack), ts, publishingID)
}

func ackText(ack bool) string {
	if ack {
		return "ack"
	}
	return "nack"
}
