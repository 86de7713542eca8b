package javaopts

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/perfclones/perfclones/internal/javafmt"
)

// ArgType is the Java type an argparse4j argument converts its value to, or
// TypeFlag for a value-less storeTrue() switch.
type ArgType int

// The argument types the Kafka tools use.
const (
	TypeString  ArgType = iota // String: the token as is
	TypeLong                   // Long.valueOf
	TypeInteger                // Integer.valueOf
	TypeDouble                 // Double.valueOf
	TypeFlag                   // storeTrue(): takes no value; default false
)

// javaName is the simple class name argparse4j puts in conversion errors.
func (t ArgType) javaName() string {
	switch t {
	case TypeLong:
		return "Long"
	case TypeInteger:
		return "Integer"
	case TypeDouble:
		return "Double"
	case TypeFlag:
		return "Boolean"
	}
	return "String"
}

// Arg declares one optional argument of an argparse4j parser, in the terms
// of the Java builder calls (addArgument(...).metavar(...).type(...) ...).
type Arg struct {
	// Flags are the option strings, for example {"--topic"}; each starts
	// with '-'. The first long one names the argument in messages together
	// with the others ("-h/--help").
	Flags []string
	// Dest is the Namespace key. Empty means argparse4j's default: the
	// first long flag without its dashes, '-' replaced by '_'.
	Dest string
	// Metavar names the value in usage and help; empty means Dest in upper
	// case.
	Metavar string
	Type    ArgType
	// Nargs is "" for exactly one value, or "+", "*" or "?". A "+" or "*"
	// argument takes every following token up to the next one that looks
	// like a flag and stores the list; a repeated occurrence replaces it.
	Nargs    string
	Required bool
	// Default is the value stored when the argument is absent, and shown as
	// "(default: X)" in help when the parser has DefaultHelp. Use string,
	// int64, int32, float64 or bool; nil means no default. Flags always
	// default to false.
	Default any
	// Const is the value stored for Nargs "?" when the flag has no value.
	Const any
	Help  string
	// Group is the Name of the entry in ArgParser.Groups this argument
	// belongs to, or empty.
	Group string
}

// Group is an argument group (addArgumentGroup) or, with Mutex, a mutually
// exclusive group (addMutuallyExclusiveGroup). A group with a title or a
// description, or one that is not mutually exclusive, gets its own help
// section after "optional arguments:".
type Group struct {
	Name        string // key used by Arg.Group; never printed
	Title       string
	Description string
	Mutex       bool
	Required    bool // for Mutex groups: one of the arguments must be given
}

// ArgParser emulates an argparse4j 0.7.0 ArgumentParser built with
// ArgumentParsers.newArgumentParser(Prog) (so with -h/--help and the "-"
// prefix), optional arguments only. Declare it once as a table; Parse,
// Help, Usage and Fail all read the same table.
type ArgParser struct {
	Prog        string
	Description string
	Epilog      string
	// DefaultHelp is defaultHelp(true): help lines end in "(default: X)".
	DefaultHelp bool
	Args        []Arg
	Groups      []Group
	// HelpOnNoArgs reproduces a main that, when the command line is empty
	// and parsing fails, prints the help on stdout and exits 0 (Kafka's
	// ProducerPerformance does).
	HelpOnNoArgs bool
}

// argSpec is an Arg with argparse4j's derived fields filled in.
type argSpec struct {
	Arg
	group   *groupSpec
	help    bool // the -h/--help action
	minArgs int  // -1 exactly one; else the lower bound
	maxArgs int  // -1 exactly one; else the upper bound (maxInt for + and *)
}

type groupSpec struct {
	Group
	index int
	args  []*argSpec
}

const maxInt = int(^uint(0) >> 1)

func (a *argSpec) consumesArgument() bool { return a.Type != TypeFlag && !a.help }

// textualName is the flags joined by "/", as in "argument -h/--help: ...".
func (a *argSpec) textualName() string { return strings.Join(a.Flags, "/") }

// compiled is the parser's table in argparse4j's order: -h/--help first,
// then the arguments as declared.
type compiled struct {
	p      *ArgParser
	args   []*argSpec
	index  map[string]*argSpec
	groups []*groupSpec
}

var (
	negNumPattern    = regexp.MustCompile(`^-[0-9]+$`)
	shortOptsPattern = regexp.MustCompile("^-[^-][^\n\r\u0085\u2028\u2029]*$")
)

