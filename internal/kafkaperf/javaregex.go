package kafkaperf

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// Java regular expressions (--payload-delimiter, --include) run on Go's
// RE2: the Java-only spellings RE2 has an equivalent for are rewritten,
// and a pattern either refuses gets java.util.regex's message (its first
// line, "... near index N"). What RE2 cannot do at all (lookaround,
// backreferences, possessive quantifiers, atomic groups) is refused with a
// message that says so.

// javaClasses are java.util.regex's named classes and their RE2 forms.
var javaClasses = map[string]string{
	`\p{javaLowerCase}`: `\p{Ll}`, `\p{javaUpperCase}`: `\p{Lu}`, `\p{javaWhitespace}`: `\s`,
	`\p{javaDigit}`: `\p{Nd}`, `\p{javaLetter}`: `\p{L}`, `\p{javaLetterOrDigit}`: `[\p{L}\p{Nd}]`,
	`\p{Lower}`: `[a-z]`, `\p{Upper}`: `[A-Z]`, `\p{ASCII}`: `[\x00-\x7F]`, `\p{Alpha}`: `[a-zA-Z]`,
	`\p{Digit}`: `[0-9]`, `\p{Alnum}`: `[a-zA-Z0-9]`, `\p{Punct}`: `[!-/:-@\[-` + "`" + `{-~]`,
	`\p{Space}`: `[ \t\n\x0B\f\r]`, `\p{XDigit}`: `[0-9a-fA-F]`, `\p{Blank}`: `[ \t]`, `\p{Cntrl}`: `[\x00-\x1F\x7F]`,
	`\h`: `[ \t\xA0\x{1680}\x{180e}\x{2000}-\x{200a}\x{202f}\x{205f}\x{3000}]`,
	`\Z`: `(?:\n?\z)`,
}

// javaOnlyRe finds what RE2 has no form for.
var javaOnlyRe = regexp.MustCompile(`\(\?<?[=!]|\(\?>|[*+?]\+|\\[1-9]|\\k<`)

// javaPattern compiles a Java pattern; prefix and suffix wrap the
// translation (for --include's whole-name match). A refusal is the
// PatternSyntaxException's first message line.
func javaPattern(pattern, prefix, suffix string) (*regexp.Regexp, string, error) {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '\\' || i+1 >= len(pattern) {
			b.WriteByte(c)
			continue
		}
		if pattern[i+1] == 'Q' { // \Q...\E: quoted
			end := strings.Index(pattern[i+2:], `\E`)
			lit := pattern[i+2:]
			if end >= 0 {
				lit = pattern[i+2 : i+2+end]
			}
			b.WriteString(regexp.QuoteMeta(lit))
			if end < 0 {
				break
			}
			i += 2 + end + 1
			continue
		}
		done := false
		for java, re2 := range javaClasses {
			if strings.HasPrefix(pattern[i:], java) {
				b.WriteString(re2)
				i += len(java) - 1
				done = true
				break
			}
		}
		if !done {
			b.WriteString(pattern[i : i+2])
			i++
		}
	}
	translated := b.String()
	if loc := javaOnlyRe.FindStringIndex(pattern); loc != nil {
		return nil, "", errors.New(fmt.Sprintf("%s near index %d (Java regex syntax this tool cannot run: lookaround, backreferences, possessive quantifiers and atomic groups)", "Unsupported construct", loc[0]))
	}
	re, err := regexp.Compile(prefix + translated + suffix)
	if err != nil {
		return nil, "", errors.New(javaPatternError(pattern, err))
	}
	return re, translated, nil
}

// javaPatternError is java.util.regex's first message line for the
// mistake RE2 found.
func javaPatternError(pattern string, err error) string {
	var serr *syntax.Error
	if !errors.As(err, &serr) {
		return err.Error()
	}
	n := len([]rune(pattern))
	switch serr.Code {
	case syntax.ErrMissingParen:
		return fmt.Sprintf("Unclosed group near index %d", n)
	case syntax.ErrUnexpectedParen:
		return fmt.Sprintf("Unmatched closing ')' near index %d", max(strings.Index(pattern, ")")-1, 0))
	case syntax.ErrMissingBracket, syntax.ErrInvalidCharRange:
		if strings.HasSuffix(pattern, "-") {
			return fmt.Sprintf("Illegal character range near index %d", n)
		}
		if serr.Code == syntax.ErrMissingBracket {
			return fmt.Sprintf("Unclosed character class near index %d", n-1)
		}
		return fmt.Sprintf("Illegal character range near index %d", strings.Index(pattern, serr.Expr)+len(serr.Expr)-1)
	case syntax.ErrMissingRepeatArgument:
		i := strings.IndexAny(pattern, "*+?{")
		return fmt.Sprintf("Dangling meta character '%c' near index %d", pattern[max(i, 0)], max(i, 0))
	case syntax.ErrInvalidEscape:
		return fmt.Sprintf("Illegal/unsupported escape sequence near index %d", strings.Index(pattern, serr.Expr)+1)
	case syntax.ErrTrailingBackslash:
		return fmt.Sprintf("Unexpected internal error near index %d", n)
	}
	return err.Error()
}
