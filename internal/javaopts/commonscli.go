package javaopts

import (
	"strings"
)

// CommonsArg says how many values a commons-cli option takes.
type CommonsArg int

// The kinds of commons-cli option, as the Option constructor and its
// setters make them.
const (
	// CommonsNoArg: new Option(opt, longOpt, false, desc), a switch.
	CommonsNoArg CommonsArg = iota
	// CommonsOneArg: new Option(opt, longOpt, true, desc), one value,
	// required.
	CommonsOneArg
	// CommonsOptionalArg: setOptionalArg(true) with setArgs(1): the next
	// token is taken when it is not an option, and may be missing.
	CommonsOptionalArg
	// CommonsUnlimited: setArgs(Option.UNLIMITED_VALUES): at least one
	// value; every following token that is not an option is taken too,
	// and a glued value works as for Java properties (-fpersistent).
	CommonsUnlimited
)

// CommonsOption declares one option of an Apache commons-cli Options
// table, in definition order (help sorts its own copy).
type CommonsOption struct {
	// Short is the "opt" of the Java constructor without the dash: "x",
	// "qpf", "?". Empty for an option with a long name only.
	Short string
	// Long is the longOpt without dashes: "producers". Empty for a short
	// name only.
	Long string
	Desc string
	Arg  CommonsArg
	// ArgName is shown as <ArgName> in help; empty means commons-cli's
	// default, "arg".
	ArgName string
}

// Key is Option.getKey(): the short name, or the long one when there is
// none. Errors and lookups use it.
func (o *CommonsOption) Key() string {
	if o.Short != "" {
		return o.Short
	}
	return o.Long
}

func (o *CommonsOption) takesArg() bool { return o.Arg != CommonsNoArg }

// CommonsParser emulates commons-cli 1.9.0's DefaultParser with its
// defaults (partial matching of long names on, stopAtNonOption off), the
// parser RabbitMQ PerfTest and RocketMQ's tools use:
//
//   - "--name", "--name=value", and "-name" for any short or long name
//     ("-qq", "-pmessages 1000"); a unique prefix of a long name is that
//     option ("--produc" is ambiguous, "--time" exact), with one dash or two;
//   - a value is the next token unless that token is an option (a negative
//     number is a value), or glued: "-x2", "-Xmx512m" style long prefixes,
//     "-x=2", "--producers=2";
//   - "-abc" is a cluster of one-letter options, the first that takes a
//     value taking the rest of the token;
//   - "--" ends the options; other words are arguments (Args).
//
// Parse's errors are commons-cli's ParseException messages; a tool prints
// them in its own way (PerfTest: "Parsing failed. Reason: " + message).
type CommonsParser struct {
	Options []CommonsOption
	// NoOptPrefix is HelpFormatter.setOptPrefix(""): help shows short
	// names without their dash (PerfTest's -env listing).
	NoOptPrefix bool
}

// CommonsError is a ParseException: Msg is its getMessage().
type CommonsError struct{ Msg string }

func (e *CommonsError) Error() string { return e.Msg }

// CommonsLine is a parsed command line (commons-cli's CommandLine): the
// options in the order they were given, each with its values, and the
// arguments that are not options.
type CommonsLine struct {
	parser *commonsIndex
	opts   []*commonsSeen
	args   []string
}

type commonsSeen struct {
	opt    *CommonsOption
	values []string
}

// commonsIndex is the Options object: shortOpts keyed by each option's
// key (so a long-only option is also found as a "short" name, as in
// commons-cli), longOpts by long name, both in definition order.
type commonsIndex struct {
	all       []*CommonsOption
	shortOpts map[string]*CommonsOption
	longOpts  map[string]*CommonsOption
	longOrder []string
	helpOrder []*CommonsOption
}

