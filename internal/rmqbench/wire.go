package rmqbench

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The RocketMQ remoting protocol, as far as a producer needs it. A frame is
//
//	int32 length of what follows
//	int32 serialization type (high byte) and header length (low 3 bytes)
//	header
//	body
//
// and the header is either JSON (type 0) or the binary form (type 1,
// RocketMQSerializable): int16 code, byte language, int16 version, int32
// opaque, int32 flag, int32 remark length and remark, int32 length of the
// extension fields and then each as int16 key length, key, int32 value
// length, value. Brokers answer in the serialization of the request.

const (
	serializeJSON   = 0
	serializeBinary = 1

	// languageGo and remotingVersion are what rocketmq-client-go sends
	// (its LanguageCode GO and version 317): the broker treats the
	// request as that client's.
	languageGo      = 9
	remotingVersion = 317

	// flagResponse marks a reply (RemotingCommandType.RESPONSE_COMMAND).
	flagResponse = 1

	// maxFrame bounds a frame read off the wire (the Java remoting
	// layer's default is 16 MB).
	maxFrame = 16 << 20
)

// Request and response codes used here (RequestCode, ResponseCode).
const (
	codeGetRouteInfoByTopic = 105
	codeSendMessageV2       = 310

	respSuccess            = 0
	respSystemError        = 1
	respFlushDiskTimeout   = 10
	respSlaveNotAvailable  = 11
	respFlushSlaveTimeout  = 12
	respServiceUnavailable = 14
	respNoPermission       = 16
	respTopicNotExist      = 17
)

// extField is one header extension field, in the order it is written.
type extField struct{ key, value string }

// remotingReply is a decoded frame: the header's fields and the body.
type remotingReply struct {
	code      int
	opaque    int32
	flag      int32
	remark    string
	serialize byte
	ext       map[string]string
	body      []byte
}

// appendRequest appends one request frame to dst: the header in the
// given serialization, then body.
func appendRequest(dst []byte, serialize byte, code int, opaque int32, fields []extField, body []byte) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0) // the two length words, filled in below
	headerStart := len(dst)
	if serialize == serializeBinary {
		dst = binary.BigEndian.AppendUint16(dst, uint16(code))
		dst = append(dst, languageGo)
		dst = binary.BigEndian.AppendUint16(dst, remotingVersion)
		dst = binary.BigEndian.AppendUint32(dst, uint32(opaque))
		dst = binary.BigEndian.AppendUint32(dst, 0) // flag: a request
		dst = binary.BigEndian.AppendUint32(dst, 0) // no remark
		extStart := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		for _, f := range fields {
			dst = binary.BigEndian.AppendUint16(dst, uint16(len(f.key)))
			dst = append(dst, f.key...)
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(f.value)))
			dst = append(dst, f.value...)
		}
		binary.BigEndian.PutUint32(dst[extStart:], uint32(len(dst)-extStart-4))
	} else {
		dst = append(dst, `{"code":`...)
		dst = strconv.AppendInt(dst, int64(code), 10)
		dst = append(dst, `,"language":"GO","version":`...)
		dst = strconv.AppendInt(dst, remotingVersion, 10)
		dst = append(dst, `,"opaque":`...)
		dst = strconv.AppendInt(dst, int64(opaque), 10)
		dst = append(dst, `,"flag":0,"remark":"","extFields":{`...)
		for i, f := range fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, f.key)
			dst = append(dst, ':')
			dst = appendJSONString(dst, f.value)
		}
		dst = append(dst, "}}"...)
	}
	headerLen := len(dst) - headerStart
	dst = append(dst, body...)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	binary.BigEndian.PutUint32(dst[start+4:], uint32(serialize)<<24|uint32(headerLen))
	return dst
}

// appendJSONString appends s as a JSON string.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

var errShortFrame = errors.New("remoting frame too short")

