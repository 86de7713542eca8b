package redisbench

import (
	"fmt"
	"math"
	"strings"
)

// Defaults of the C tool.
const (
	defaultHost      = "127.0.0.1"
	defaultPort      = 6379
	defaultClients   = 50
	defaultRequests  = 100000
	defaultDataSize  = 3
	defaultPrecision = 3
	maxPrecision     = 4
	maxThreads       = 500
	maxDataSize      = 1024 * 1024 * 1024
)

// Options is one redis-benchmark invocation, as the C tool's command line describes it.
type Options struct {
	Host      string // -h, server host name or address
	Port      int    // -p, server port
	Socket    string // -s, unix socket path; overrides Host and Port when given
	HasSocket bool   // -s was given, even as an empty path (which fails as in C)

	Password    string // -a, sent as AUTH [user] password on every connection
	HasPassword bool   // -a was given (an empty password still sends AUTH)
	User        string // --user, ACL user name, only used with -a

	Clients  int  // -c, parallel connections; the report prints the raw value even when 0
	Requests int  // -n, total requests per test
	DataSize int  // -d, SET/GET value size in bytes, clamped to 1..1 GiB
	DBNum    int  // --dbnum or the URI's /db, SELECTed once per connection when not 0
	RESP3    bool // -3, HELLO 3 once per connection

	Threads        int  // --threads, 0 means single event loop; clamped to 0..500
	Cluster        bool // --cluster
	EnableTracking bool // --enable-tracking, CLIENT TRACKING on once per connection

	KeepAlive int // -k, raw integer: 0 reconnects after every batch, anything else keeps alive

	RandomKeys  bool // -r was given: __rand_int__ is substituted
	KeyspaceLen int  // -r value, at least 0

	Pipeline  int  // -P, commands per batch, at least 1
	Quiet     bool // -q
	Precision int  // --precision, HDR significant figures 1..4
	CSV       bool // --csv
	Loop      bool // -l
	Tests     string
	HasTests  bool // -t was given; Tests is then ",list," lowercased
	Idle      bool // -I
	StdinLast bool // -x, the last command argument is read from stdin

	Seed    int64 // --seed
	HasSeed bool

	TLS TLSOptions

	// Command is the custom command (the first non-option argument and all after it).
	Command []string
}

// TLSOptions holds the --tls family of options.
type TLSOptions struct {
	Enabled      bool   // --tls, or a rediss:// URI
	SNI          string // --sni
	CACert       string // --cacert
	CACertDir    string // --cacertdir
	Insecure     bool   // --insecure
	Cert         string // --cert
	Key          string // --key
	Ciphers      string // --tls-ciphers (OpenSSL names, TLS 1.2 and below)
	CipherSuites string // --tls-ciphersuites (TLS 1.3 names)
}

// parseOutcome says what Main does after parsing.
type parseOutcome int

const (
	outcomeRun     parseOutcome = iota
	outcomeHelp                 // usage on stdout, exit 0
	outcomeVersion              // version on stdout, exit 0
	outcomeInvalid              // "Invalid option" and usage on stdout, exit 1
	outcomeFatal                // a message on stderr, exit 1
)

// parseResult is what parsing produced besides the options themselves.
type parseResult struct {
	outcome  parseOutcome
	badArg   string   // the argument named by "Invalid option"
	fatal    string   // the stderr line for outcomeFatal
	warnings []string // stderr lines printed while parsing, in order
}

func defaultOptions() Options {
	return Options{
		Host:      defaultHost,
		Port:      defaultPort,
		Clients:   defaultClients,
		Requests:  defaultRequests,
		DataSize:  defaultDataSize,
		KeepAlive: 1,
		Pipeline:  1,
		Precision: defaultPrecision,
	}
}

