package javaopts

import (
	"regexp"
	"unicode"
)

// This file emulates java.text.BreakIterator.getLineInstance() as the JDK
// ships it (the legacy rule-based iterator built from the JDK's
// "LineBreakRules", not ICU/UAX #14). Both argparse4j (TextHelper.wrap) and
// jopt-simple (Columns) wrap text on its boundaries, so its quirks show in
// help output: a line may break after "--" or after a hyphen ("via --" /
// "producer-props"), after a period between letters ("producer." /
// "config"), and before an opening parenthesis ("server" / "(s)").
//
// The JDK compiles its rules into a state machine that, from a boundary,
// takes the longest run of text that matches one of the rules (at least one
// character). We do the same with a leftmost-longest regular expression over
// a string in which each rune is replaced by a letter naming its class:
//
//	a  other characters ("<char>"): letters, symbols, most punctuation
//	d  digits (Nd, No), which are also <char>
//	e  enclosing/non-spacing marks (Mn, Me), also <char>
//	-  dashes (Pd, U+00AD) other than the non-breaking hyphen
//	s  spaces (Zs) and control characters other than the breaking ones and CR
//	g  glue: no-break spaces, U+2011, U+FEFF, ...
//	k  "kanji": CJK ideographs, Hangul syllables, full-size kana
//	b  always-break characters: ETX, TAB, LF, FF, LS, PS
//	r  CR
//	p  pre-word only: currency symbols (but the cent sign), Ps, Pi
//	q  the double quote, which is both pre-word and post-word
//	o  post-word only: ! % : ; ? Pe Pf, the cent sign, small kana, ...
//	m  period and comma: post-word and also number punctuation
//	$  dollar and apostrophe: pre-word and the rules' "hack3" joiners
//	(  "(": pre-word and "hack1"
//	)  ")": post-word and "hack2"
//	x  Devanagari danda, which no rule mentions
//
// Format characters (Cf) are ignored, as in the JDK: they are skipped and do
// not change the state. The classification and the rules were checked
// against JDK 17's BreakIterator on random ASCII text.

const (
	lbWord = `[pq$(]*(?:[ade]*|k|[pq$(\-]*d+(?:md+)*)(?:-+|[oqm)]*)`
	// lbQuirk is a first word that the JDK's state machine accepts although
	// the rules do not: an apostrophe or dollar among the leading pre-word
	// characters, then two or more dashes, then post-word characters
	// ("'--)." is one segment). Found by comparison with JDK 17; rarer
	// combinations of "'", "$" and dashes may still differ.
	lbQuirk  = `[pq$(]*\$[pq$(]*--+[oqm)]*`
	lbRule   = `^(?:(?:` + lbQuirk + `|` + lbWord + `)(?:(?:s*g+s?|\$)` + lbWord + `)*s*e*(?:\(\)[oqm)]*)?e*r?b?|rb)`
	lbIgnore = '.'
)

var lbRegexp = func() *regexp.Regexp {
	re := regexp.MustCompile(lbRule)
	re.Longest()
	return re
}()

var lbPostWord = []rune("\"!%.,:;?\u00a2\u00b0\u066a\u2030\u2031\u2032\u2033\u2034\u2103\u2105\u2109" +
	"\u3001\u3002\u3005\u3041\u3043\u3045\u3047\u3049\u3063\u3083\u3085\u3087\u308e" +
	"\u3099\u309a\u309b\u309c\u309d\u309e\u30a1\u30a3\u30a5\u30a7\u30a9\u30c3\u30e3\u30e5\u30e7\u30ee" +
	"\u30f5\u30f6\u30fc\u30fd\u30fe\uff01\uff05\uff0c\uff0e\uff1a\uff1b\uff1f")

func lbIsPostWord(r rune) bool {
	if unicode.In(r, unicode.Pe, unicode.Pf) {
		return true
	}
	for _, p := range lbPostWord {
		if p == r {
			return true
		}
	}
	return false
}

func lbIsKanji(r rune) bool {
	switch {
	case r >= 0x4e00 && r <= 0x9fa5, r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfa2d,
		r >= 0xfa30 && r <= 0xfa6a, r >= 0x3041 && r <= 0x3094, r >= 0x30a1 && r <= 0x30fa:
		return !lbIsPostWord(r)
	}
	return false
}

// lbClass returns the class letter of r (see the table above).
func lbClass(r rune) byte {
	switch r {
	case 0x03, '\t', '\n', '\f', 0x2028, 0x2029:
		return 'b'
	case '\r':
		return 'r'
	case 0xa0, 0x0f0c, 0x2007, 0x2011, 0x202f, 0xfeff:
		return 'g'
	case '$', '\'':
		return '$'
	case '(':
		return '('
	case ')':
		return ')'
	case '"':
		return 'q'
	case '.', ',':
		return 'm'
	case 0x0964, 0x0965:
		return 'x'
	case 0xad:
		return '-'
	case 0xa2:
		return 'o'
	}
	switch {
	case unicode.Is(unicode.Cf, r):
		return lbIgnore
	case unicode.Is(unicode.Zs, r), unicode.Is(unicode.Cc, r):
		return 's'
	case unicode.Is(unicode.Pd, r):
		return '-'
	case unicode.In(r, unicode.Sc, unicode.Ps, unicode.Pi):
		return 'p'
	case lbIsPostWord(r):
		return 'o'
	case lbIsKanji(r):
		return 'k'
	case unicode.In(r, unicode.Nd, unicode.No):
		return 'd'
	case unicode.In(r, unicode.Mn, unicode.Me):
		return 'e'
	}
	return 'a'
}

// lineSegments splits s at the line-break opportunities that the JDK's
// BreakIterator.getLineInstance() reports. Concatenating the segments gives
// s back; each segment keeps its trailing spaces, and ignored characters
// stay with the segment before them.
func lineSegments(s string) []string {
	if s == "" {
		return nil
	}
	// cls holds one class letter per rune that is not ignored; starts[i] is
	// the byte offset in s of the rune behind letter i.
	var cls []byte
	var starts []int
	for i, r := range s {
		if c := lbClass(r); c != lbIgnore {
			cls = append(cls, c)
			starts = append(starts, i)
		}
	}
	if len(cls) == 0 {
		return []string{s}
	}
	var segs []string
	prev := 0
	for i := 0; i < len(cls); {
		n := 1
		if loc := lbRegexp.FindIndex(cls[i:]); loc != nil && loc[1] > 1 {
			n = loc[1]
		}
		i += n
		end := len(s)
		if i < len(cls) {
			end = starts[i]
		}
		segs = append(segs, s[prev:end])
		prev = end
	}
	return segs
}
