// Package shapes compares the output of two programs by the shape of their
// lines: every number becomes a placeholder, everything else must match byte
// for byte. The compatibility tests use it to run a clone beside the original
// tool, whose numbers differ from run to run while its words must not.
package shapes

import (
	"fmt"
	"regexp"
	"strings"
)

// Num is what a number (or inf/nan) becomes in a masked line.
const Num = "<N>"

// Rule masks extra tokens before numbers are masked, e.g. node ids.
type Rule struct {
	Re          *regexp.Regexp
	Placeholder string
}

// HexID40 masks 40-hex-digit identifiers (Redis cluster node ids, SHA-1s).
var HexID40 = Rule{Re: regexp.MustCompile(`\b[0-9a-f]{40}\b`), Placeholder: "<ID>"}

// Masker masks numbers, and whatever its Rules match, in a line.
type Masker struct {
	Rules []Rule
}

// Mask applies the rules of m, then masks numbers (see Mask).
func (m Masker) Mask(line string) string {
	for _, r := range m.Rules {
		line = r.Re.ReplaceAllLiteralString(line, r.Placeholder)
	}
	return Mask(line)
}

// MaskLines masks every line.
func (m Masker) MaskLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = m.Mask(l)
	}
	return out
}

// Mask replaces every number in line with Num. A number is an optional sign,
// digits, an optional fraction and an optional exponent (12, -3, 0.5, 1.5e-05,
// 1E+3), and also the non-finite spellings of C and Java (inf, -nan, NaN,
// Infinity). A number is a whole word: the digits of "p50", "LRANGE_100",
// "20ms" or a hex id "58ef61…" stay as they are, as does the "inf" of
// "info". A sign belongs to the number unless it follows a word character, so
// "-1" is one number but "5461-10922" becomes "<N>-<N>". Dotted numbers such
// as an IPv4 address or a version are read as decimals joined by dots
// ("127.0.0.1" and "7.0.15" both become "<N>.<N>"), but a dot after a word
// that is not a number keeps what follows ("v1.2", ".5").
func Mask(line string) string {
	var b strings.Builder
	i := 0
	afterNum := false // line[:i] ends with a masked number
	for i < len(line) {
		if n := numberAt(line, i, afterNum); n > 0 {
			b.WriteString(Num)
			i += n
			afterNum = true
			continue
		}
		// Skip a whole word, so that no number starts inside it.
		j := i + 1
		if isWord(line[i]) {
			for j < len(line) && isWord(line[j]) {
				j++
			}
		}
		b.WriteString(line[i:j])
		afterNum = afterNum && line[i] == '.' // "<N>." may go on with a number
		i = j
	}
	return b.String()
}

// nonFinite are the spellings of infinity and NaN in C's printf and Java
// (the sign is read before); a longer one comes before its prefix.
var nonFinite = []string{"nan", "NaN", "Infinity", "inf", "Inf"}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isWord(c byte) bool   { return isDigit(c) || isLetter(c) || c == '_' }

// numberAt returns the length of the number starting at s[i], or 0. Mask
// calls it only at the start of a word or at a non-word byte; afterNum says
// whether a masked number ends right before s[i].
func numberAt(s string, i int, afterNum bool) int {
	if i > 0 && s[i-1] == '.' && !afterNum {
		return 0
	}
	j := i
	signed := false
	if (s[j] == '-' || s[j] == '+') && (i == 0 || !isWord(s[i-1])) {
		j++
		signed = true
	}
	if j == len(s) {
		return 0
	}
	if !isDigit(s[j]) {
		if !signed && !isLetter(s[j]) {
			return 0
		}
		for _, w := range nonFinite {
			if strings.HasPrefix(s[j:], w) && (j+len(w) == len(s) || !isWord(s[j+len(w)])) {
				return j + len(w) - i
			}
		}
		return 0
	}
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	intEnd := j
	if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j+1 < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '-' || s[k] == '+') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	if j < len(s) && isWord(s[j]) {
		// "20ms", "58ef…" are words, not numbers; in "3.4x" only the 3 is.
		if intEnd < j && !isWord(s[intEnd]) {
			return intEnd - i
		}
		return 0
	}
	return j - i
}

// Lines splits text at '\n'. A final line without '\n' is kept; the empty
// string after a final '\n' is not.
func Lines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Block describes lines whose number varies with the data (a histogram, a
// list of percentiles): after a line equal to Header, every following line
// up to (not including) the first one that does not match Line belongs to
// the block.
type Block struct {
	Header string
	Line   *regexp.Regexp
	// Marker replaces the block's lines in the output of Collapse.
	Marker string
}

// Collapse replaces the lines of every block in lines by the block's Marker
// (one line, even for an empty block, so that a missing header still shows
// as a difference). It returns the block lines that did not match Line up to
// the end of the block, which is the first empty line, as errors.
func Collapse(lines []string, blocks ...Block) (out []string, errs []string) {
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		for _, bl := range blocks {
			if lines[i] != bl.Header {
				continue
			}
			j := i + 1
			for ; j < len(lines) && lines[j] != ""; j++ {
				if !bl.Line.MatchString(lines[j]) {
					errs = append(errs, fmt.Sprintf("line %d in block %q: %q does not match %s", j+1, bl.Header, lines[j], bl.Line))
				}
			}
			if j == i+1 {
				errs = append(errs, fmt.Sprintf("line %d: block %q is empty", i+1, bl.Header))
			}
			out = append(out, bl.Marker)
			i = j - 1
			break
		}
	}
	return out, errs
}

// Diff returns "" when want and got are equal, otherwise a readable report
// of the first differences (a line-by-line comparison with a little context;
// lines are quoted so that spaces and '\r' show).
func Diff(want, got []string) string {
	if equal(want, got) {
		return ""
	}
	// Longest common subsequence, fine for the few hundred lines compared here.
	n, m := len(want), len(got)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	b.WriteString("--- want\n+++ got\n")
	shown := 0
	i, j := 0, 0
	for i < n || j < m {
		if shown >= 40 {
			b.WriteString("...\n")
			break
		}
		switch {
		case i < n && j < m && want[i] == got[j]:
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			fmt.Fprintf(&b, "+%4d %q\n", j+1, got[j])
			j++
			shown++
		default:
			fmt.Fprintf(&b, "-%4d %q\n", i+1, want[i])
			i++
			shown++
		}
	}
	return b.String()
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
