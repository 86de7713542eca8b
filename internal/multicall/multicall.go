// Package multicall is the perfclones binary: every tool in one static
// file, chosen by the name it is called by (as busybox is), or named as
// its first argument. Its own commands (run --result, install) are parsed
// with pflag; a tool's arguments are never seen by pflag, so the
// originals' parsers and errors stay intact.
package multicall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/result"
)

// Name is the multi-call binary's own name.
const Name = "perfclones"

// Version is the build's version (git describe), set by scripts/build with
// -ldflags '-X github.com/perfclones/perfclones/internal/multicall.Version=...'.
var Version = "dev"

// Set is the tools one binary holds, in the order perfclones lists them.
type Set []cli.Tool

// Find returns the tool that answers to name (a base name: a path's
// directory is ignored), or false.
func (s Set) Find(name string) (cli.Tool, bool) {
	name = filepath.Base(name)
	for _, t := range s {
		if t.Name == name || slices.Contains(t.Aliases, name) {
			return t, true
		}
	}
	return cli.Tool{}, false
}

// Command returns the tool a process with these arguments (os.Args) runs,
// and the arguments for its Main. The tool is the one argv[0] names (a
// link or a copy), or the one named after perfclones or after
// perfclones run --result FILE --, so that it runs with its own signal
// settings however it was called (perfclones redis-benchmark still dies by
// SIGINT, as redis-benchmark does). Anything else is perfclones itself.
func (s Set) Command(argv []string) (cli.Tool, []string) {
	var argv0 string
	var args []string
	if len(argv) > 0 {
		argv0, args = argv[0], argv[1:]
	}
	if t, ok := s.Find(argv0); ok {
		return t, args
	}
	if len(args) > 0 {
		if t, ok := s.Find(args[0]); ok {
			return t, args[1:]
		}
		if args[0] == "run" {
			if rc, err := s.parseRun(args[1:], io.Discard); err == nil {
				return rc.tool(), rc.args
			}
		}
	}
	return s.self(), args
}

// Tool is perfclones itself as a cli.Tool, or the tool argv0 names.
func (s Set) Tool(argv0 string) cli.Tool {
	if t, ok := s.Find(argv0); ok {
		return t
	}
	return s.self()
}

func (s Set) self() cli.Tool {
	return cli.Tool{Name: Name, About: "every perfclones tool in one binary", Main: s.Main}
}

// Main is perfclones called by its own name:
// perfclones [TOOL ARGS... | run --result FILE -- TOOL ARGS... | install DIR | version | help].
func (s Set) Main(ctx context.Context, args []string, sys cli.IO) int {
	if len(args) == 0 {
		s.list(sys.Stdout)
		return 0
	}
	switch args[0] {
	case "run":
		rc, err := s.parseRun(args[1:], sys.Stderr)
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		if err != nil {
			return 2
		}
		return rc.tool().Main(ctx, rc.args, sys)
	case "install":
		return s.install(args[1:], sys)
	case "version", "--version":
		fmt.Fprintf(sys.Stdout, "%s %s\n", Name, Version)
		return 0
	case "help", "-h", "--help":
		s.list(sys.Stdout)
		return 0
	}
	t, ok := s.Find(args[0])
	if !ok {
		fmt.Fprintf(sys.Stderr, "%s: unknown tool %q (run %s with no arguments for the list)\n", Name, args[0], Name)
		return 2
	}
	return t.Main(ctx, args[1:], sys)
}

func (s Set) list(w io.Writer) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s TOOL [ARGS...]\n", Name)
	fmt.Fprintf(&b, "       %s run --result FILE -- TOOL [ARGS...]\n", Name)
	fmt.Fprintf(&b, "       %s install [--binary FILE] DIR\n", Name)
	fmt.Fprintf(&b, "       TOOL [ARGS...]   (with %s linked or copied under the tool's name)\n\n", Name)
	b.WriteString("Tools:\n")
	width := 0
	for _, t := range s {
		width = max(width, len(t.Name))
	}
	for _, t := range s {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, t.Name, t.About)
		if len(t.Aliases) > 0 {
			fmt.Fprintf(&b, "  %-*s  also: %s\n", width, "", strings.Join(t.Aliases, ", "))
		}
	}
	fmt.Fprintf(&b, "\nSet %s=FILE (or use run --result FILE) to get a JSON result file; set\n", result.Env)
	b.WriteString("PERFCLONES_<TOOL>_VERSION to emulate another release of an original.\n")
	fmt.Fprintf(&b, "install writes the vendors' layout into DIR (DIR/bin/TOOL, DIR/kafka/bin/...).\n")
	_, _ = io.WriteString(w, b.String())
}

// runCommand is a parsed perfclones run --result FILE -- TOOL ARGS...
type runCommand struct {
	target     cli.Tool
	resultFile string
	args       []string
}

// parseRun parses the arguments after "run", writing errors and help to
// stderr (pflag.ErrHelp after help).
func (s Set) parseRun(args []string, stderr io.Writer) (runCommand, error) {
	fs := pflag.NewFlagSet(Name+" run", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	var out bytes.Buffer
	fs.SetOutput(&out)
	resultFile := fs.String("result", "", "write the JSON result file `FILE` when the run ends")
	fs.Usage = func() {
		fmt.Fprintf(&out, "Usage: %s run --result FILE -- TOOL [ARGS...]\n%s", Name, fs.FlagUsages())
	}
	defer func() { _, _ = stderr.Write(out.Bytes()) }()
	if err := fs.Parse(args); err != nil {
		if !errors.Is(err, pflag.ErrHelp) {
			// pflag prints nothing itself when it continues on errors.
			fmt.Fprintf(&out, "%s run: %v\n", Name, err)
			fs.Usage()
		}
		return runCommand{}, err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fs.Usage()
		return runCommand{}, errors.New("no tool")
	}
	t, ok := s.Find(rest[0])
	if !ok {
		fmt.Fprintf(&out, "%s: unknown tool %q\n", Name, rest[0])
		return runCommand{}, errors.New("unknown tool")
	}
	return runCommand{target: t, resultFile: *resultFile, args: rest[1:]}, nil
}

// tool is the target tool running as it would with PERFCLONES_RESULT=FILE
// in its environment.
func (rc runCommand) tool() cli.Tool {
	t := rc.target
	if rc.resultFile == "" {
		return t
	}
	inner, path := t.Main, rc.resultFile
	t.Main = func(ctx context.Context, args []string, sys cli.IO) int {
		parent := sys.Getenv
		sys.Getenv = func(k string) string {
			if k == result.Env {
				return path
			}
			return parent(k)
		}
		return inner(ctx, args, sys)
	}
	return t
}
