package javaopts

import (
	"sort"
	"strings"
	"unicode/utf16"
)

// DefaultFormatWidth is argparse4j's width when the terminal's is unknown.
const DefaultFormatWidth = 75

// FormatWidth is argparse4j's ArgumentParsers.getFormatWidth for a
// terminal width given as text: the value of $COLUMNS when set, otherwise
// the columns that `stty -a </dev/tty` reports, or "" when neither is known.
// The width is that number minus 5, or 75 when the text is not a Java int
// or the result is not positive.
func FormatWidth(columns string) int {
	n, err := ParseJavaInt(columns)
	if err != nil {
		return DefaultFormatWidth
	}
	if w := int(n) - 5; w > 0 {
		return w
	}
	return DefaultFormatWidth
}

// jlen is String.length(): the text's width for argparse4j's
// ASCIITextWidthCounter and for jopt-simple, in UTF-16 code units.
func jlen(s string) int {
	n := 0
	for _, r := range s {
		n += len(utf16.Encode([]rune{r}))
	}
	return n
}

// metavar is formatMetavar: the value part of the usage and help syntax.
func (a *argSpec) metavar() string {
	if !a.consumesArgument() {
		return ""
	}
	mv := a.Metavar
	if mv == "" {
		mv = strings.ToUpper(a.Dest)
	}
	switch {
	case a.minArgs == 0 && a.maxArgs == 1:
		return "[" + mv + "]"
	case a.minArgs == 0 && a.maxArgs == maxInt:
		return "[" + mv + " [" + mv + " ...]]"
	case a.minArgs == 1 && a.maxArgs == maxInt:
		return mv + " [" + mv + " ...]"
	case a.minArgs == -1:
		return mv
	case a.minArgs > 0 && a.minArgs == a.maxArgs:
		return strings.TrimSuffix(strings.Repeat(mv+" ", a.minArgs), " ")
	}
	return ""
}

// shortSyntaxNoBracket is "--flag METAVAR".
func (a *argSpec) shortSyntaxNoBracket() string {
	s := a.Flags[0]
	if mv := a.metavar(); mv != "" {
		s += " " + mv
	}
	return s
}

// shortSyntax wraps shortSyntaxNoBracket in brackets unless required.
func (a *argSpec) shortSyntax() string {
	if a.Required {
		return a.shortSyntaxNoBracket()
	}
	return "[" + a.shortSyntaxNoBracket() + "]"
}

// helpTitle is "-h, --help" or "--topic TOPIC".
func (a *argSpec) helpTitle() string {
	mv := a.metavar()
	parts := make([]string, len(a.Flags))
	for i, f := range a.Flags {
		parts[i] = f
		if mv != "" {
			parts[i] += " " + mv
		}
	}
	return strings.Join(parts, ", ")
}

