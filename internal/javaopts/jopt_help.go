package javaopts

import (
	"sort"
	"strings"
)

// Help is the table that printHelpOn writes with jopt-simple's
// BuiltinHelpFormatter (80 columns, 2 between the columns): an "Option" /
// "Description" header (with "(* = required)" when an option is Required),
// then one row per option, sorted by its first name. The option column is
// at most 39 wide and the description starts at column 41; a cell that
// does not fit wraps at the JDK's line-break opportunities, its
// continuation lines indented by 2. Every line is padded with spaces to the
// full width of both columns.
func (p *JoptParser) Help() string {
	_, all := p.specs()
	var sorted []*joptSpec
	for _, s := range all {
		if !s.Hidden {
			sorted = append(sorted, s)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		return javaCompare(sorted[i].Names[0], sorted[j].Names[0]) < 0
	})
	// A TreeSet keyed on the first name keeps one spec per name.
	uniq := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s.Names[0] != sorted[i-1].Names[0] {
			uniq = append(uniq, s)
		}
	}
	var rows joptRows
	if len(uniq) == 0 {
		rows.add("No options specified", "")
	} else {
		required := false
		for _, s := range uniq {
			required = required || s.Required
		}
		if required {
			rows.add("Option (* = required)", "Description")
			rows.add("---------------------", "-----------")
		} else {
			rows.add("Option", "Description")
			rows.add("------", "-----------")
		}
		for _, s := range uniq {
			rows.add(s.optionDisplay(), s.descriptionDisplay())
		}
	}
	rows.fit()
	return rows.render()
}

func (s *joptSpec) optionDisplay() string {
	var b strings.Builder
	if s.Required {
		b.WriteString("* ")
	}
	for i, n := range s.Names {
		if i > 0 {
			b.WriteString(", ")
		}
		if jlen(n) > 1 {
			b.WriteString("--")
		} else {
			b.WriteString("-")
		}
		b.WriteString(n)
	}
	if s.Arg != NoArg {
		open, closing := "[", "]"
		if s.Arg == RequiredArg {
			open, closing = "<", ">"
		}
		b.WriteString(" " + open + s.typeName())
		if s.ArgName != "" {
			b.WriteString(": " + s.ArgName)
		}
		b.WriteString(closing)
	}
	return b.String()
}

func (s *joptSpec) descriptionDisplay() string {
	if len(s.Defaults) == 0 {
		return s.Description
	}
	def := s.Defaults[0]
	if len(s.Defaults) > 1 {
		def = "[" + strings.Join(s.Defaults, ", ") + "]"
	}
	return strings.TrimFunc(s.Description+" (default: "+def+")", func(r rune) bool { return r <= ' ' })
}

// joptRows is jopt-simple's Rows: two columns whose widths follow the
// widest cell, capped so that both fit in 80 columns.
type joptRows struct {
	rows           [][2]string
	widestOption   int
	widestDescript int
}

const (
	joptOverallWidth = 80
	joptSeparator    = 2
)

func (r *joptRows) add(option, description string) {
	r.rows = append(r.rows, [2]string{option, description})
	r.widestOption = max(r.widestOption, jlen(option))
	r.widestDescript = max(r.widestDescript, jlen(description))
}

func (r *joptRows) optionWidth() int {
	return min((joptOverallWidth-joptSeparator)/2, r.widestOption)
}

func (r *joptRows) descriptionWidth() int {
	return min(joptOverallWidth-r.optionWidth()-joptSeparator, r.widestDescript)
}

// fit splits every row into lines that fit the column widths.
func (r *joptRows) fit() {
	ow, dw := r.optionWidth(), r.descriptionWidth()
	old := r.rows
	*r = joptRows{}
	for _, row := range old {
		opts := joptPieces(row[0], ow)
		descs := joptPieces(row[1], dw)
		for i := 0; i < max(len(opts), len(descs)); i++ {
			var o, d string
			if i < len(opts) {
				o = opts[i]
			}
			if i < len(descs) {
				d = descs[i]
			}
			r.add(o, d)
		}
	}
}

func (r *joptRows) render() string {
	var b strings.Builder
	ow, dw := r.optionWidth(), r.descriptionWidth()
	for _, row := range r.rows {
		b.WriteString(row[0] + strings.Repeat(" ", max(0, ow-jlen(row[0]))))
		b.WriteString(strings.Repeat(" ", joptSeparator))
		b.WriteString(row[1] + strings.Repeat(" ", max(0, dw-jlen(row[1]))))
		b.WriteString("\n")
	}
	return b.String()
}

// joptPieces is Columns.piecesOf: the cell trimmed, split at embedded
// newlines, each line filled word by word (JDK line breaks) up to width;
// a piece that wraps loses its trailing white space and the next one
// starts with two spaces.
func joptPieces(raw string, width int) []string {
	var pieces []string
	trimmed := strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	for _, line := range JavaSplit(trimmed, "\n") {
		var next strings.Builder
		for _, word := range lineSegments(line) {
			if jlen(next.String())+jlen(word) > width {
				pieces = append(pieces, strings.TrimRightFunc(next.String(), isJavaRegexSpace))
				next.Reset()
				next.WriteString("  ")
			}
			next.WriteString(word)
		}
		if next.Len() > 0 {
			pieces = append(pieces, next.String())
		}
	}
	return pieces
}

// isJavaRegexSpace is the \s of java.util.regex: [ \t\n\x0B\f\r].
func isJavaRegexSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\x0b', '\f', '\r':
		return true
	}
	return false
}

// JavaSplit is String.split with a literal separator: trailing empty
// strings are dropped (so "=" split at "=" gives none), but an empty input
// gives one empty string.
func JavaSplit(s, sep string) []string {
	if s == "" {
		return []string{""}
	}
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// UsageExit is Kafka's CommandLineUtils.printUsageAndExit: the message and
// the help table on stderr, exit code 1. Kafka tools use it for parse
// errors, --help and their own checks.
func (p *JoptParser) UsageExit(message string) *Exit {
	return &Exit{Code: 1, Stderr: message + "\n" + p.Help()}
}

// SpecString is an option spec's toString, its names as a Java list:
// "[topic]", as in Kafka's `Missing required argument "[topic]"`.
func (p *JoptParser) SpecString(name string) string {
	byName, _ := p.specs()
	if s := byName[name]; s != nil {
		return "[" + strings.Join(s.Names, ", ") + "]"
	}
	return "[" + name + "]"
}