func (p *ArgParser) compile() *compiled {
	c := &compiled{p: p, index: map[string]*argSpec{}}
	for i, g := range p.Groups {
		c.groups = append(c.groups, &groupSpec{Group: g, index: i})
	}
	help := &argSpec{Arg: Arg{Flags: []string{"-h", "--help"}, Dest: "help", Help: "show this help message and exit"}, help: true}
	all := []*argSpec{help}
	for _, a := range p.Args {
		s := &argSpec{Arg: a}
		if s.Dest == "" {
			s.Dest = defaultDest(s.Flags)
		}
		switch s.Nargs {
		case "":
			s.minArgs, s.maxArgs = -1, -1
		case "+":
			s.minArgs, s.maxArgs = 1, maxInt
		case "*":
			s.minArgs, s.maxArgs = 0, maxInt
		case "?":
			s.minArgs, s.maxArgs = 0, 1
		default:
			n, err := strconv.Atoi(s.Nargs)
			if err != nil || n <= 0 {
				panic("javaopts: bad Nargs " + strconv.Quote(s.Nargs))
			}
			s.minArgs, s.maxArgs = n, n
		}
		if s.Type == TypeFlag && s.Default == nil {
			s.Default = false
		}
		if s.Group != "" {
			for _, g := range c.groups {
				if g.Name == s.Group {
					s.group = g
					g.args = append(g.args, s)
				}
			}
			if s.group == nil {
				panic("javaopts: unknown group " + strconv.Quote(s.Group))
			}
		}
		all = append(all, s)
	}
	for _, s := range all {
		for _, f := range s.Flags {
			if !strings.HasPrefix(f, "-") || strings.Trim(f, "-") == "" {
				panic("javaopts: invalid option string " + strconv.Quote(f))
			}
			if _, dup := c.index[f]; dup {
				panic("javaopts: conflicting option string " + f)
			}
			c.index[f] = s
		}
	}
	c.args = all
	return c
}

func defaultDest(flags []string) string {
	dest := ""
	for _, f := range flags {
		long := strings.HasPrefix(f, "--")
		if dest == "" {
			dest = f
			if long {
				break
			}
		} else if long {
			dest = f
			break
		}
	}
	return strings.ReplaceAll(strings.TrimLeft(dest, "-"), "-", "_")
}

// isFlag is argparse4j's test for a token that starts an option: a prefix
// of dashes followed by something, except negative integers such as "-1".
func isFlag(term string) bool {
	return strings.HasPrefix(term, "-") && strings.Trim(term, "-") != "" && !negNumPattern.MatchString(term)
}

// Namespace holds the values of a successful parse, keyed by Dest. Keys
// may also be given as one of the argument's flags, e.g. "--num-records".
type Namespace struct {
	values map[string]any
	counts map[string]int
	c      *compiled
}

func (n *Namespace) key(k string) string {
	if strings.HasPrefix(k, "-") {
		if a := n.c.index[k]; a != nil {
			return a.Dest
		}
	}
	return k
}

// Get returns the stored value: string, int64, int32, float64, bool or
// []any for list arguments; nil when absent without a default.
func (n *Namespace) Get(key string) any { return n.values[n.key(key)] }

// Has reports whether the key holds a value (given or defaulted), as
// opposed to Java null.
func (n *Namespace) Has(key string) bool { return n.Get(key) != nil }

// Count is how many times the argument appeared on the command line.
func (n *Namespace) Count(key string) int { return n.counts[n.key(key)] }

// String returns a String argument's value.
func (n *Namespace) String(key string) (string, bool) {
	v, ok := n.Get(key).(string)
	return v, ok
}

