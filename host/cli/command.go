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

// Group is a word that starts several commands ("key" for "key convert" and "key
// import"): `zkhost key` and `zkhost help key` list its commands.
type Group struct {
	// Name is the group's word.
	Name string
	// Summary is the group's one line in `zkhost help`.
	Summary string
}

// Invocation is one run of a command: the command, the arguments that follow
// its name, and where its results and its help (Stdout) and its progress and
// notices (Stderr) go.
type Invocation struct {
	Command        Command
	Args           []string
	Stdout, Stderr io.Writer
}

// FlagSet returns the flag set of the invoked command: its --help prints the
// command's usage, description (when not empty) and flags on Stdout, as help asked
// for is the command's output. A bad flag prints nothing: the caller reports the
// error first, then the synopsis (see ShortUsage).
func (inv Invocation) FlagSet(description string) *flag.FlagSet {
	return newFlagSet(inv.Command.Name, inv.Command.Usage, description, inv.Stdout)
}

// ShortUsage is what follows a usage error on stderr: the synopsis and where the
// whole help is, in two lines, as go and kubectl do it.
func (c Command) ShortUsage() string {
	return fmt.Sprintf("Usage: zkhost %s\nRun 'zkhost help %s' for details.\n", c.Usage, c.Name)
}

// Registry is a program's table of commands, the only one: the dispatcher
// finds commands in it and `zkhost help` lists it.
type Registry struct {
	commands []Command
	byName   map[string]Command
	groups   map[string]Group
}

// NewRegistry returns the registry of groups and cmds. A command without a name,
// summary, usage or Run, two commands of one name, a two-word command whose first
// word is not a group, a group that is also a command or a group without commands
// is a programming error: it panics, so any test of the program catches it.
func NewRegistry(groups []Group, cmds ...Command) *Registry {
	r := &Registry{byName: map[string]Command{}, groups: map[string]Group{}}
	for _, g := range groups {
		if g.Name == "" || g.Summary == "" || strings.Contains(g.Name, " ") {
			panic(fmt.Sprintf("cli: group %q lacks a one-word name or a summary", g.Name))
		}
		r.groups[g.Name] = g
	}
	members := map[string]int{}
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
		if _, isGroup := r.groups[c.Name]; isGroup {
			panic(fmt.Sprintf("cli: command %q is also a group", c.Name))
		}
		if g, _, two := strings.Cut(c.Name, " "); two {
			if _, ok := r.groups[g]; !ok {
				panic(fmt.Sprintf("cli: command %q is in no registered group %q", c.Name, g))
			}
			members[g]++
		}
		r.byName[c.Name] = c
		r.commands = append(r.commands, c)
	}
	for name := range r.groups {
		if members[name] == 0 {
			panic(fmt.Sprintf("cli: group %q has no commands", name))
		}
	}
	sort.Slice(r.commands, func(i, j int) bool { return r.commands[i].Name < r.commands[j].Name })
	return r
}

// Commands returns the commands, sorted by name.
func (r *Registry) Commands() []Command { return append([]Command(nil), r.commands...) }

// Group returns the group named name.
func (r *Registry) Group(name string) (Group, bool) {
	g, ok := r.groups[name]
	return g, ok
}

// Find returns the command args start with and the arguments that follow its
// name. A two-word name wins over one word ("key convert" reads as one
// command). name is what args name when no command matches: a group's word
// alone when args start with a group and no command of it.
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

// Help writes the list of commands, a group standing for its commands on one
// line: each name with its summary.
func (r *Registry) Help(w io.Writer) {
	type line struct{ name, summary string }
	var lines []line
	seen := map[string]bool{}
	for _, c := range r.commands {
		if g, _, two := strings.Cut(c.Name, " "); two {
			if !seen[g] {
				seen[g] = true
				lines = append(lines, line{g, r.groups[g].Summary})
			}
			continue
		}
		lines = append(lines, line{c.Name, c.Summary})
	}
	writeLines(w, lines, func(l line) (string, string) { return l.name, l.summary })
}

// GroupHelp writes group's commands, each name with its summary and its usage.
func (r *Registry) GroupHelp(w io.Writer, group string) {
	var cmds []Command
	for _, c := range r.commands {
		if strings.HasPrefix(c.Name, group+" ") {
			cmds = append(cmds, c)
		}
	}
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.Name))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name, c.Summary)
		fmt.Fprintf(w, "  %-*s  zkhost %s\n", width, "", c.Usage)
	}
}

// GroupCommands returns the names of group's commands, sorted.
func (r *Registry) GroupCommands(group string) []string {
	var names []string
	for _, c := range r.commands {
		if strings.HasPrefix(c.Name, group+" ") {
			names = append(names, c.Name)
		}
	}
	return names
}

func writeLines[T any](w io.Writer, items []T, cols func(T) (string, string)) {
	width := 0
	for _, it := range items {
		a, _ := cols(it)
		width = max(width, len(a))
	}
	for _, it := range items {
		a, b := cols(it)
		fmt.Fprintf(w, "  %-*s  %s\n", width, a, b)
	}
}