func (c *compiled) usage(width int) string {
	var b strings.Builder
	prog := "usage: " + c.p.Prog
	b.WriteString(prog)
	offset := jlen(prog)
	firstIndent, subsequentIndent := "", strings.Repeat(" ", offset)
	if offset > 30 {
		b.WriteString("\n")
		offset = 6
		firstIndent, subsequentIndent = "      ", "      "
	}
	var opts []string
	for _, a := range c.args {
		if a.group == nil || !a.group.Mutex {
			opts = append(opts, a.shortSyntax())
		}
	}
	for _, g := range c.groups {
		if !g.Mutex {
			continue
		}
		n := len(g.args)
		switch {
		case n > 1:
			open, closing := "[", "]"
			if g.Required {
				open, closing = "(", ")"
			}
			opts = append(opts, open+g.args[0].shortSyntaxNoBracket())
			for _, a := range g.args[1 : n-1] {
				opts = append(opts, "|", a.shortSyntaxNoBracket())
			}
			opts = append(opts, "|", g.args[n-1].shortSyntaxNoBracket()+closing)
		case n == 1 && g.Required:
			opts = append(opts, g.args[0].shortSyntaxNoBracket())
		case n == 1:
			opts = append(opts, g.args[0].shortSyntax())
		}
	}
	cur := offset + len(firstIndent)
	b.WriteString(firstIndent)
	for i, syntax := range opts {
		if i > 0 && cur+jlen(syntax)+1 > width {
			b.WriteString("\n" + subsequentIndent + " " + syntax)
			cur = len(subsequentIndent) + 1 + jlen(syntax)
		} else {
			b.WriteString(" " + syntax)
			cur += 1 + jlen(syntax)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// separateHelp reports whether a group gets its own help section.
func (g *groupSpec) separateHelp() bool {
	return !g.Mutex || g.Title != "" || g.Description != ""
}

func (c *compiled) argHelp(b *strings.Builder, a *argSpec, width int) {
	help := a.Help
	if c.p.DefaultHelp && a.Default != nil {
		if help != "" {
			help += " "
		}
		help += "(default: " + javaToString(a.Default) + ")"
	}
	title := a.helpTitle()
	b.WriteString("  " + title)
	if help == "" {
		b.WriteString("\n")
		return
	}
	const indent = 25
	pad := indent
	if tw := jlen(title); tw <= 21 {
		pad -= tw + 2
	} else {
		b.WriteString("\n")
	}
	b.WriteString(strings.Repeat(" ", pad))
	b.WriteString(wrapText(help, width, indent, "", strings.Repeat(" ", indent)))
	b.WriteString("\n")
}

func (c *compiled) help(width int) string {
	var b strings.Builder
	b.WriteString(c.usage(width))
	if c.p.Description != "" {
		b.WriteString("\n" + wrapText(c.p.Description, width, 0, "", "") + "\n")
	}
	var plain []*argSpec
	for _, a := range c.args {
		if a.group == nil || !a.group.separateHelp() {
			plain = append(plain, a)
		}
	}
	if len(plain) > 0 {
		b.WriteString("\noptional arguments:\n")
		for _, a := range plain {
			c.argHelp(&b, a, width)
		}
	}
	for _, g := range c.groups {
		if !g.separateHelp() {
			continue
		}
		b.WriteString("\n")
		if g.Title != "" {
			b.WriteString(g.Title + ":\n")
		}
		if g.Description != "" {
			b.WriteString("  " + wrapText(g.Description, width, 2, "", "  ") + "\n\n")
		}
		for _, a := range g.args {
			c.argHelp(&b, a, width)
		}
	}
	if c.p.Epilog != "" {
		b.WriteString("\n" + wrapText(c.p.Epilog, width, 0, "", "") + "\n")
	}
	return b.String()
}

// errorText is handleError's output: the usage, the wrapped error line and,
// for an unrecognized flag, the closest flags.
func (c *compiled) errorText(e *parseError, width int) string {
	var b strings.Builder
	b.WriteString(c.usage(width))
	b.WriteString(wrapText(c.p.Prog+": error: "+e.msg+"\n", width, 0, "", ""))
	if t := e.unrecognized; t != "" && isFlagPrefixed(t) {
		if body := strings.TrimLeft(t, "-"); jlen(body) >= 2 {
			b.WriteString(c.flagCandidates(body))
		}
	}
	return b.String()
}

// isFlagPrefixed is PrefixPattern.match: leading dashes and something after.
func isFlagPrefixed(s string) bool {
	return strings.HasPrefix(s, "-") && strings.Trim(s, "-") != ""
}

// flagCandidates is printFlagCandidates: the flags closest to body by
// git's weighted Damerau-Levenshtein distance (swap 0, substitution 2,
// insertion 1, deletion 4), a flag that starts with body counting as 0;
// printed only if the best distance is below 7, and then all flags at
// that distance, sorted.
func (c *compiled) flagCandidates(body string) string {
	type candidate struct {
		sim     int
		subject string
	}
	var cands []candidate
	for _, a := range c.args {
		for _, f := range a.Flags {
			fb := strings.TrimLeft(f, "-")
			if jlen(fb) <= 1 {
				continue
			}
			if strings.HasPrefix(fb, body) {
				cands = append(cands, candidate{0, f})
			} else {
				cands = append(cands, candidate{levenshtein(body, fb, 0, 2, 1, 4), f})
			}
		}
	}
	if len(cands) == 0 {
		return ""
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].sim != cands[j].sim {
			return cands[i].sim < cands[j].sim
		}
		return javaCompare(cands[i].subject, cands[j].subject) < 0
	})
	threshold := cands[0].sim
	if threshold >= 7 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nDid you mean:\n")
	for _, cd := range cands {
		if cd.sim > threshold {
			break
		}
		b.WriteString("\t" + cd.subject + "\n")
	}
	return b.String()
}

// utf16Units is the string as Java's UTF-16 chars.
func utf16Units(s string) []uint16 { return utf16.Encode([]rune(s)) }

// javaCompare is String.compareTo: UTF-16 code unit order.
func javaCompare(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return int(ua[i]) - int(ub[i])
		}
	}
	return len(ua) - len(ub)
}