// Strings returns a list argument's values as strings.
func (n *Namespace) Strings(key string) ([]string, bool) {
	l, ok := n.Get(key).([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(l))
	for _, v := range l {
		out = append(out, fmt.Sprint(v))
	}
	return out, true
}

// Long returns a Long argument's value.
func (n *Namespace) Long(key string) (int64, bool) {
	switch v := n.Get(key).(type) {
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case int:
		return int64(v), true
	}
	return 0, false
}

// Int returns an Integer argument's value.
func (n *Namespace) Int(key string) (int32, bool) {
	switch v := n.Get(key).(type) {
	case int32:
		return v, true
	case int:
		return int32(v), true
	}
	return 0, false
}

// Double returns a Double argument's value.
func (n *Namespace) Double(key string) (float64, bool) {
	v, ok := n.Get(key).(float64)
	return v, ok
}

// Bool returns a flag's value (false when absent).
func (n *Namespace) Bool(key string) bool {
	v, _ := n.Get(key).(bool)
	return v
}

// parseError is an ArgumentParserException: its message, and for an
// unrecognized flag the token, which drives the "Did you mean" lines.
type parseError struct {
	msg          string
	unrecognized string
}

func argError(a *argSpec, msg string) *parseError {
	return &parseError{msg: "argument " + a.textualName() + ": " + msg}
}

// helpRequested is argparse4j's HelpScreenException.
type helpRequested struct{}

// Parse parses args as parseArgs would, followed by the usual error
// handling of a Kafka-style main (handleError, then exit 1). The result is
// either a Namespace or an *Exit:
//   - -h/--help: the help on stdout, exit code 1 (argparse4j raises
//     HelpScreenException, handleError stays silent, the tool exits 1);
//   - a parse error: the usage and "<prog>: error: <msg>" on stderr, exit 1;
//   - no arguments at all with HelpOnNoArgs: the help on stdout, exit 0.
//
// width is the format width (see FormatWidth).
func (p *ArgParser) Parse(args []string, width int) (*Namespace, error) {
	c := p.compile()
	ns, perr, help := c.parse(args)
	switch {
	case help:
		return nil, &Exit{Code: 1, Stdout: c.help(width)}
	case perr != nil && len(args) == 0 && p.HelpOnNoArgs:
		return nil, &Exit{Code: 0, Stdout: c.help(width)}
	case perr != nil:
		return nil, &Exit{Code: 1, Stderr: c.errorText(perr, width)}
	}
	return ns, nil
}

// Fail is what a tool's own check raised as ArgumentParserException(msg,
// parser) prints: the usage, then "<prog>: error: <msg>", on stderr, exit 1.
func (p *ArgParser) Fail(msg string, width int) *Exit {
	c := p.compile()
	return &Exit{Code: 1, Stderr: c.errorText(&parseError{msg: msg}, width)}
}

// Help is the text printHelp writes.
func (p *ArgParser) Help(width int) string { return p.compile().help(width) }

// Usage is the text printUsage writes.
func (p *ArgParser) Usage(width int) string { return p.compile().usage(width) }

type parseState struct {
	args      []string
	i         int
	separator bool // "--" seen
}

func (st *parseState) flagFound() bool {
	if st.separator {
		return false
	}
	term := st.args[st.i]
	return term == "--" || isFlag(term)
}

func (c *compiled) parse(args []string) (ns *Namespace, perr *parseError, help bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(helpRequested); !ok {
				panic(r)
			}
			ns, perr, help = nil, nil, true
		}
	}()
	ns = &Namespace{values: map[string]any{}, counts: map[string]int{}, c: c}
	for _, a := range c.args[1:] {
		ns.values[a.Dest] = a.Default
	}
	used := map[*argSpec]bool{}
	groupUsed := make([]*argSpec, len(c.groups))
	st := &parseState{args: args}
	for st.i < len(args) {
		term := args[st.i]
		switch {
		case st.flagFound() && term != "--":
			flag, embedded, hasEmbedded := strings.Cut(term, "=")
			a, err := c.resolveFlag(flag)
			if err != nil {
				return nil, err, false
			}
			if a == nil {
				hasEmbedded = false
				shortFound := false
				if strings.HasPrefix(term, "-") && !strings.HasPrefix(term, "--") && len(term) > 1 {
					// Possibly concatenated short flags: "-hx".
					shortFound = true
					rs := []rune(term)
					for k := 1; k < len(rs); k++ {
						short := "-" + string(rs[k])
						sa := c.index[short]
						if sa == nil {
							shortFound = false
							break
						}
						if sa.consumesArgument() {
							a, flag = sa, short
							if k+1 < len(rs) {
								embedded, hasEmbedded = string(rs[k+1:]), true
							}
							break
						}
						if err := c.checkMutex(sa, groupUsed); err != nil {
							return nil, err, false
						}
						c.run(ns, sa, nil)
						used[sa] = true
					}
				}
				if !shortFound {
					return nil, &parseError{msg: "unrecognized arguments: '" + term + "'", unrecognized: term}, false
				}
			}
			st.i++
			if a != nil {
				if err := c.checkMutex(a, groupUsed); err != nil {
					return nil, err, false
				}
				var emb *string
				if hasEmbedded {
					emb = &embedded
				}
				if err := c.processArg(ns, st, a, emb); err != nil {
					return nil, err, false
				}
				used[a] = true
			}
		case term == "--" && !st.separator:
			st.separator = true
			st.i++
		default:
			// No positional arguments are declared.
			return nil, &parseError{msg: "unrecognized arguments: '" + strings.Join(args[st.i:], " ") + "'"}, false
		}
	}
	var deferred *parseError
	for _, a := range c.args {
		if a.Required && !used[a] {
			deferred = &parseError{msg: "argument " + a.textualName() + " is required"}
		}
	}
	if deferred != nil {
		return nil, deferred, false
	}
	for i, g := range c.groups {
		if g.Mutex && g.Required && groupUsed[i] == nil {
			var names strings.Builder
			for _, a := range g.args {
				names.WriteString(a.textualName() + " ")
			}
			deferred = &parseError{msg: "one of the arguments " + names.String() + "is required"}
		}
	}
	if deferred != nil {
		return nil, deferred, false
	}
	return ns, nil, false
}