func newCommonsIndex(options []CommonsOption) *commonsIndex {
	ix := &commonsIndex{shortOpts: map[string]*CommonsOption{}, longOpts: map[string]*CommonsOption{}}
	for i := range options {
		o := &options[i]
		ix.all = append(ix.all, o)
		if o.Long != "" {
			if _, ok := ix.longOpts[o.Long]; !ok {
				ix.longOrder = append(ix.longOrder, o.Long)
			}
			ix.longOpts[o.Long] = o
		}
		key := o.Key()
		if prev, ok := ix.shortOpts[key]; ok {
			// A re-added key keeps its place (LinkedHashMap.put).
			for j, h := range ix.helpOrder {
				if h == prev {
					ix.helpOrder[j] = o
				}
			}
		} else {
			ix.helpOrder = append(ix.helpOrder, o)
		}
		ix.shortOpts[key] = o
	}
	return ix
}

func stripLeadingHyphens(s string) string {
	if strings.HasPrefix(s, "--") {
		return s[2:]
	}
	if strings.HasPrefix(s, "-") {
		return s[1:]
	}
	return s
}

func (ix *commonsIndex) hasShort(name string) bool {
	_, ok := ix.shortOpts[stripLeadingHyphens(name)]
	return ok
}

func (ix *commonsIndex) hasLong(name string) bool {
	_, ok := ix.longOpts[stripLeadingHyphens(name)]
	return ok
}

func (ix *commonsIndex) hasOption(name string) bool {
	return ix.hasShort(name) || ix.hasLong(name)
}

func (ix *commonsIndex) get(name string) *CommonsOption {
	name = stripLeadingHyphens(name)
	if o, ok := ix.shortOpts[name]; ok {
		return o
	}
	return ix.longOpts[name]
}

// matching is Options.getMatchingOptions: the exact long name alone, else
// every long name that starts with name, in definition order.
func (ix *commonsIndex) matching(name string) []string {
	name = stripLeadingHyphens(name)
	if _, ok := ix.longOpts[name]; ok {
		return []string{name}
	}
	var out []string
	for _, l := range ix.longOrder {
		if strings.HasPrefix(l, name) {
			out = append(out, l)
		}
	}
	return out
}

// commonsRun is the state of one DefaultParser.parse call.
type commonsRun struct {
	ix           *commonsIndex
	line         *CommonsLine
	current      *commonsSeen
	currentToken string
	skipParsing  bool
}

// Parse parses args as DefaultParser.parse(options, args) does.
func (p *CommonsParser) Parse(args []string) (*CommonsLine, error) {
	ix := newCommonsIndex(p.Options)
	r := &commonsRun{ix: ix, line: &CommonsLine{parser: ix}}
	for _, tok := range args {
		if err := r.token(tok); err != nil {
			return nil, err
		}
	}
	if err := r.checkRequiredArgs(); err != nil {
		return nil, err
	}
	return r.line, nil
}

// acceptsArg is Option.acceptsArg() on the parsed copy.
func (s *commonsSeen) acceptsArg() bool {
	switch s.opt.Arg {
	case CommonsNoArg:
		return false
	case CommonsUnlimited:
		return true
	default:
		return len(s.values) < 1
	}
}

// requiresArg is Option.requiresArg().
func (s *commonsSeen) requiresArg() bool {
	switch s.opt.Arg {
	case CommonsOptionalArg, CommonsNoArg:
		return false
	case CommonsUnlimited:
		return len(s.values) == 0
	default:
		return s.acceptsArg()
	}
}

// stripQuotes is Util.stripLeadingAndTrailingQuotes, which commons-cli
// applies to values given as their own token: one pair of surrounding
// double quotes goes when no other double quote is inside.
func stripQuotes(s string) string {
	if len(s) > 1 && strings.HasPrefix(s, `"`) && strings.HasSuffix(s, `"`) && !strings.Contains(s[1:len(s)-1], `"`) {
		return s[1 : len(s)-1]
	}
	return s
}

func (r *commonsRun) token(tok string) error {
	r.currentToken = tok
	var err error
	switch {
	case r.skipParsing:
		r.line.args = append(r.line.args, tok)
	case tok == "--":
		r.skipParsing = true
	case r.current != nil && r.current.acceptsArg() && r.isArgument(tok):
		r.current.values = append(r.current.values, stripQuotes(tok))
	case strings.HasPrefix(tok, "--"):
		err = r.longOption(tok)
	case strings.HasPrefix(tok, "-") && tok != "-":
		err = r.shortAndLongOption(tok)
	default:
		err = r.unknown(tok)
	}
	if err != nil {
		return err
	}
	if r.current != nil && !r.current.acceptsArg() {
		r.current = nil
	}
	return nil
}