// decodeFrame decodes a frame without its leading length word (as read
// off the wire after it). The reply's strings are copies; body aliases
// frame.
func decodeFrame(frame []byte) (*remotingReply, error) {
	if len(frame) < 4 {
		return nil, errShortFrame
	}
	word := binary.BigEndian.Uint32(frame)
	serialize, headerLen := byte(word>>24), int(word&0xffffff)
	if headerLen > len(frame)-4 {
		return nil, fmt.Errorf("remoting header of %d bytes in a frame of %d", headerLen, len(frame))
	}
	header := frame[4 : 4+headerLen]
	var r *remotingReply
	var err error
	switch serialize {
	case serializeBinary:
		r, err = decodeBinaryHeader(header)
	case serializeJSON:
		r, err = decodeJSONHeader(header)
	default:
		return nil, fmt.Errorf("unknown remoting serialization %d", serialize)
	}
	if err != nil {
		return nil, err
	}
	r.serialize = serialize
	r.body = frame[4+headerLen:]
	return r, nil
}

func decodeBinaryHeader(h []byte) (*remotingReply, error) {
	if len(h) < 17 {
		return nil, errShortFrame
	}
	r := &remotingReply{
		code:   int(int16(binary.BigEndian.Uint16(h))),
		opaque: int32(binary.BigEndian.Uint32(h[5:])),
		flag:   int32(binary.BigEndian.Uint32(h[9:])),
	}
	p := h[13:]
	remarkLen := int(binary.BigEndian.Uint32(p))
	p = p[4:]
	if remarkLen < 0 || remarkLen > len(p) {
		return nil, errShortFrame
	}
	r.remark = string(p[:remarkLen])
	p = p[remarkLen:]
	if len(p) < 4 {
		return nil, errShortFrame
	}
	extLen := int(binary.BigEndian.Uint32(p))
	p = p[4:]
	if extLen < 0 || extLen > len(p) {
		return nil, errShortFrame
	}
	p = p[:extLen]
	r.ext = make(map[string]string, 8)
	for len(p) > 0 {
		if len(p) < 2 {
			return nil, errShortFrame
		}
		kl := int(binary.BigEndian.Uint16(p))
		p = p[2:]
		if kl > len(p) {
			return nil, errShortFrame
		}
		k := string(p[:kl])
		p = p[kl:]
		if len(p) < 4 {
			return nil, errShortFrame
		}
		vl := int(binary.BigEndian.Uint32(p))
		p = p[4:]
		if vl < 0 || vl > len(p) {
			return nil, errShortFrame
		}
		r.ext[k] = string(p[:vl])
		p = p[vl:]
	}
	return r, nil
}

// decodeJSONHeader reads a JSON header: the fields a reply needs, the
// others skipped. Every reply of a 5.3 broker has one, so it is parsed
// here rather than by encoding/json's reflection, at a fraction of the
// cost.
func decodeJSONHeader(h []byte) (*remotingReply, error) {
	d := jsonScan{b: h}
	r := &remotingReply{}
	err := d.object(func(key []byte) error {
		switch string(key) {
		case "code":
			n, err := d.integer()
			r.code = int(n)
			return err
		case "opaque":
			n, err := d.integer()
			r.opaque = int32(n)
			return err
		case "flag":
			n, err := d.integer()
			r.flag = int32(n)
			return err
		case "remark":
			if d.null() {
				return nil
			}
			s, err := d.str()
			r.remark = s
			return err
		case "extFields":
			if d.null() {
				return nil
			}
			r.ext = make(map[string]string, 8)
			return d.object(func(k []byte) error {
				key := string(k)
				if d.null() {
					r.ext[key] = ""
					return nil
				}
				v, err := d.str()
				r.ext[key] = v
				return err
			})
		}
		return d.skip()
	})
	if err == nil {
		d.space()
		if d.i != len(d.b) {
			err = d.fail()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("remoting header: %v", err)
	}
	if r.ext == nil {
		r.ext = map[string]string{}
	}
	return r, nil
}

// jsonScan reads JSON from b at i.
type jsonScan struct {
	b []byte
	i int
}

func (d *jsonScan) fail() error {
	if d.i >= len(d.b) {
		return errors.New("unexpected end of JSON")
	}
	return fmt.Errorf("unexpected %q at offset %d of JSON", d.b[d.i], d.i)
}

func (d *jsonScan) space() {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\t' || d.b[d.i] == '\n' || d.b[d.i] == '\r') {
		d.i++
	}
}

