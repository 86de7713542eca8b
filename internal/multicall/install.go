package multicall

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfclones/perfclones/internal/cli"
)

// Kind is what an installed name is.
type Kind int

const (
	// Link is a relative symbolic link to the perfclones binary at the top
	// of the tree; the binary picks the tool by the link's base name.
	Link Kind = iota
	// Script is a small sh script that runs the binary.
	Script
	// Files is a directory of files a tool ships.
	Files
)

// Planned is one entry of the tree perfclones install writes.
type Planned struct {
	Path   string // slash-separated, relative to the top of the tree
	Kind   Kind
	Target string // Link: the link's target, relative to its directory
	Text   string // Script: the whole script
	Files  fs.FS  // Files: the tree to write under Path
	Tool   string // the tool's Name
}

// scriptMark is the second line of every script install writes; a file
// that has it is ours to replace, any other is left alone.
const scriptMark = "# Written by perfclones install: "

// Layout is every entry of the tree, in order: bin/<Name> for each tool,
// then each tool's declared Layout entries. It fails when an entry cannot
// work: a path outside the tree or used twice, or a link whose base name
// would start another tool (or none).
func (s Set) Layout() ([]Planned, error) {
	var out []Planned
	seen := map[string]string{Name: "the binary"}
	add := func(t cli.Tool, e cli.Entry) error {
		p := e.Path
		if p == "" || path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
			return fmt.Errorf("%s: layout path %q is not a clean relative path", t.Name, p)
		}
		if prev, dup := seen[p]; dup {
			return fmt.Errorf("%s: layout path %q is also %s", t.Name, p, prev)
		}
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if prev, clash := seen[dir]; clash && !strings.HasPrefix(prev, "directory") {
				return fmt.Errorf("%s: layout path %q is inside %s's %q", t.Name, p, prev, dir)
			}
			seen[dir] = "directory"
		}
		seen[p] = t.Name
		up := strings.Repeat("../", strings.Count(p, "/"))
		pl := Planned{Path: p, Tool: t.Name}
		switch {
		case e.Files != nil:
			pl.Kind, pl.Files = Files, e.Files
		case e.Script:
			pl.Kind, pl.Text = Script, script(t.Name, path.Base(p), up+Name, e.Args, e.Background)
		default:
			if found, ok := s.Find(path.Base(p)); !ok || found.Name != t.Name {
				return fmt.Errorf("%s: a link named %q would not start %s (make it a Script, or add the name to Aliases)", t.Name, path.Base(p), t.Name)
			}
			pl.Kind, pl.Target = Link, up+Name
		}
		out = append(out, pl)
		return nil
	}
	for _, t := range s {
		if err := add(t, cli.Entry{Path: "bin/" + t.Name}); err != nil {
			return nil, err
		}
	}
	for _, t := range s {
		for _, e := range t.Layout {
			if err := add(t, e); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// script is an sh script named name that runs binary (a path relative to
// the script's directory) as tool with args and then its own arguments.
func script(tool, name, binary string, args []string, background bool) string {
	cmd := []string{`"$(dirname "$0")/` + binary + `"`, shQuote(tool)}
	for _, a := range args {
		cmd = append(cmd, shQuote(a))
	}
	cmd = append(cmd, `"$@"`)
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	fmt.Fprintf(&b, "%s%s runs perfclones' %s.\n", scriptMark, name, tool)
	if background {
		// As the vendor's script: the tool runs on with the terminal's
		// output, and the script returns at once.
		fmt.Fprintf(&b, "%s &\n", strings.Join(cmd, " "))
	} else {
		fmt.Fprintf(&b, "exec %s\n", strings.Join(cmd, " "))
	}
	return b.String()
}

// shQuote quotes s for sh unless it needs no quoting.
func shQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,/:=+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// install is perfclones install [--binary FILE] DIR: the binary as
// DIR/perfclones (FILE, or this executable) and every name of Layout
// around it. Names it wrote before are replaced; a file it did not write
// is left alone and reported, so installing over a real vendor tree
// changes nothing of it.
func (s Set) install(args []string, sys cli.IO) int {
	fs := pflag.NewFlagSet(Name+" install", pflag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	binary := fs.String("binary", "", "install `FILE` as DIR/perfclones instead of this executable (a build for another architecture)")
	fs.Usage = func() {
		fmt.Fprintf(&out, "Usage: %s install [--binary FILE] DIR\n\n"+
			"Writes DIR/%s and, around it, the names the vendors' distributions use:\n"+
			"DIR/bin/TOOL for every tool, and paths such as DIR/kafka/bin/kafka-producer-perf-test.sh,\n"+
			"so command lines written for those distributions run unchanged.\n\n%s", Name, Name, fs.FlagUsages())
	}
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(&out, "%s install: %v\n", Name, err)
		fs.Usage()
	}
	if err == nil && fs.NArg() != 1 {
		fs.Usage()
		err = errors.New("one DIR")
	}
	if errors.Is(err, pflag.ErrHelp) {
		_, _ = sys.Stdout.Write(out.Bytes())
		return 0
	}
	_, _ = sys.Stderr.Write(out.Bytes())
	if err != nil {
		return 2
	}
	if err := s.installInto(fs.Arg(0), *binary); err != nil {
		fmt.Fprintf(sys.Stderr, "%s install: %v\n", Name, err)
		return 1
	}
	return 0
}

func (s Set) installInto(dir, binary string) error {
	plan, err := s.Layout()
	if err != nil {
		return err
	}
	if binary == "" {
		if binary, err = os.Executable(); err != nil {
			return err
		}
	}
	if _, err := os.Stat(binary); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := installBinary(binary, filepath.Join(dir, Name)); err != nil {
		return err
	}
	for _, p := range plan {
		dst := filepath.Join(dir, filepath.FromSlash(p.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		switch p.Kind {
		case Link:
			err = replaceLink(dst, p.Target)
		case Script:
			err = replaceScript(dst, p.Text)
		case Files:
			err = writeTree(dst, p.Files)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// installBinary copies src to dst (through a temporary file and a rename,
// so a running copy is not disturbed), unless dst already is src.
func installBinary(src, dst string) error {
	si, err := os.Stat(src)
	if err != nil {
		return err
	}
	if di, err := os.Stat(dst); err == nil && os.SameFile(si, di) {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+Name+"-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o755)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// ours reports whether the file at dst may be replaced: nothing is there,
// or a link, or a script install wrote.
func ours(dst string) (bool, error) {
	fi, err := os.Lstat(dst)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return true, nil
	}
	if !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return false, nil
	}
	text, err := os.ReadFile(dst)
	if err != nil {
		return false, err
	}
	lines := strings.SplitN(string(text), "\n", 3)
	return len(lines) >= 2 && strings.HasPrefix(lines[1], scriptMark), nil
}

func notOurs(dst string) error {
	return fmt.Errorf("%s exists and was not written by %s install; not replacing it", dst, Name)
}

func replaceLink(dst, target string) error {
	if ok, err := ours(dst); err != nil || !ok {
		return errors.Join(err, notOurs(dst))
	}
	if cur, err := os.Readlink(dst); err == nil && cur == target {
		return nil
	}
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".perfclones-new")
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

func replaceScript(dst, text string) error {
	if ok, err := ours(dst); err != nil || !ok {
		return errors.Join(err, notOurs(dst))
	}
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".perfclones-new")
	if err := os.WriteFile(tmp, []byte(text), 0o755); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // WriteFile's mode is masked by umask
		return err
	}
	return os.Rename(tmp, dst)
}

// writeTree writes every file of tree under dst. A file that is already
// there is kept: users edit the examples a tool ships.
func writeTree(dst string, tree fs.FS) error {
	return fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if _, err := os.Lstat(target); err == nil {
			return nil
		}
		data, err := fs.ReadFile(tree, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
