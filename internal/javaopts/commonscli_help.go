package javaopts

import (
	"sort"
	"strings"
)

// CommonsHelpWidth is HelpFormatter's default line width.
const CommonsHelpWidth = 74

// Help is what commons-cli 1.9.0's HelpFormatter.printHelp(syntax,
// options) prints with its defaults (width 74, left pad 1, description pad
// 3, options sorted by key ignoring case): "usage: " + syntax wrapped, then
// one block per option, " -x,--long <arg>" padded to the widest such cell,
// the description wrapped under its column, trailing spaces trimmed. Every
// line ends in "\n".
func (p *CommonsParser) Help(syntax string) string {
	return p.HelpWidth(syntax, CommonsHelpWidth)
}

// HelpWidth is Help with another line width.
func (p *CommonsParser) HelpWidth(syntax string, width int) string {
	var b strings.Builder
	// printUsage indents continuation lines under the syntax's second word.
	b.WriteString(renderWrapped(width, len("usage: ")+strings.Index(syntax, " ")+1, "usage: "+syntax))
	b.WriteString("\n")
	b.WriteString(p.OptionsHelp(width))
	return b.String()
}

// OptionsHelp is HelpFormatter.printOptions: the option blocks alone.
func (p *CommonsParser) OptionsHelp(width int) string {
	const leftPad, descPad = 1, 3
	ix := newCommonsIndex(p.Options)
	opts := append([]*CommonsOption(nil), ix.helpOrder...)
	sort.SliceStable(opts, func(i, j int) bool {
		return compareIgnoreCase(opts[i].Key(), opts[j].Key()) < 0
	})
	prefixes := make([]string, len(opts))
	widest := 0
	for i, o := range opts {
		var cell strings.Builder
		cell.WriteString(strings.Repeat(" ", leftPad))
		if o.Short == "" {
			cell.WriteString("   --" + o.Long)
		} else {
			if !p.NoOptPrefix {
				cell.WriteString("-")
			}
			cell.WriteString(o.Short)
			if o.Long != "" {
				cell.WriteString(",--" + o.Long)
			}
		}
		if o.takesArg() {
			name := o.ArgName
			if name == "" {
				name = "arg"
			}
			cell.WriteString(" <" + name + ">")
		}
		prefixes[i] = cell.String()
		widest = max(widest, javaLen(prefixes[i]))
	}
	var b strings.Builder
	for i, o := range opts {
		line := prefixes[i] + strings.Repeat(" ", widest-javaLen(prefixes[i])) + strings.Repeat(" ", descPad) + o.Desc
		b.WriteString(renderWrapped(width, widest+descPad, line))
		b.WriteString("\n")
	}
	return b.String()
}

// javaLen is String.length(): UTF-16 code units.
func javaLen(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// compareIgnoreCase is String.compareToIgnoreCase on ASCII-range names
// (every option name is): characters compared after upper- then
// lower-casing each.
func compareIgnoreCase(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	for i := 0; i < len(ra) && i < len(rb); i++ {
		ca, cb := foldJava(ra[i]), foldJava(rb[i])
		if ca != cb {
			return int(ca) - int(cb)
		}
	}
	return len(ra) - len(rb)
}

func foldJava(r rune) rune {
	r = []rune(strings.ToUpper(string(r)))[0]
	return []rune(strings.ToLower(string(r)))[0]
}

// renderWrapped is HelpFormatter.renderWrappedText: text wrapped to width,
// continuation lines indented by tab spaces, every line right-trimmed;
// the lines are joined by "\n" with no final newline.
func renderWrapped(width, tab int, text string) string {
	t := []rune(text)
	var b strings.Builder
	pos := findWrapPos(t, width, 0)
	if pos == -1 {
		b.WriteString(rtrim(string(t)))
		return b.String()
	}
	b.WriteString(rtrim(string(t[:pos])))
	b.WriteString("\n")
	if tab >= width {
		tab = 1 // as commons-cli does, to avoid an endless loop
	}
	padding := strings.Repeat(" ", tab)
	for {
		t = []rune(padding + strings.TrimFunc(string(t[pos:]), func(r rune) bool { return r <= ' ' }))
		pos = findWrapPos(t, width, 0)
		if pos == -1 {
			b.WriteString(string(t))
			return b.String()
		}
		if len(t) > width && pos == tab-1 {
			pos = width
		}
		b.WriteString(rtrim(string(t[:pos])))
		b.WriteString("\n")
	}
}

// findWrapPos is HelpFormatter.findWrapPos: where to break text so that a
// line holds at most width characters, or -1 when the rest fits.
func findWrapPos(t []rune, width, start int) int {
	for i := start; i < len(t); i++ {
		if t[i] == '\n' {
			if i <= width {
				return i + 1
			}
			break
		}
	}
	for i := start; i < len(t); i++ {
		if t[i] == '\t' {
			if i <= width {
				return i + 1
			}
			break
		}
	}
	if start+width >= len(t) {
		return -1
	}
	pos := start + width
	for ; pos >= start; pos-- {
		if c := t[pos]; c == ' ' || c == '\n' || c == '\r' {
			break
		}
	}
	if pos > start {
		return pos
	}
	pos = start + width
	if pos == len(t) {
		return -1
	}
	return pos
}

// rtrim is HelpFormatter.rtrim: trailing white space (Character.isWhitespace) removed.
func rtrim(s string) string {
	return strings.TrimRightFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v' || (r >= 0x1c && r <= 0x1f)
	})
}
