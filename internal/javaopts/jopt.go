package javaopts

import (
	"sort"
	"strings"
)

// ArgKind says whether a jopt-simple option takes an argument.
type ArgKind int

// The three kinds of jopt-simple option.
const (
	NoArg       ArgKind = iota // accepts(...) alone: a switch
	RequiredArg                // withRequiredArg(): the next token, whatever it is
	OptionalArg                // withOptionalArg(): the next token if it converts
)

// JoptOption declares one option of a jopt-simple OptionParser, in the
// terms of the Java builder calls:
// parser.accepts(name, description).withRequiredArg().describedAs(ArgName)
// .ofType(Long.class).defaultsTo(...).
type JoptOption struct {
	// Names are the option's names without dashes; usually one long name.
	// jopt-simple lists one-letter names first, each group sorted.
	Names       []string
	Description string
	Arg         ArgKind
	// Type is the simple name of the ofType class: "String" (also for
	// none), "Long", "Integer", "Double". It drives the "<Long: ...>"
	// indicator, the conversions of OptionSet.Long and friends, and which
	// tokens an OptionalArg option accepts.
	Type    string
	ArgName string // describedAs
	// Defaults are the defaultsTo values as their Java toString, e.g.
	// {"5000"}.
	Defaults []string
	Required bool // required(): marked "* " in help, checked at parse
	// RequiredUnless lists options (by name) whose presence lifts the
	// requirement: requiredUnless("broker-list").
	RequiredUnless []string
	// RequiredIf lists options whose presence makes this one required.
	RequiredIf []string
	ForHelp    bool // forHelp(): its presence skips the required checks
	// Hidden leaves the option out of Help; it is still parsed. A clone
	// uses it for options that a newer release removed but that old
	// scripts still pass, so that the help matches the newest release.
	Hidden bool
}

// JoptParser emulates jopt-simple 5.0.4's OptionParser as Kafka builds it:
// new OptionParser(false), so option names must be given in full.
// Option-looking tokens are "--name", "--name=value", and also "-name" when
// name is a declared option; "--" ends the options; every other token is a
// non-option argument, which the Kafka tools ignore.
type JoptParser struct {
	Options []JoptOption
}

// JoptError is an OptionException: Msg is its getMessage().
type JoptError struct{ Msg string }

func (e *JoptError) Error() string { return e.Msg }

type joptSpec struct {
	JoptOption
	order int
}

// display is the option's names joined with "/", as in error messages.
func (s *joptSpec) display() string { return strings.Join(s.Names, "/") }

func (s *joptSpec) typeName() string {
	if s.Type == "" {
		return "String"
	}
	return s.Type
}

func (s *joptSpec) isNumber() bool {
	switch s.typeName() {
	case "Long", "Integer", "Double", "Float", "Short", "Byte":
		return true
	}
	return false
}

// convert is the ofType conversion, with the OptionException jopt-simple
// throws when a value is read.
func (s *joptSpec) convert(v string) (any, error) {
	var out any
	var err error
	switch s.typeName() {
	case "Long":
		out, err = ParseJavaLong(v)
	case "Integer":
		out, err = ParseJavaInt(v)
	case "Double":
		out, err = ParseJavaDouble(v)
	default:
		return v, nil
	}
	if err != nil {
		return nil, &JoptError{Msg: "Cannot parse argument '" + v + "' of option " + s.display()}
	}
	return out, nil
}

func (p *JoptParser) specs() (map[string]*joptSpec, []*joptSpec) {
	byName := map[string]*joptSpec{}
	var all []*joptSpec
	for i, o := range p.Options {
		s := &joptSpec{JoptOption: o, order: i}
		var short, long []string
		for _, n := range o.Names {
			if len([]rune(n)) == 1 {
				short = append(short, n)
			} else {
				long = append(long, n)
			}
		}
		if len(o.Names) > 1 {
			sort.Strings(short)
			sort.Strings(long)
			s.Names = append(short, long...)
		}
		for _, n := range s.Names {
			byName[n] = s
		}
		all = append(all, s)
	}
	return byName, all
}

// OptionSet is what JoptParser.Parse detected. Values are kept as the raw
// strings and converted when read, as jopt-simple does, so a bad number
// or a repeated single-value option is only an error when its value is
// asked for.
type OptionSet struct {
	byName     map[string]*joptSpec
	seen       map[*joptSpec]bool
	args       map[*joptSpec][]string
	nonOptions []string
}

