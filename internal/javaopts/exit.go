package javaopts

import "github.com/perfclones/perfclones/internal/cli"

// Exit is how a command line ends without a usable result: the text the
// original prints on each stream and the code it exits with. It is the one
// ending type of every tool (cli.Exit); the parsers return it as their
// error and cli.Finish writes it.
type Exit = cli.Exit
