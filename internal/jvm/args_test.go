package jvm

import (
	"reflect"
	"testing"
)

func TestArgs(t *testing.T) {
	got := Args([]string{"plain", "a\xffb", "\xff\xfe", "é", ""})
	want := []string{"plain", "a\uFFFDb", "\uFFFD\uFFFD", "é", ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Args = %q, want %q", got, want)
	}
}