// Parse scans args. It fails, with the message of the OptionException, on
// an unknown option ("new-consumer is not a recognized option"), a
// RequiredArg option at the end of the line ("Option topic requires an
// argument"), and, after the scan, on missing required options ("Missing
// required option(s) [bootstrap-server]") unless a ForHelp option is
// present.
func (p *JoptParser) Parse(args []string) (*OptionSet, error) {
	byName, all := p.specs()
	set := &OptionSet{byName: byName, seen: map[*joptSpec]bool{}, args: map[*joptSpec][]string{}}
	moreOptions := true
	for i := 0; i < len(args); {
		tok := args[i]
		i++
		if !moreOptions {
			set.nonOptions = append(set.nonOptions, tok)
			continue
		}
		switch {
		case tok == "--":
			moreOptions = false
		case strings.HasPrefix(tok, "--"):
			name, value, hasValue := strings.Cut(tok[2:], "=")
			s := byName[name]
			if s == nil {
				return nil, &JoptError{Msg: name + " is not a recognized option"}
			}
			var err error
			if i, err = set.handle(s, args, i, value, hasValue); err != nil {
				return nil, err
			}
		case strings.HasPrefix(tok, "-") && tok != "-":
			name, value, hasValue := strings.Cut(tok[1:], "=")
			if s := byName[name]; s != nil {
				var err error
				if i, err = set.handle(s, args, i, value, hasValue); err != nil {
					return nil, err
				}
				continue
			}
			// A cluster of one-letter options, "-abc" or "-fvalue".
			letters := []rune(tok[1:])
			for _, r := range letters {
				s := byName[string(r)]
				if s == nil {
					return nil, &JoptError{Msg: string(r) + " is not a recognized option"}
				}
				if s.Arg != NoArg {
					break
				}
			}
			for k, r := range letters {
				s := byName[string(r)]
				if s.Arg != NoArg && k+1 < len(letters) {
					set.add(s, string(letters[k+1:]), true)
					break
				}
				var err error
				if i, err = set.handle(s, args, i, "", false); err != nil {
					return nil, err
				}
			}
		default:
			set.nonOptions = append(set.nonOptions, tok)
		}
	}
	if err := p.checkRequired(set, all); err != nil {
		return nil, err
	}
	return set, nil
}

// add records an occurrence, with its argument when withArg.
func (set *OptionSet) add(s *joptSpec, arg string, withArg bool) {
	set.seen[s] = true
	if withArg {
		set.args[s] = append(set.args[s], arg)
	} else if set.args[s] == nil {
		set.args[s] = []string{}
	}
}

// handle processes one occurrence of s; i indexes the next token.
func (set *OptionSet) handle(s *joptSpec, args []string, i int, value string, hasValue bool) (int, error) {
	if s.Arg == NoArg {
		set.add(s, "", false) // an "=value" on a switch is dropped
		return i, nil
	}
	if hasValue {
		set.add(s, value, true)
		return i, nil
	}
	switch s.Arg {
	case RequiredArg:
		if i >= len(args) {
			return i, &JoptError{Msg: "Option " + s.display() + " requires an argument"}
		}
		set.add(s, args[i], true)
		return i + 1, nil
	default: // OptionalArg
		if i < len(args) {
			next := args[i]
			// canConvertArgument: an empty token has nothing to convert.
			_, convErr := s.convert(next)
			converts := next == "" || convErr == nil
			looksLikeOption := strings.HasPrefix(next, "-") && next != "-"
			if converts && (!looksLikeOption || s.isNumber()) {
				set.add(s, next, true)
				return i + 1, nil
			}
		}
		set.add(s, "", false)
		return i, nil
	}
}

// checkRequired is ensureRequiredOptions: required options, then
// requiredIf and requiredUnless, each listed once.
func (p *JoptParser) checkRequired(set *OptionSet, all []*joptSpec) error {
	for _, s := range all {
		if s.ForHelp && set.seen[s] {
			return nil
		}
	}
	anySeen := func(names []string) bool {
		for _, n := range names {
			if o := set.byName[n]; o != nil && set.seen[o] {
				return true
			}
		}
		return false
	}
	var missing []string
	add := func(s *joptSpec) {
		d := s.display()
		for _, m := range missing {
			if m == d {
				return
			}
		}
		missing = append(missing, d)
	}
	for _, s := range javaHashOrder(all) {
		if s.Required && !set.seen[s] {
			add(s)
		}
	}
	for _, s := range all {
		if len(s.RequiredIf) > 0 && anySeen(s.RequiredIf) && !set.seen[s] {
			add(s)
		}
	}
	for _, s := range all {
		if len(s.RequiredUnless) > 0 && !anySeen(s.RequiredUnless) && !set.seen[s] {
			add(s)
		}
	}
	if len(missing) > 0 {
		return &JoptError{Msg: "Missing required option(s) [" + strings.Join(missing, ", ") + "]"}
	}
	return nil
}

