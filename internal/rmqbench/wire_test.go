package rmqbench

import (
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestRequestFrames encodes a request in both serializations and reads it
// back: the length words, the header fields in order and the body.
func TestRequestFrames(t *testing.T) {
	fields := []extField{{"a", "benchmark_producer"}, {"b", "topic-01"}, {"i", "UNIQ_KEY\x01ABC\x02"}, {"q", `say "hi"\`}}
	for _, tc := range []struct {
		name      string
		serialize byte
		header    string // the JSON header, for type 0
	}{
		{"json", serializeJSON, `{"code":310,"language":"GO","version":317,"opaque":42,"flag":0,"remark":"",` +
			`"extFields":{"a":"benchmark_producer","b":"topic-01","i":"UNIQ_KEY\u0001ABC\u0002","q":"say \"hi\"\\"}}`},
		{"binary", serializeBinary, ""},
		{"json, no fields", serializeJSON, `{"code":310,"language":"GO","version":317,"opaque":42,"flag":0,"remark":"","extFields":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := fields
			if strings.HasSuffix(tc.name, "no fields") {
				fs = nil
			}
			body := []byte("body bytes")
			frame := appendRequest([]byte("prefix"), tc.serialize, codeSendMessageV2, 42, fs, body)
			if string(frame[:6]) != "prefix" {
				t.Fatalf("what was before the frame changed: %q", frame[:6])
			}
			frame = frame[6:]
			if n := binary.BigEndian.Uint32(frame); int(n) != len(frame)-4 {
				t.Fatalf("length word %d, frame has %d after it", n, len(frame)-4)
			}
			word := binary.BigEndian.Uint32(frame[4:])
			if byte(word>>24) != tc.serialize {
				t.Errorf("serialization byte %d, want %d", word>>24, tc.serialize)
			}
			headerLen := int(word & 0xffffff)
			if tc.header != "" {
				if got := string(frame[8 : 8+headerLen]); got != tc.header {
					t.Errorf("header\n%s\nwant\n%s", got, tc.header)
				}
				if !json.Valid(frame[8 : 8+headerLen]) {
					t.Errorf("header is not JSON")
				}
			}
			r, err := decodeFrame(frame[4:])
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for _, f := range fs {
				want[f.key] = f.value
			}
			if r.code != codeSendMessageV2 || r.opaque != 42 || r.flag != 0 || r.serialize != tc.serialize ||
				!reflect.DeepEqual(r.ext, want) || string(r.body) != string(body) {
				t.Errorf("decoded %+v, body %q", r, r.body)
			}
		})
	}
}

// TestDecodeReplies decodes replies as brokers write them: JSON (what a
// 5.3 broker answers whatever the request's serialization), binary with
// a remark, and broken frames, which are errors and never panics.
func TestDecodeReplies(t *testing.T) {
	jsonFrame := func(header string, body string) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(header)))
		return append(append(b, header...), body...)
	}
	binaryFrame := func(code int16, opaque, flag int32, remark string, ext [][2]string) []byte {
		h := binary.BigEndian.AppendUint16(nil, uint16(code))
		h = append(h, 0)
		h = binary.BigEndian.AppendUint16(h, 453)
		h = binary.BigEndian.AppendUint32(h, uint32(opaque))
		h = binary.BigEndian.AppendUint32(h, uint32(flag))
		h = binary.BigEndian.AppendUint32(h, uint32(len(remark)))
		h = append(h, remark...)
		var e []byte
		for _, kv := range ext {
			e = binary.BigEndian.AppendUint16(e, uint16(len(kv[0])))
			e = append(e, kv[0]...)
			e = binary.BigEndian.AppendUint32(e, uint32(len(kv[1])))
			e = append(e, kv[1]...)
		}
		h = binary.BigEndian.AppendUint32(h, uint32(len(e)))
		h = append(h, e...)
		return append(binary.BigEndian.AppendUint32(nil, 1<<24|uint32(len(h))), h...)
	}
	for _, tc := range []struct {
		name    string
		frame   []byte
		want    *remotingReply
		wantErr bool
	}{
		{"json send reply", jsonFrame(`{"code":0,"extFields":{"queueId":"3","queueOffset":"27500","msgId":"0AD5000200002A9F000000001016FA14",`+
			`"MSG_REGION":"DefaultRegion","TRACE_ON":"true"},"flag":1,"language":"JAVA","opaque":9,"serializeTypeCurrentRPC":"JSON","version":475}`, ""),
			&remotingReply{code: 0, opaque: 9, flag: 1, ext: map[string]string{"queueId": "3", "queueOffset": "27500",
				"msgId": "0AD5000200002A9F000000001016FA14", "MSG_REGION": "DefaultRegion", "TRACE_ON": "true"}}, false},
		{"json error reply with body", jsonFrame(`{"code":2,"flag":1,"opaque":10,"remark":"[TIMEOUT_CLEAN_QUEUE]broker busy"}`, "xyz"),
			&remotingReply{code: 2, opaque: 10, flag: 1, remark: "[TIMEOUT_CLEAN_QUEUE]broker busy", ext: map[string]string{}, body: []byte("xyz")}, false},
		{"binary reply", binaryFrame(17, 11, 1, "topic not exist", [][2]string{{"queueId", "1"}, {"k", ""}}),
			&remotingReply{code: 17, opaque: 11, flag: 1, remark: "topic not exist", serialize: 1, ext: map[string]string{"queueId": "1", "k": ""}}, false},
		{"binary, negative code", binaryFrame(-1, 1, 1, "", nil),
			&remotingReply{code: -1, opaque: 1, flag: 1, serialize: 1, ext: map[string]string{}}, false},
		{"json with escapes, nulls and values skipped", jsonFrame(`{ "language" : "JAVA", "x":[1,-2.5e3,{"y":[true,false,null]},[]],"remark":"a\"b\\c\/d\n\u00e9",`+
			`"extFields":{"k":"v\t","n":null,"e":""},"code":-3,"opaque":2147483647,"flag":1,"z":{}}`, ""),
			&remotingReply{code: -3, opaque: 2147483647, flag: 1, remark: "a\"b\\c/d\n\u00e9", ext: map[string]string{"k": "v\t", "n": "", "e": ""}}, false},
		{"json, null remark and fields", jsonFrame(`{"code":1,"remark":null,"extFields":null}`, ""),
			&remotingReply{code: 1, ext: map[string]string{}}, false},
		{"json, something after the object", jsonFrame(`{"code":1} x`, ""), nil, true},
		{"json, a field value not a string", jsonFrame(`{"extFields":{"k":1}}`, ""), nil, true},
		{"json, code not a number", jsonFrame(`{"code":"0"}`, ""), nil, true},
		{"json, cut string", jsonFrame(`{"remark":"abc`, ""), nil, true},
		{"json, bad escape", jsonFrame(`{"remark":"\q"}`, ""), nil, true},
		{"too short", []byte{0, 0}, nil, true},
		{"header longer than the frame", binary.BigEndian.AppendUint32(nil, 100), nil, true},
		{"unknown serialization", binary.BigEndian.AppendUint32(nil, 7<<24), nil, true},
		{"json not json", jsonFrame(`{"code":`, ""), nil, true},
		{"binary cut short", binaryFrame(0, 1, 1, "remark", [][2]string{{"a", "b"}})[:20], nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frame := tc.frame
			if tc.name == "binary cut short" { // fix the header length to the cut
				binary.BigEndian.PutUint32(frame, 1<<24|uint32(len(frame)-4))
			}
			r, err := decodeFrame(frame)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("decoded %+v, want an error", r)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(r.body) == 0 {
				r.body = nil
			}
			if !reflect.DeepEqual(r, tc.want) {
				t.Errorf("decoded %+v\nwant    %+v", r, tc.want)
			}
		})
	}
}