func (r *commonsRun) isArgument(tok string) bool {
	return !r.isOption(tok) || isJavaNumber(tok)
}

func isJavaNumber(tok string) bool {
	_, err := ParseJavaDouble(tok)
	return err == nil
}

func (r *commonsRun) isOption(tok string) bool { return r.isLongOption(tok) || r.isShortOption(tok) }

func (r *commonsRun) isLongOption(tok string) bool {
	if !strings.HasPrefix(tok, "-") || len(tok) == 1 {
		return false
	}
	name, _, _ := strings.Cut(tok, "=")
	if len(r.ix.matching(name)) > 0 {
		return true
	}
	return r.longPrefix(tok) != "" && !strings.HasPrefix(tok, "--")
}

func (r *commonsRun) isShortOption(tok string) bool {
	if !strings.HasPrefix(tok, "-") || len(tok) == 1 {
		return false
	}
	name, _, _ := strings.Cut(tok[1:], "=")
	if r.ix.hasShort(name) {
		return true
	}
	return name != "" && r.ix.hasShort(firstChar(name))
}

func firstChar(s string) string {
	for _, c := range s {
		return string(c)
	}
	return ""
}

// longPrefix is DefaultParser.getLongPrefix: the longest long name that
// is a proper prefix of the token, leaving at least two characters
// ("-Xmx512m" style).
func (r *commonsRun) longPrefix(tok string) string {
	t := []rune(stripLeadingHyphens(tok))
	for i := len(t) - 2; i > 1; i-- {
		if p := string(t[:i]); r.ix.hasLong(p) {
			return p
		}
	}
	return ""
}

// isJavaProperty: the token's first character is an option that takes
// several values (-Dkey=value).
func (r *commonsRun) isJavaProperty(tok string) bool {
	if tok == "" {
		return false
	}
	o := r.ix.get(firstChar(tok))
	return o != nil && o.Arg == CommonsUnlimited
}

func (r *commonsRun) checkRequiredArgs() error {
	if r.current != nil && r.current.requiresArg() {
		return &CommonsError{Msg: "Missing argument for option: " + r.current.opt.Key()}
	}
	return nil
}

func (r *commonsRun) handle(o *CommonsOption) error {
	if err := r.checkRequiredArgs(); err != nil {
		return err
	}
	seen := &commonsSeen{opt: o}
	r.line.opts = append(r.line.opts, seen)
	if o.takesArg() {
		r.current = seen
	} else {
		r.current = nil
	}
	return nil
}

// handleWithValue handles o and gives it value, as the glued forms do.
func (r *commonsRun) handleWithValue(o *CommonsOption, values ...string) error {
	if err := r.handle(o); err != nil {
		return err
	}
	r.current.values = append(r.current.values, values...)
	r.current = nil
	return nil
}

func (r *commonsRun) unknown(tok string) error {
	if strings.HasPrefix(tok, "-") && len(tok) > 1 {
		return &CommonsError{Msg: "Unrecognized option: " + tok}
	}
	r.line.args = append(r.line.args, tok)
	return nil
}

func ambiguous(tok string, matches []string) error {
	var b strings.Builder
	b.WriteString("Ambiguous option: '" + tok + "'  (could be: ")
	for i, m := range matches {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("'" + m + "'")
	}
	b.WriteString(")")
	return &CommonsError{Msg: b.String()}
}

func (r *commonsRun) longOption(tok string) error {
	if !strings.Contains(tok, "=") {
		return r.longWithoutEqual(tok)
	}
	return r.longWithEqual(tok)
}

func (r *commonsRun) longWithoutEqual(tok string) error {
	m := r.ix.matching(tok)
	switch {
	case len(m) == 0:
		return r.unknown(r.currentToken)
	case len(m) > 1 && !r.ix.hasLong(tok):
		return ambiguous(tok, m)
	}
	key := m[0]
	if r.ix.hasLong(tok) {
		key = tok
	}
	return r.handle(r.ix.get(key))
}