// peek returns the next byte after blanks, or 0 at the end.
func (d *jsonScan) peek() byte {
	d.space()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *jsonScan) literal(word string) bool {
	if d.peek() == word[0] && len(d.b)-d.i >= len(word) && string(d.b[d.i:d.i+len(word)]) == word {
		d.i += len(word)
		return true
	}
	return false
}

func (d *jsonScan) null() bool { return d.literal("null") }

// object reads {"key": value, ...}, calling field with each key, which
// must read the value.
func (d *jsonScan) object(field func(key []byte) error) error {
	if d.peek() != '{' {
		return d.fail()
	}
	d.i++
	if d.peek() == '}' {
		d.i++
		return nil
	}
	for {
		if d.peek() != '"' {
			return d.fail()
		}
		key, err := d.raw()
		if err != nil {
			return err
		}
		if d.peek() != ':' {
			return d.fail()
		}
		d.i++
		if err := field(key); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return d.fail()
		}
	}
}

// raw reads a string; without escapes it aliases b.
func (d *jsonScan) raw() ([]byte, error) {
	if d.peek() != '"' {
		return nil, d.fail()
	}
	d.i++
	start := d.i
	for d.i < len(d.b) {
		switch c := d.b[d.i]; {
		case c == '"':
			d.i++
			return d.b[start : d.i-1], nil
		case c == '\\':
			d.i = start - 1
			s, err := d.unquote()
			return []byte(s), err
		case c < 0x20:
			return nil, d.fail()
		}
		d.i++
	}
	return nil, d.fail()
}

func (d *jsonScan) str() (string, error) {
	b, err := d.raw()
	return string(b), err
}

// unquote reads a string with escapes, through strconv's Go rules, which
// take JSON's escapes but for \/.
func (d *jsonScan) unquote() (string, error) {
	start := d.i
	d.i++
	for d.i < len(d.b) && d.b[d.i] != '"' {
		if d.b[d.i] == '\\' {
			d.i++
		}
		d.i++
	}
	if d.i >= len(d.b) {
		return "", d.fail()
	}
	d.i++
	quoted := strings.ReplaceAll(string(d.b[start:d.i]), `\/`, "/")
	s, err := strconv.Unquote(quoted)
	if err != nil {
		return "", fmt.Errorf("bad JSON string %s", quoted)
	}
	return s, nil
}

func (d *jsonScan) integer() (int64, error) {
	d.space()
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	n, err := strconv.ParseInt(string(d.b[start:d.i]), 10, 64)
	if err != nil {
		d.i = start
		return 0, d.fail()
	}
	return n, nil
}

// skip reads over any value.
func (d *jsonScan) skip() error {
	switch c := d.peek(); {
	case c == '"':
		_, err := d.raw()
		return err
	case c == '{':
		return d.object(func([]byte) error { return d.skip() })
	case c == '[':
		d.i++
		if d.peek() == ']' {
			d.i++
			return nil
		}
		for {
			if err := d.skip(); err != nil {
				return err
			}
			switch d.peek() {
			case ',':
				d.i++
			case ']':
				d.i++
				return nil
			default:
				return d.fail()
			}
		}
	case c == 't' || c == 'f' || c == 'n':
		if d.literal("true") || d.literal("false") || d.null() {
			return nil
		}
		return d.fail()
	case c == '-' || (c >= '0' && c <= '9'):
		start := d.i
		for d.i < len(d.b) && strings.IndexByte("+-.eE0123456789", d.b[d.i]) >= 0 {
			d.i++
		}
		if _, err := strconv.ParseFloat(string(d.b[start:d.i]), 64); err != nil {
			d.i = start
			return d.fail()
		}
		return nil
	}
	return d.fail()
}

