package kafkaperf

import (
	"strings"
	"testing"
)

func TestJavaPattern(t *testing.T) {
	for _, tc := range []struct {
		pattern, err  string
		match, differ string // a name the whole pattern matches, and one it does not
	}{
		{pattern: "(", err: "Unclosed group near index 1"},
		{pattern: "[a-", err: "Illegal character range near index 3"},
		{pattern: "[", err: "Unclosed character class near index 0"},
		{pattern: "*", err: "Dangling meta character '*' near index 0"},
		{pattern: "(?=z)", err: "Unsupported construct near index 0"},
		{pattern: `(a)\1`, err: "Unsupported construct near index 3"},
		{pattern: `\p{javaLowerCase}+`, match: "topic", differ: "Topic"},
		{pattern: `\Qa.b\E`, match: "a.b", differ: "axb"},
		{pattern: `\Qa.b`, match: "a.b", differ: "axb"},
		{pattern: `t\p{Digit}\Z`, match: "t1", differ: "t"},
		{pattern: `[[:alpha:]]+`, match: "abc", differ: "a1"},
	} {
		re, _, err := javaPattern(tc.pattern, "^(?:", ")$")
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.pattern, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.pattern, err)
			continue
		}
		if !re.MatchString(tc.match) || re.MatchString(tc.differ) {
			t.Errorf("%q: matches %q %v, %q %v", tc.pattern, tc.match, re.MatchString(tc.match), tc.differ, re.MatchString(tc.differ))
		}
	}
}