func (r *commonsRun) longWithEqual(tok string) error {
	name, value, _ := strings.Cut(tok, "=")
	m := r.ix.matching(name)
	switch {
	case len(m) == 0:
		return r.unknown(r.currentToken)
	case len(m) > 1 && !r.ix.hasLong(name):
		return ambiguous(name, m)
	}
	key := m[0]
	if r.ix.hasLong(name) {
		key = name
	}
	o := r.ix.get(key)
	if !o.takesArg() {
		return r.unknown(r.currentToken)
	}
	return r.handleWithValue(o, value)
}

func (r *commonsRun) shortAndLongOption(tok string) error {
	t := stripLeadingHyphens(tok)
	name, value, hasEqual := strings.Cut(t, "=")
	switch {
	case len([]rune(t)) == 1:
		if r.ix.hasShort(t) {
			return r.handle(r.ix.get(t))
		}
		return r.unknown(tok)
	case !hasEqual:
		if r.ix.hasShort(t) {
			return r.handle(r.ix.get(t))
		}
		if len(r.ix.matching(t)) > 0 {
			return r.longWithoutEqual(tok)
		}
		if p := r.longPrefix(t); p != "" && r.ix.get(p).takesArg() {
			return r.handleWithValue(r.ix.get(p), string([]rune(t)[len([]rune(p)):]))
		}
		if r.isJavaProperty(t) {
			first := firstChar(t)
			return r.handleWithValue(r.ix.get(first), t[len(first):])
		}
		return r.concatenated(tok)
	default:
		if len([]rune(name)) == 1 {
			o := r.ix.get(name)
			if o != nil && o.takesArg() {
				return r.handleWithValue(o, value)
			}
			return r.unknown(tok)
		}
		if r.isJavaProperty(name) {
			first := firstChar(name)
			return r.handleWithValue(r.ix.get(first), name[len(first):], value)
		}
		return r.longWithEqual(tok)
	}
}

// concatenated is handleConcatenatedOptions: "-abc", or "-xVALUE" when x
// takes a value.
func (r *commonsRun) concatenated(tok string) error {
	rs := []rune(tok)
	for i := 1; i < len(rs); i++ {
		ch := string(rs[i])
		if !r.ix.hasOption(ch) {
			return r.unknown(tok)
		}
		if err := r.handle(r.ix.get(ch)); err != nil {
			return err
		}
		if r.current != nil && len(rs) != i+1 {
			r.current.values = append(r.current.values, string(rs[i+1:]))
			break
		}
	}
	return nil
}

// lookup finds the option a name stands for: its short name or its long
// name, with or without dashes.
func (c *CommonsLine) lookup(name string) *CommonsOption {
	return c.parser.get(name)
}

// Has is CommandLine.hasOption: the option (by short or long name) was
// given.
func (c *CommonsLine) Has(name string) bool {
	o := c.lookup(name)
	if o == nil {
		return false
	}
	for _, s := range c.opts {
		if s.opt == o {
			return true
		}
	}
	return false
}

// Values is CommandLine.getOptionValues: the values of every occurrence,
// in order; nil when there are none.
func (c *CommonsLine) Values(name string) []string {
	o := c.lookup(name)
	if o == nil {
		return nil
	}
	var out []string
	for _, s := range c.opts {
		if s.opt == o {
			out = append(out, s.values...)
		}
	}
	return out
}

// Value is CommandLine.getOptionValue: the first value of the first
// occurrence (a repeated single-value option keeps its first value, as
// in Java), and whether there is one.
func (c *CommonsLine) Value(name string) (string, bool) {
	v := c.Values(name)
	if len(v) == 0 {
		return "", false
	}
	return v[0], true
}

// ValueOr is CommandLine.getOptionValue(name, def).
func (c *CommonsLine) ValueOr(name, def string) string {
	if v, ok := c.Value(name); ok {
		return v
	}
	return def
}

// Args are the tokens that were not options or values, in order.
func (c *CommonsLine) Args() []string { return c.args }

// Given lists the options in the order they appeared (one entry per
// occurrence).
func (c *CommonsLine) Given() []*CommonsOption {
	out := make([]*CommonsOption, len(c.opts))
	for i, s := range c.opts {
		out[i] = s.opt
	}
	return out
}