// topicRoute is the name server's TopicRouteData, what a producer needs
// of it.
type topicRoute struct {
	QueueDatas []struct {
		BrokerName     string `json:"brokerName"`
		WriteQueueNums int    `json:"writeQueueNums"`
		Perm           int    `json:"perm"`
	} `json:"queueDatas"`
	BrokerDatas []struct {
		BrokerName  string            `json:"brokerName"`
		BrokerAddrs map[string]string `json:"brokerAddrs"`
	} `json:"brokerDatas"`
}

// permWrite is PermName.PERM_WRITE: the queues take messages.
const permWrite = 0x2

// masterID is MixAll.MASTER_ID, the broker id of a master in brokerAddrs.
const masterID = "0"

// parseTopicRoute decodes the body of a GET_ROUTEINFO_BY_TOPIC reply. The
// name server writes it with fastjson, whose maps with number keys come
// out unquoted ({0:"10.0.0.1:10911"}), which is not JSON: those keys are
// quoted first.
func parseTopicRoute(body []byte) (*topicRoute, error) {
	var r topicRoute
	if err := json.Unmarshal(quoteNumberKeys(body), &r); err != nil {
		return nil, fmt.Errorf("topic route: %v", err)
	}
	return &r, nil
}

// quoteNumberKeys puts quotes around object keys that are bare integers.
func quoteNumberKeys(in []byte) []byte {
	out := make([]byte, 0, len(in)+16)
	inString := false
	for i := 0; i < len(in); i++ {
		c := in[i]
		if inString {
			out = append(out, c)
			switch c {
			case '\\':
				if i+1 < len(in) {
					i++
					out = append(out, in[i])
				}
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			out = append(out, c)
			continue
		case '{', ',':
			out = append(out, c)
			j := i + 1
			for j < len(in) && (in[j] == ' ' || in[j] == '\n' || in[j] == '\t' || in[j] == '\r') {
				j++
			}
			k := j
			if k < len(in) && in[k] == '-' {
				k++
			}
			digits := k
			for k < len(in) && in[k] >= '0' && in[k] <= '9' {
				k++
			}
			if k > digits {
				e := k
				for e < len(in) && (in[e] == ' ' || in[e] == '\n' || in[e] == '\t' || in[e] == '\r') {
					e++
				}
				if e < len(in) && in[e] == ':' {
					out = append(out, '"')
					out = append(out, in[j:k]...)
					out = append(out, '"')
					i = k - 1
				}
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// writeQueue is one queue a producer may send to.
type writeQueue struct {
	broker string // broker name
	addr   string // its master's address
	id     int
}

// writeQueues lists the route's writable queues of brokers with a master,
// in broker-name order (TopicPublishInfo's list), each broker's queues
// capped at limit when limit > 0 (the default topic's route).
func (r *topicRoute) writeQueues(limit int) []writeQueue {
	masters := map[string]string{}
	for _, b := range r.BrokerDatas {
		if a := b.BrokerAddrs[masterID]; a != "" {
			masters[b.BrokerName] = a
		}
	}
	qds := append(r.QueueDatas[:0:0], r.QueueDatas...)
	sort.SliceStable(qds, func(i, j int) bool { return qds[i].BrokerName < qds[j].BrokerName })
	var out []writeQueue
	for _, q := range qds {
		addr := masters[q.BrokerName]
		if q.Perm&permWrite == 0 || addr == "" {
			continue
		}
		n := q.WriteQueueNums
		if limit > 0 {
			n = min(n, limit)
		}
		for i := 0; i < n; i++ {
			out = append(out, writeQueue{broker: q.BrokerName, addr: addr, id: i})
		}
	}
	return out
}

// appendProperties appends a message's properties in the wire form:
// name \x01 value \x02 for each.
func appendProperties(dst []byte, props map[string]string) []byte {
	for k, v := range props {
		dst = append(dst, k...)
		dst = append(dst, 1)
		dst = append(dst, v...)
		dst = append(dst, 2)
	}
	return dst
}