// TestTopicRoute parses the name server's route body, with fastjson's
// unquoted number keys, into the writable queues of brokers that have a
// master, in broker-name order.
func TestTopicRoute(t *testing.T) {
	for _, tc := range []struct {
		name  string
		body  string
		limit int
		want  []writeQueue
	}{
		{"one broker, int keys", `{"brokerDatas":[{"brokerAddrs":{0:"10.213.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],` +
			`"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":3,"topicSysFlag":0,"writeQueueNums":3}]}`, 0,
			[]writeQueue{{"broker-a", "10.213.0.2:10911", 0}, {"broker-a", "10.213.0.2:10911", 1}, {"broker-a", "10.213.0.2:10911", 2}}},
		{"two brokers, a slave, sorted, a read-only one", `{"brokerDatas":[{"brokerAddrs":{0:"b:1",1:"b:2"},"brokerName":"b"},` +
			`{"brokerAddrs":{ 0 : "a:1"},"brokerName":"a"},{"brokerAddrs":{0:"c:1"},"brokerName":"c"},{"brokerAddrs":{1:"d:2"},"brokerName":"d"}],` +
			`"queueDatas":[{"brokerName":"b","perm":6,"writeQueueNums":2},{"brokerName":"a","perm":2,"writeQueueNums":1},` +
			`{"brokerName":"c","perm":4,"writeQueueNums":4},{"brokerName":"d","perm":6,"writeQueueNums":4}]}`, 0,
			[]writeQueue{{"a", "a:1", 0}, {"b", "b:1", 0}, {"b", "b:1", 1}}},
		{"the default topic's route, capped", `{"brokerDatas":[{"brokerAddrs":{0:"x:1"},"brokerName":"x"}],"queueDatas":[{"brokerName":"x","perm":7,"writeQueueNums":8}]}`, 4,
			[]writeQueue{{"x", "x:1", 0}, {"x", "x:1", 1}, {"x", "x:1", 2}, {"x", "x:1", 3}}},
		{"a number key inside a string is left alone", `{"brokerDatas":[{"brokerAddrs":{0:"h,1:2"},"brokerName":"n{0:"}],"queueDatas":[{"brokerName":"n{0:","perm":6,"writeQueueNums":1}]}`, 0,
			[]writeQueue{{"n{0:", "h,1:2", 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parseTopicRoute([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := r.writeQueues(tc.limit); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("queues %v\nwant   %v", got, tc.want)
			}
		})
	}
	if _, err := parseTopicRoute([]byte(`{"brokerDatas":[`)); err == nil {
		t.Errorf("a cut route parsed")
	}
}

func TestQuoteNumberKeys(t *testing.T) {
	for in, want := range map[string]string{
		`{0:"a",-1:"b"}`:         `{"0":"a","-1":"b"}`,
		`{"k":[1,2],"m":{12:3}}`: `{"k":[1,2],"m":{"12":3}}`,
		`{"s":"{0:\"x\"}"}`:      `{"s":"{0:\"x\"}"}`,
		`[1, 2, {3 :4}]`:         `[1, 2, {"3" :4}]`,
	} {
		if got := string(quoteNumberKeys([]byte(in))); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}

// TestDecodeFrameGarbage: whatever the bytes, decodeFrame returns (an
// error, mostly) and never panics; a good frame cut short is an error
// unless the cut is in its body.
func TestDecodeFrameGarbage(t *testing.T) {
	good := appendRequest(nil, serializeBinary, 310, 1, []extField{{"a", "b"}, {"i", "UNIQ_KEY\x01X\x02"}}, []byte("body"))[4:]
	goodJSON := appendRequest(nil, serializeJSON, 310, 1, []extField{{"a", "b\""}}, nil)[4:]
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		var b []byte
		switch i % 3 {
		case 0:
			b = make([]byte, rng.IntN(64))
			for j := range b {
				b[j] = byte(rng.IntN(256))
			}
		case 1:
			b = append([]byte(nil), good[:rng.IntN(len(good)+1)]...)
			// Only a cut into the body leaves a frame (with less body).
			if _, err := decodeFrame(b); (err != nil) != (len(b) < len(good)-len("body")) {
				t.Fatalf("the good frame cut to %d of %d bytes: error %v", len(b), len(good), err)
			}
			continue
		default:
			b = append([]byte(nil), goodJSON...)
			b[4+rng.IntN(len(b)-4)] = byte(rng.IntN(256))
		}
		_, _ = decodeFrame(b)
	}
}
