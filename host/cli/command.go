package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Command is one zkhost subcommand: how it is called, its line in `zkhost
// help`, its usage, and what runs it. cmd/zkhost lists every command, the ones
// defined here and its own, in one Registry.
type Command struct {
	// Name is what follows "zkhost": one word, or two for a command of a group
	// ("key convert").
	Name string
	// Summary is the command's one line in `zkhost help`.
	Summary string
	// Usage is the synopsis after "zkhost " ("wait [flags] JOB"): `zkhost help`
	// lists it, and --help and a usage error print it above the flags.
	Usage string
	// Run runs the command.
	Run func(ctx context.Context, inv Invocation) error
}

// Invocation is one run of a command: the command, the arguments that follow
// its name, and where its results (Stdout) and its progress, notices and usage
// (Stderr) go.
type Invocation struct {
	Command        Command
	Args           []string
	Stdout, Stderr io.Writer
}

// FlagSet returns the flag set of the invoked command: its --help prints the
// command's usage, description (when not empty) and flags, on Stderr.
func (inv Invocation) FlagSet(description string) *flag.FlagSet {
	return newFlagSet(inv.Command.Name, inv.Command.Usage, description, inv.Stderr)
}

// Registry is a program's table of commands, the only one: the dispatcher
// finds commands in it and `zkhost help` lists it.
type Registry struct {
	commands []Command
	byName   map[string]Command
}

// NewRegistry returns the registry of cmds. A command without a name, summary,
// usage or Run, or two commands of one name, is a programming error: it panics,
// so any test of the program catches it.
func NewRegistry(cmds ...Command) *Registry {
	r := &Registry{byName: map[string]Command{}}
	for _, c := range cmds {
		if c.Name == "" || c.Summary == "" || c.Usage == "" || c.Run == nil {
			panic(fmt.Sprintf("cli: command %q lacks a name, summary, usage or Run", c.Name))
		}
		if !strings.HasPrefix(c.Usage, c.Name) {
			panic(fmt.Sprintf("cli: the usage of command %q does not start with its name: %q", c.Name, c.Usage))
		}
		if _, dup := r.byName[c.Name]; dup {
			panic(fmt.Sprintf("cli: command %q registered twice", c.Name))
		}
		r.byName[c.Name] = c
		r.commands = append(r.commands, c)
	}
	sort.Slice(r.commands, func(i, j int) bool { return r.commands[i].Name < r.commands[j].Name })
	return r
}

// Commands returns the commands, sorted by name.
func (r *Registry) Commands() []Command { return append([]Command(nil), r.commands...) }

// Find returns the command args start with and the arguments that follow its
// name. A two-word name wins over one word ("key convert" reads as one
// command). name is what args name when no command matches.
func (r *Registry) Find(args []string) (cmd Command, rest []string, name string, ok bool) {
	if len(args) == 0 {
		return Command{}, nil, "", false
	}
	if len(args) > 1 {
		if c, ok := r.byName[args[0]+" "+args[1]]; ok {
			return c, args[2:], c.Name, true
		}
	}
	c, ok := r.byName[args[0]]
	if !ok {
		return Command{}, nil, args[0], false
	}
	return c, args[1:], c.Name, true
}

// Help writes the list of commands: each name with its summary, and its usage
// on the next line.
func (r *Registry) Help(w io.Writer) {
	width := 0
	for _, c := range r.commands {
		width = max(width, len(c.Name))
	}
	for _, c := range r.commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name, c.Summary)
		fmt.Fprintf(w, "  %-*s  zkhost %s\n", width, "", c.Usage)
	}
}
