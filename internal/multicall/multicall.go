// Package multicall is the perfclones binary: every tool in one static
// file, chosen by the name it is called by (as busybox is), or named as
// its first argument. Its own flags (run --result) are parsed with pflag;
// a tool's arguments are never seen by pflag, so the originals' parsers
// and errors stay intact.
package multicall

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfclones/perfclones/internal/cli"
	"github.com/perfclones/perfclones/internal/result"
)

// Name is the multi-call binary's own name.
const Name = "perfclones"

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

// Tool is perfclones itself as a cli.Tool: argv0 is the name the process
// was called by and decides which tool runs.
func (s Set) Tool(argv0 string) cli.Tool {
	if t, ok := s.Find(argv0); ok {
		return t
	}
	return cli.Tool{Name: Name, About: "every perfclones tool in one binary", Main: s.Main}
}

// Main is `perfclones [TOOL ARGS... | run --result FILE -- TOOL ARGS... | help]`.
func (s Set) Main(ctx context.Context, args []string, sys cli.IO) int {
	if len(args) == 0 {
		s.list(sys)
		return 0
	}
	switch args[0] {
	case "run":
		return s.run(ctx, args[1:], sys)
	case "help", "-h", "--help":
		s.list(sys)
		return 0
	}
	t, ok := s.Find(args[0])
	if !ok {
		fmt.Fprintf(sys.Stderr, "%s: unknown tool %q (run %s with no arguments for the list)\n", Name, args[0], Name)
		return 2
	}
	return t.Main(ctx, args[1:], sys)
}

func (s Set) list(sys cli.IO) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s TOOL [ARGS...]\n", Name)
	fmt.Fprintf(&b, "       %s run --result FILE -- TOOL [ARGS...]\n", Name)
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
	_, _ = sys.Stdout.Write([]byte(b.String()))
}

// run is `perfclones run --result FILE -- TOOL ARGS...`: the tool runs as
// it would with PERFCLONES_RESULT=FILE in its environment.
func (s Set) run(ctx context.Context, args []string, sys cli.IO) int {
	fs := pflag.NewFlagSet(Name+" run", pflag.ContinueOnError)
	fs.SetOutput(sys.Stderr)
	fs.SetInterspersed(false)
	resultFile := fs.String("result", "", "write the JSON result file `FILE` when the run ends")
	fs.Usage = func() {
		fmt.Fprintf(sys.Stderr, "Usage: %s run --result FILE -- TOOL [ARGS...]\n%s", Name, fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fs.Usage()
		return 2
	}
	t, ok := s.Find(rest[0])
	if !ok {
		fmt.Fprintf(sys.Stderr, "%s: unknown tool %q\n", Name, rest[0])
		return 2
	}
	if *resultFile != "" {
		parent := sys.Getenv
		path := *resultFile
		sys.Getenv = func(k string) string {
			if k == result.Env {
				return path
			}
			return parent(k)
		}
	}
	return t.Main(ctx, rest[1:], sys)
}