// javaHashOrder orders the specs as jopt-simple meets them when it walks
// its HashMap of option names (a copy made with new HashMap<>(map)), each
// spec once per name, so that "Missing required option(s) [...]" lists
// several options in the Java order.
func javaHashOrder(all []*joptSpec) []*joptSpec {
	type entry struct {
		name string
		spec *joptSpec
		hash int32
	}
	var entries []entry
	for _, s := range all {
		for _, n := range s.Names {
			entries = append(entries, entry{n, s, javaStringHash(n)})
		}
	}
	// Table size of new HashMap<>(m): tableSizeFor(size/0.75 + 1); the map
	// also holds the non-option arguments' spec under "[arguments]".
	want := int(float64(len(entries)+1)/0.75 + 1)
	n := 1
	for n < want {
		n <<= 1
	}
	bucket := func(h int32) int {
		u := uint32(h)
		return int((u ^ (u >> 16)) & uint32(n-1))
	}
	sort.SliceStable(entries, func(i, j int) bool { return bucket(entries[i].hash) < bucket(entries[j].hash) })
	out := make([]*joptSpec, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.spec)
	}
	return out
}

// javaStringHash is String.hashCode.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16Units(s) {
		h = 31*h + int32(u)
	}
	return h
}

// Has reports whether the option appeared (OptionSet.has).
func (set *OptionSet) Has(name string) bool {
	s := set.byName[name]
	return s != nil && set.seen[s]
}

// HasArgument reports whether the option appeared with an argument.
func (set *OptionSet) HasArgument(name string) bool {
	s := set.byName[name]
	return s != nil && len(set.args[s]) > 0
}

// Values returns the option's raw arguments, or its defaults when it has
// none (valuesOf without the conversion).
func (set *OptionSet) Values(name string) []string {
	s := set.byName[name]
	if s == nil {
		return nil
	}
	if v := set.args[s]; len(v) > 0 {
		return append([]string(nil), v...)
	}
	return append([]string(nil), s.Defaults...)
}

// value is valueOf: every argument converted (the first failure is
// returned), then more than one is an error.
func (set *OptionSet) value(name string) (any, bool, error) {
	s := set.byName[name]
	if s == nil {
		return nil, false, nil
	}
	raw := set.Values(name)
	var vals []any
	for _, r := range raw {
		v, err := s.convert(r)
		if err != nil {
			return nil, false, err
		}
		vals = append(vals, v)
	}
	switch len(vals) {
	case 0:
		return nil, false, nil
	case 1:
		return vals[0], true, nil
	}
	return nil, false, &JoptError{Msg: "Found multiple arguments for option " + s.display() + ", but you asked for only one"}
}

// String is valueOf for a String option: the value (or default), whether
// there is one, and the error jopt-simple throws for several values.
func (set *OptionSet) String(name string) (string, bool, error) {
	v, ok, err := set.value(name)
	if !ok {
		return "", false, err
	}
	return v.(string), true, nil
}

// Long is valueOf for a Long option; a bad value gives
// "Cannot parse argument 'abc' of option messages".
func (set *OptionSet) Long(name string) (int64, bool, error) {
	v, ok, err := set.value(name)
	if !ok {
		return 0, false, err
	}
	switch x := v.(type) {
	case int64:
		return x, true, nil
	case int32:
		return int64(x), true, nil
	}
	return 0, false, &JoptError{Msg: "option " + name + " is not of type Long"}
}

// Int is valueOf for an Integer option.
func (set *OptionSet) Int(name string) (int32, bool, error) {
	v, ok, err := set.value(name)
	if !ok {
		return 0, false, err
	}
	if x, isInt := v.(int32); isInt {
		return x, true, nil
	}
	return 0, false, &JoptError{Msg: "option " + name + " is not of type Integer"}
}

// Double is valueOf for a Double option.
func (set *OptionSet) Double(name string) (float64, bool, error) {
	v, ok, err := set.value(name)
	if !ok {
		return 0, false, err
	}
	if x, isFloat := v.(float64); isFloat {
		return x, true, nil
	}
	return 0, false, &JoptError{Msg: "option " + name + " is not of type Double"}
}

// NonOptions are the tokens that were not options or their arguments.
func (set *OptionSet) NonOptions() []string { return append([]string(nil), set.nonOptions...) }
