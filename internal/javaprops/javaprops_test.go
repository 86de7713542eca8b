package javaprops

import (
	"reflect"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	text := "# comment\n" +
		"! also a comment\n" +
		"bootstrap.servers=127.0.0.1:9092\n" +
		"  acks : all\n" +
		"linger.ms 5\n" +
		"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n" +
		"    username=\"u\" password=\"p=q\";\n" +
		"path=C:\\\\tmp\\tx\n" +
		"unicode=\\u0041B\n" +
		"empty=\n" +
		"key\\=with\\:seps=v\n" +
		"acks=1\n"
	p, err := Load(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"bootstrap.servers": "127.0.0.1:9092",
		"acks":              "1",
		"linger.ms":         "5",
		"sasl.jaas.config":  `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p=q";`,
		"path":              "C:\\tmp\tx",
		"unicode":           "AB",
		"empty":             "",
		"key=with:seps":     "v",
	}
	for k, v := range want {
		if got, ok := p.Get(k); !ok || got != v {
			t.Errorf("%q = %q (set %v), want %q", k, got, ok, v)
		}
	}
	wantKeys := []string{"bootstrap.servers", "acks", "linger.ms", "sasl.jaas.config", "path", "unicode", "empty", "key=with:seps"}
	if !reflect.DeepEqual(p.Keys(), wantKeys) {
		t.Errorf("keys = %q", p.Keys())
	}
}