// levenshtein is the weighted Damerau-Levenshtein distance that
// argparse4j borrowed from git's help.c, over UTF-16 code units.
func levenshtein(as, bs string, swap, sub, add, del int) int {
	a, b := utf16.Encode([]rune(as)), utf16.Encode([]rune(bs))
	rows := [3][]int{make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)}
	for j := 0; j <= len(b); j++ {
		rows[1][j] = j
	}
	for i := 1; i <= len(a); i++ {
		rows[0][0] = i
		for j := 1; j <= len(b); j++ {
			cost := 0
			if a[i-1] != b[j-1] {
				cost = sub
			}
			rows[0][j] = rows[1][j-1] + cost
			if i >= 2 && j >= 2 && a[i-1] != b[j-1] && a[i-2] == b[j-1] && a[i-1] == b[j-2] {
				rows[0][j] = min(rows[0][j], rows[2][j-2]+swap)
			}
			rows[0][j] = min(rows[0][j], rows[1][j]+del, rows[0][j-1]+add)
		}
		rows[0], rows[1], rows[2] = rows[2], rows[0], rows[1]
	}
	return rows[1][len(b)]
}

// wrapText is argparse4j's TextHelper.wrap: fill lines up to width at the
// JDK's line-break opportunities, starting initialOffset columns in, and
// fully justify every line that wraps (adjustSpace).
func wrapText(s string, width, initialOffset int, initialIndent, subsequentIndent string) string {
	var res, line strings.Builder
	res.WriteString(initialIndent)
	cur := initialOffset + jlen(initialIndent)
	for _, seg := range lineSegments(s) {
		w := jlen(seg)
		cur += w
		if cur > width {
			res.WriteString(adjustSpace(line.String(), width, cur-w))
			res.WriteString("\n" + subsequentIndent)
			line.Reset()
			cur = jlen(subsequentIndent) + w
		}
		line.WriteString(seg)
		if strings.HasSuffix(seg, "\n") {
			res.WriteString(line.String() + subsequentIndent)
			line.Reset()
			cur = jlen(subsequentIndent)
		}
	}
	res.WriteString(line.String())
	return res.String()
}

// adjustSpace is TextHelper.adjustSpace: trim the line's spaces at both
// ends, then widen its runs of spaces so that it ends at width. When the
// extra spaces do not divide evenly, the remainder goes one each to the
// runs in the middle: runs remStart..remStart+rem-1, where
// remStart = (runs-rem+1)/2.
func adjustSpace(s string, width, curwidth int) string {
	orig := jlen(s)
	s = strings.TrimRight(strings.TrimLeft(s, " "), " ")
	curwidth -= orig - jlen(s)
	runs := 0
	inRun := false
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			if !inRun {
				inRun = true
				runs++
			}
		} else {
			inRun = false
		}
	}
	if runs == 0 {
		return s
	}
	need := width - curwidth
	each := need / runs
	rem := need % runs
	remStart := (runs - rem + 1) / 2
	remEnd := remStart + rem
	var b strings.Builder
	inRun = false
	run := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			if !inRun {
				inRun = true
				add := each
				if remStart <= run && run < remEnd {
					add++
				}
				if add > 0 {
					b.WriteString(strings.Repeat(" ", add))
				}
				run++
			}
		} else {
			inRun = false
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