// parseOptions scans args the way redis-benchmark's hand-written parser does:
// exact string compares, no bundling, C atoi for numbers, the last occurrence
// wins, and the first argument not starting with '-' begins the custom command.
func parseOptions(args []string) (Options, parseResult) {
	o := defaultOptions()
	var res parseResult
	invalid := func(arg string) (Options, parseResult) {
		res.outcome = outcomeInvalid
		res.badArg = arg
		return o, res
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		last := i == len(args)-1
		// value returns the next argument for options that take one.
		value := func() (string, bool) {
			if last {
				return "", false
			}
			i++
			return args[i], true
		}
		var v string
		var ok bool
		switch arg {
		case "-v", "--version":
			res.outcome = outcomeVersion
			return o, res
		case "--help":
			res.outcome = outcomeHelp
			return o, res
		case "-c", "-n", "-k", "-h", "-p", "-s", "-a", "--user", "-d", "-P", "-r",
			"-t", "--dbnum", "--precision", "--threads", "--seed", "-u",
			"--sni", "--cacertdir", "--cacert", "--cert", "--key", "--tls-ciphers", "--tls-ciphersuites":
			if v, ok = value(); !ok {
				return invalid(arg)
			}
		}
		switch arg {
		case "-c":
			o.Clients = atoi(v)
		case "-n":
			o.Requests = atoi(v)
		case "-k":
			o.KeepAlive = atoi(v)
		case "-h":
			o.Host = v
		case "-p":
			o.Port = atoi(v)
			if o.Port < 0 || o.Port > 65535 {
				res.outcome, res.fatal = outcomeFatal, "Invalid server port."
				return o, res
			}
		case "-s":
			o.Socket, o.HasSocket = v, true
		case "-a":
			o.Password, o.HasPassword = v, true
		case "--user":
			o.User = v
		case "-u":
			if msg := applyURI(&o, v); msg != "" {
				res.outcome, res.fatal = outcomeFatal, msg
				return o, res
			}
		case "-d":
			o.DataSize = min(max(atoi(v), 1), maxDataSize)
		case "-P":
			o.Pipeline = max(atoi(v), 1)
		case "-r":
			// A negative value must be a number; "-x" here is taken as a misplaced option.
			if strings.HasPrefix(v, "-") && (len(v) < 2 || v[1] < '0' || v[1] > '9') {
				return invalid(v)
			}
			o.RandomKeys = true
			o.KeyspaceLen = max(atoi(v), 0)
		case "-q":
			o.Quiet = true
		case "--csv":
			o.CSV = true
		case "-l":
			o.Loop = true
		case "-I":
			o.Idle = true
		case "-x":
			o.StdinLast = true
		case "-3":
			o.RESP3 = true
		case "-e":
			res.warnings = append(res.warnings, "WARNING: -e option has no effect. We now immediately exit on error to avoid false results.")
		case "-t":
			o.Tests = "," + strings.ToLower(v) + ","
			o.HasTests = true
		case "--dbnum":
			o.DBNum = atoi(v)
		case "--precision":
			o.Precision = atoi(v)
			if o.Precision < 0 {
				o.Precision = defaultPrecision
			}
			if o.Precision > maxPrecision {
				o.Precision = maxPrecision
			}
			// The C tool crashes on 0 (HdrHistogram refuses 0 significant
			// figures); we take the lowest precision that works instead.
			if o.Precision == 0 {
				o.Precision = 1
			}
		case "--threads":
			o.Threads = atoi(v)
			if o.Threads > maxThreads {
				res.warnings = append(res.warnings, fmt.Sprintf("WARNING: Too many threads, limiting threads to %d.", maxThreads))
				o.Threads = maxThreads
			} else if o.Threads < 0 {
				o.Threads = 0
			}
		case "--cluster":
			o.Cluster = true
		case "--enable-tracking":
			o.EnableTracking = true
		case "--seed":
			o.Seed, o.HasSeed = int64(atoi(v)), true
		case "--tls":
			o.TLS.Enabled = true
		case "--insecure":
			o.TLS.Insecure = true
		case "--sni":
			o.TLS.SNI = v
		case "--cacert":
			o.TLS.CACert = v
		case "--cacertdir":
			o.TLS.CACertDir = v
		case "--cert":
			o.TLS.Cert = v
		case "--key":
			o.TLS.Key = v
		case "--tls-ciphers":
			o.TLS.Ciphers = v
		case "--tls-ciphersuites":
			o.TLS.CipherSuites = v
		default:
			if strings.HasPrefix(arg, "-") {
				return invalid(arg)
			}
			o.Command = append([]string(nil), args[i:]...)
			return o, res
		}
	}
	return o, res
}

