// Command zkhost is the zkhost proving host: key generation, witnesses, one-shot
// proving, and (see `zkhost help`) the daemon and its client commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/consensys/gnark/logger"

	"github.com/zkhost/zkhost/host/cli"
	"github.com/zkhost/zkhost/internal/version"
)

// commands is zkhost's one command table: every subcommand with its one-line
// summary and its usage, which `zkhost help` lists. The commands that talk to a
// running daemon are host/cli's.
var commands = cli.NewRegistry(
	[]cli.Group{{Name: "key", Summary: "bring gnark or circom/snarkjs keys into zkhost (key convert, key import)"}},
	cli.Command{Name: "serve", Summary: "run the proving daemon", Usage: "serve [--config FILE] [--print-default-config]", Run: cmdServe},
	cli.Submit, cli.Wait, cli.Status, cli.Jobs, cli.Job, cli.Cancel, cli.Preload, cli.Evict, cli.Enable,
	cli.Command{Name: "prove", Summary: "prove one job in this process (no daemon to run), verify it, write the proofs",
		Usage: "prove --keys KEYDIR --circuit NAME (--partitions N | [--assignment] FILE...) --out DIR", Run: cmdProve},
	cli.Command{Name: "verify", Summary: "verify proofs with gnark's groth16.Verify",
		Usage: "verify --keys KEYDIR --circuit NAME (PROOF PUBLIC | DIR)...", Run: cmdVerify},
	cli.Command{Name: "keygen", Summary: "compile an example circuit and write development Groth16 keys",
		Usage: "keygen --circuit NAME [--k K] [--d D] [--curve bn254] --out KEYDIR", Run: cmdKeygen},
	cli.Command{Name: "witness", Summary: "write valid example witnesses, one per partition",
		Usage: "witness --circuit NAME [--k K] [--d D] [--curve bn254] --partitions N --out DIR", Run: cmdWitness},
	cli.Command{Name: "key convert", Summary: "convert a gnark proving-key file to zkhost's key file format",
		Usage: "key convert --in GNARK_PK --out ZKHOST_PK", Run: cmdKeyConvert},
	cli.Command{Name: "key import", Summary: "import your own gnark circuit, or a circom .r1cs with its snarkjs .zkey, as a key set",
		Usage: "key import (--ccs FILE --pk FILE --vk FILE --name NAME [--assignments-only] | --r1cs FILE --zkey FILE [--name NAME]) --out KEYDIR [--witness FILE]", Run: cmdKeyImport},
	cli.Command{Name: "bench", Summary: "benchmark proving: proofs per minute, device busy %, phase p50/p99 (standalone or --api)",
		Usage: "bench --circuit chain --k K --jobs J --concurrency C [--partitions P] [--api ADDR | standalone flags] [FILE...]", Run: cmdBench},
	cli.Command{Name: "timeline", Summary: "render a timeline as a waterfall page",
		Usage: "timeline [FILE] [-o waterfall.html] [--last D] [--title T] [--width PX] [--gaps N]", Run: cmdTimeline},
	cli.Command{Name: "version", Summary: "print zkhost's version, VCS revision and Go version", Usage: "version", Run: cmdVersion},
)

// usage is `zkhost help`: what zkhost is, its commands, and how a client finds the
// daemon.
func usage(w io.Writer) {
	fmt.Fprint(w, `zkhost is a Groth16 (BLS12-381 and BN254) proving host with out-of-process device backends.

Usage:

	zkhost COMMAND [flags] [arguments]

Commands:

`)
	commands.Help(w)
	fmt.Fprint(w, `
The client commands (submit, wait, status, jobs, job, cancel, preload, evict,
enable) find the daemon at --api ADDR, else at the [api] socket of --config FILE,
else of $`+cli.EnvConfig+` (which zkhost serve reads too), else at $`+cli.EnvAPI+`,
else at the default socket ($XDG_STATE_HOME/zkhost/zkhost.sock, else
~/.local/state/zkhost/zkhost.sock).

Use "zkhost help COMMAND" (or "zkhost COMMAND --help") for a command's flags.
zkhost --version prints the version.
`)
}

// groupUsage is `zkhost help GROUP`.
func groupUsage(w io.Writer, g cli.Group) {
	fmt.Fprintf(w, "zkhost %s: %s\n\nCommands:\n\n", g.Name, g.Summary)
	commands.GroupHelp(w, g.Name)
	fmt.Fprintf(w, "\nUse \"zkhost help %s COMMAND\" for a command's flags.\n", g.Name)
}