// resolveFlag finds the argument a flag names, exactly or by an
// unambiguous prefix; nil when nothing matches.
func (c *compiled) resolveFlag(flag string) (*argSpec, *parseError) {
	if a := c.index[flag]; a != nil {
		return a, nil
	}
	var cand []string
	for f := range c.index {
		if strings.HasPrefix(f, flag) {
			cand = append(cand, f)
		}
	}
	switch {
	case len(cand) == 0:
		return nil, nil
	case c.concatenatedShortOpts(flag):
		cand = append(cand, flag[:2])
	case len(cand) == 1:
		return c.index[cand[0]], nil
	}
	sort.Strings(cand)
	return nil, &parseError{msg: "ambiguous option: " + flag + " could match " + strings.Join(cand, ", ")}
}

func (c *compiled) concatenatedShortOpts(term string) bool {
	if !shortOptsPattern.MatchString(term) {
		return false
	}
	rs := []rune(term)
	for k := 1; k < len(rs); k++ {
		a := c.index["-"+string(rs[k])]
		if a == nil {
			return false
		}
		if a.consumesArgument() {
			return true
		}
	}
	return true
}

func (c *compiled) checkMutex(a *argSpec, groupUsed []*argSpec) *parseError {
	if a.group == nil || !a.group.Mutex {
		return nil
	}
	prev := groupUsed[a.group.index]
	if prev == nil {
		groupUsed[a.group.index] = a
	} else if prev != a {
		return argError(a, "not allowed with argument "+prev.textualName())
	}
	return nil
}

// run performs an argument's action with an already converted value.
func (c *compiled) run(ns *Namespace, a *argSpec, value any) {
	if a.help {
		panic(helpRequested{})
	}
	ns.counts[a.Dest]++
	if a.Type == TypeFlag {
		ns.values[a.Dest] = true
		return
	}
	ns.values[a.Dest] = value
}

func (c *compiled) convert(a *argSpec, s string) (any, *parseError) {
	var v any
	var err error
	switch a.Type {
	case TypeString:
		return s, nil
	case TypeLong:
		v, err = ParseJavaLong(s)
	case TypeInteger:
		v, err = ParseJavaInt(s)
	case TypeDouble:
		v, err = ParseJavaDouble(s)
	}
	if err != nil {
		return nil, argError(a, fmt.Sprintf("could not convert '%s' to %s (%s)", s, a.Type.javaName(), err.Error()))
	}
	return v, nil
}

func (c *compiled) processArg(ns *Namespace, st *parseState, a *argSpec, embedded *string) *parseError {
	if !a.consumesArgument() {
		if embedded != nil {
			return argError(a, "ignore implicit argument '"+*embedded+"'")
		}
		c.run(ns, a, nil)
		return nil
	}
	if a.minArgs == -1 || (a.minArgs == 0 && a.maxArgs == 1) {
		var val *string
		if embedded != nil {
			val = embedded
		} else if st.i < len(st.args) && !st.flagFound() {
			val = &st.args[st.i]
			st.i++
		}
		if val == nil {
			if a.minArgs == -1 {
				return argError(a, "expected one argument")
			}
			c.run(ns, a, a.Const)
			return nil
		}
		v, err := c.convert(a, *val)
		if err != nil {
			return err
		}
		c.run(ns, a, v)
		return nil
	}
	list := []any{}
	if embedded == nil {
		for k := 0; k < a.maxArgs && st.i < len(st.args); k, st.i = k+1, st.i+1 {
			if st.flagFound() {
				break
			}
			v, err := c.convert(a, st.args[st.i])
			if err != nil {
				return err
			}
			list = append(list, v)
		}
	} else {
		v, err := c.convert(a, *embedded)
		if err != nil {
			return err
		}
		list = append(list, v)
	}
	if len(list) < a.minArgs {
		return argError(a, fmt.Sprintf("expected %d argument(s)", a.minArgs))
	}
	c.run(ns, a, list)
	return nil
}

// javaToString renders a default value as Java's toString would.
func javaToString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return javafmt.DoubleToString(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = javaToString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	}
	return fmt.Sprint(v)
}