// atoi is C's atoi: leading white space and one sign are accepted, digits are
// read up to the first non-digit, and anything unparsable gives 0. Overflow
// wraps like glibc's strtol-to-int conversion does on 64-bit Linux.
func atoi(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var n uint64
	overflow := false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n > (math.MaxUint64-9)/10 {
			overflow = true
		}
		n = n*10 + uint64(s[i]-'0')
	}
	var l int64
	switch {
	case !neg && (overflow || n > math.MaxInt64):
		l = math.MaxInt64 // strtol saturates at LONG_MAX
	case neg && (overflow || n > 1<<63):
		l = math.MinInt64
	case neg:
		l = -int64(n)
	default:
		l = int64(n)
	}
	return int(int32(l)) // atoi truncates strtol's long to int
}

// applyURI reads a redis:// or rediss:// URI into o the way redis-cli's common
// parser does. It returns the fatal stderr message, or "" when the URI is fine.
func applyURI(o *Options, uri string) string {
	const scheme, tlsScheme = "redis://", "rediss://"
	rest := uri
	switch {
	case len(rest) >= len(tlsScheme) && strings.EqualFold(rest[:len(tlsScheme)], tlsScheme):
		o.TLS.Enabled = true
		rest = rest[len(tlsScheme):]
	case len(rest) >= len(scheme) && strings.EqualFold(rest[:len(scheme)], scheme):
		rest = rest[len(scheme):]
	default:
		return "Invalid URI scheme"
	}
	if rest == "" {
		return ""
	}
	if at := strings.IndexByte(rest, '@'); at >= 0 {
		userinfo := rest[:at]
		if colon := strings.IndexByte(userinfo, ':'); colon >= 0 {
			user, msg := percentDecode(userinfo[:colon])
			if msg != "" {
				return msg
			}
			o.User = user
			userinfo = userinfo[colon+1:]
		}
		pw, msg := percentDecode(userinfo)
		if msg != "" {
			return msg
		}
		o.Password, o.HasPassword = pw, true
		rest = rest[at+1:]
	}
	if rest == "" {
		return ""
	}
	slash := strings.IndexByte(rest, '/')
	hostport := rest
	if slash >= 0 {
		hostport = rest[:slash]
	}
	if !strings.HasPrefix(rest, "/") {
		host := hostport
		if strings.HasPrefix(hostport, "[") {
			host = hostport[1:]
			if end := strings.IndexByte(host, ']'); end >= 0 {
				if strings.HasPrefix(host[end+1:], ":") {
					o.Port = atoi(host[end+2:])
				}
				host = host[:end]
			}
		} else if colon := strings.IndexByte(hostport, ':'); colon >= 0 {
			o.Port = atoi(hostport[colon+1:])
			host = hostport[:colon]
		}
		o.Host = host
	}
	if o.Port < 0 || o.Port > 65535 {
		return "Invalid server port."
	}
	if slash < 0 || slash == len(rest)-1 {
		return ""
	}
	o.DBNum = atoi(rest[slash+1:])
	return ""
}

// percentDecode undoes URI %XX escapes, with redis-cli's error messages.
func percentDecode(s string) (string, string) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		// The C check wants two characters after the '%' but counts the
		// '%' itself, so "%4" passes it and the byte after the part (the
		// ':' or '@' that ended it, never a hex digit) is read as the
		// second digit: "Illegal character", not "Incomplete". Kept, as a
		// script may match on either text.
		if len(s)-i < 2 {
			return "", "Incomplete URI encoding"
		}
		if len(s)-i == 2 {
			return "", "Illegal character in URI encoding"
		}
		h, okh := hexDigit(s[i+1])
		l, okl := hexDigit(s[i+2])
		if !okh || !okl {
			return "", "Illegal character in URI encoding"
		}
		b.WriteByte(h<<4 | l)
		i += 2
	}
	return b.String(), ""
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// testSelected reports whether the suite test with the given lowercase name
// runs: every test without -t, otherwise when ",name," occurs in the list.
func (o *Options) testSelected(name string) bool {
	return !o.HasTests || strings.Contains(o.Tests, ","+name+",")
}