func main() {
	// gnark logs its solver and verifier at debug level on stdout by default; our
	// output is the command's own.
	logger.Disable()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs zkhost with args and returns its exit status, following the go tool's
// conventions: help that was asked for goes to stdout with status 0; a command line
// that names no command, an unknown one or a bad flag gets the error first, then a
// short pointer to the help, on stderr, with status 2.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if len(args) == 1 && isHelpFlag(args[0]) {
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	if args[0] == "help" {
		return help(args[1:], stdout, stderr)
	}
	cmd, rest, name, ok := commands.Find(args)
	if !ok {
		if g, isGroup := commands.Group(name); isGroup {
			return groupMisuse(g, args[1:], stdout, stderr)
		}
		fmt.Fprintf(stderr, "zkhost: unknown command %q\nRun 'zkhost help' for the list of commands.\n", name)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal asks the command to stop cleanly; from then on the default
	// action is back, so a second Ctrl-C ends a command that is slow to stop.
	context.AfterFunc(ctx, stop)
	return report(ctx, cmd, cmd.Run(ctx, cli.Invocation{Command: cmd, Args: rest, Stdout: stdout, Stderr: stderr}), stderr)
}

func isHelpFlag(s string) bool { return s == "-h" || s == "--help" || s == "-help" }

// help runs `zkhost help [TOPIC...]`: the command list, a group's commands or a
// command's own help, on stdout.
func help(topic []string, stdout, stderr io.Writer) int {
	if len(topic) == 0 {
		usage(stdout)
		return 0
	}
	if cmd, rest, _, ok := commands.Find(topic); ok && len(rest) == 0 {
		return run(append(strings.Fields(cmd.Name), "--help"), stdout, stderr)
	}
	if g, ok := commands.Group(topic[0]); ok && len(topic) == 1 {
		groupUsage(stdout, g)
		return 0
	}
	fmt.Fprintf(stderr, "zkhost help: unknown help topic %q\nRun 'zkhost help' for the list of commands.\n", strings.Join(topic, " "))
	return 2
}

// groupMisuse answers a group's word without one of its commands: `zkhost key
// --help` is help, `zkhost key` and `zkhost key nosuch` are usage errors.
func groupMisuse(g cli.Group, rest []string, stdout, stderr io.Writer) int {
	if len(rest) == 1 && isHelpFlag(rest[0]) {
		groupUsage(stdout, g)
		return 0
	}
	subs := strings.Join(commands.GroupCommands(g.Name), ", ")
	if len(rest) == 0 {
		fmt.Fprintf(stderr, "zkhost %s: missing command (%s)\n", g.Name, subs)
	} else {
		fmt.Fprintf(stderr, "zkhost %s: unknown command %q (%s)\n", g.Name, g.Name+" "+rest[0], subs)
	}
	fmt.Fprintf(stderr, "Run 'zkhost help %s' for details.\n", g.Name)
	return 2
}

// exitInterrupted is the exit status of a command stopped by Ctrl-C (or SIGTERM):
// 128+SIGINT, as a shell reports a process killed by it, so scripts can tell an
// interrupted run from a failed one.
const exitInterrupted = 130

// report prints cmd's error, if any, and returns the exit status: 0, 2 for a usage
// error (the message, then the synopsis and where the help is), exitInterrupted when
// ctx (the signal context) ended first, else 1.
func report(ctx context.Context, cmd cli.Command, err error, stderr io.Writer) int {
	name := cmd.Name
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	interrupted := ctx.Err() != nil
	if interrupted && err.Error() == context.Canceled.Error() {
		err = errors.New("interrupted") // say why, not how the cancellation reached us
	}
	if interrupted {
		fmt.Fprintf(stderr, "zkhost %s: %v\n", name, err)
		return exitInterrupted
	}
	if errors.Is(err, cli.ErrUsage) {
		// "usage: " is how the error says what kind it is; the reader wants what is wrong.
		fmt.Fprintf(stderr, "zkhost %s: %s\n%s", name, strings.TrimPrefix(err.Error(), cli.ErrUsage.Error()+": "), cmd.ShortUsage())
		return 2
	}
	fmt.Fprintf(stderr, "zkhost %s: %v\n", name, err)
	return 1
}

func cmdVersion(ctx context.Context, inv cli.Invocation) error {
	args, stdout := inv.Args, inv.Stdout
	fs := inv.FlagSet(`Prints the version every zkhost binary of this build reports (zkhost, the
backends' Describe, the daemon's status): the one a release build links in, else
the module version the Go toolchain stamps from the checkout. Then the VCS revision
and the Go version it was built with.`)
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(pos); err != nil {
		return err
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprint(stdout, versionText(version.String(), bi))
	return nil
}

// versionText describes the build: the version (internal/version), the VCS revision,
// time and local modifications that go build stamped, and the Go version. bi is nil
// when the binary carries no build information.
func versionText(v string, bi *debug.BuildInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "zkhost %s\n", v)
	if bi == nil {
		fmt.Fprintf(&b, "built with %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return b.String()
	}
	vcs := map[string]string{}
	for _, s := range bi.Settings {
		vcs[s.Key] = s.Value
	}
	if rev := vcs["vcs.revision"]; rev != "" {
		fmt.Fprintf(&b, "revision %s", rev)
		if t := vcs["vcs.time"]; t != "" {
			fmt.Fprintf(&b, " (%s)", t)
		}
		if vcs["vcs.modified"] == "true" {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteString("\n")
	}
	goVersion := bi.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	fmt.Fprintf(&b, "built with %s %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// noArgs refuses positional arguments for a command that takes none.
func noArgs(pos []string) error {
	if len(pos) > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", cli.ErrUsage, pos)
	}
	return nil
}

// paramFlags collects repeated --param name=value flags.
type paramFlags map[string]int

func (p paramFlags) String() string { return fmt.Sprint(map[string]int(p)) }

func (p paramFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want name=value, got %q", s)
	}
	var n int
	if _, err := fmt.Sscanf(v, "%d", &n); err != nil {
		return fmt.Errorf("parameter %s: %q is not an integer", k, v)
	}
	p[k] = n
	return nil
}
