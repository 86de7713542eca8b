package rmqbench

import (
	"sort"
	"strings"

	"github.com/perfclones/perfclones/internal/javaopts"
)

// helpWidth is ServerUtil's HelpFormatter.setWidth(110).
const helpWidth = 110

// helpText is commons-cli's HelpFormatter.printHelp(app, options, true) at
// width 110: the auto-usage line (every option as [-x <arg>], sorted
// case-insensitively by key), wrapped with a 7-column indent, then
// javaopts' option blocks. (javaopts renders a given syntax line, whose
// continuation indent differs from the auto-usage one.)
func helpText(app string, options []javaopts.CommonsOption) string {
	sorted := helpOrder(options)
	var usage strings.Builder
	usage.WriteString("usage: " + app)
	for _, o := range sorted {
		usage.WriteString(" [" + optionTag(o) + "]")
	}
	var b strings.Builder
	wrapInto(&b, usage.String(), len("usage: "))
	b.WriteString("\n")

	b.WriteString((&javaopts.CommonsParser{Options: options}).OptionsHelp(helpWidth))
	return b.String()
}

// helpOrder is the Options' helpOptions (one per key, the last added
// kept, as Options.addOption replaces an option of the same key) sorted
// case-insensitively by key.
func helpOrder(options []javaopts.CommonsOption) []javaopts.CommonsOption {
	byKey := map[string]int{}
	var out []javaopts.CommonsOption
	for _, o := range options {
		if i, ok := byKey[o.Key()]; ok {
			out[i] = o
			continue
		}
		byKey[o.Key()] = len(out)
		out = append(out, o)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return strings.ToLower(out[i].Key()) < strings.ToLower(out[j].Key())
	})
	return out
}

func optionTag(o javaopts.CommonsOption) string {
	if o.Arg == javaopts.CommonsNoArg {
		return "-" + o.Key()
	}
	return "-" + o.Key() + " <arg>"
}

// wrapInto is HelpFormatter.renderWrappedText: break at the last blank
// within the width, continuation lines indented by indent columns.
func wrapInto(b *strings.Builder, text string, indent int) {
	pos := wrapPos(text, helpWidth)
	if pos < 0 {
		b.WriteString(strings.TrimRight(text, " "))
		return
	}
	b.WriteString(strings.TrimRight(text[:pos], " ") + "\n")
	if indent >= helpWidth {
		indent = 1
	}
	pad := strings.Repeat(" ", indent)
	for {
		text = pad + strings.TrimSpace(text[pos:])
		pos = wrapPos(text, helpWidth)
		if pos < 0 {
			b.WriteString(text)
			return
		}
		if len(text) > helpWidth && pos == indent-1 {
			pos = helpWidth
		}
		b.WriteString(strings.TrimRight(text[:pos], " ") + "\n")
	}
}

// wrapPos is HelpFormatter.findWrapPos from position 0.
func wrapPos(text string, width int) int {
	if i := strings.IndexByte(text, '\n'); i >= 0 && i <= width {
		return i + 1
	}
	if i := strings.IndexByte(text, '\t'); i >= 0 && i <= width {
		return i + 1
	}
	if width >= len(text) {
		return -1
	}
	pos := width
	for ; pos >= 0; pos-- {
		if c := text[pos]; c == ' ' || c == '\n' || c == '\r' {
			break
		}
	}
	if pos > 0 {
		return pos
	}
	if width == len(text) {
		return -1
	}
	return width
}
