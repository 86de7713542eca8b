package jvm

import (
	"strings"
	"unicode/utf8"
)

// Args are the arguments as a Java program's main(String[]) sees them: the
// JVM decodes them in the locale's charset (UTF-8 taken), so every byte
// that is not part of a valid UTF-8 sequence becomes one U+FFFD (unlike
// strings.ToValidUTF8, which folds a run of them into one).
func Args(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if utf8.ValidString(a) {
			out[i] = a
			continue
		}
		var b strings.Builder
		for _, r := range a { // an invalid byte yields RuneError, one byte long
			b.WriteRune(r)
		}
		out[i] = b.String()
	}
	return out
}
