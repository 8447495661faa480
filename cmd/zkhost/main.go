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
)

// commands is zkhost's one command table: every subcommand with its one-line
// summary and its usage, which `zkhost help` lists. The commands that talk to a
// running daemon are host/cli's.
var commands = cli.NewRegistry(
	cli.Command{Name: "serve", Summary: "run the proving daemon", Usage: "serve [--config FILE]", Run: cmdServe},
	cli.Submit, cli.Wait, cli.Status, cli.Jobs, cli.Job, cli.Cancel, cli.Preload, cli.Evict, cli.Enable,
	cli.Command{Name: "prove", Summary: "prove one job with a backend process, verify it, write the proofs",
		Usage: "prove --keys KEYDIR --circuit NAME (--partitions N | [--assignment] FILE...) --out DIR", Run: cmdProve},
	cli.Command{Name: "verify", Summary: "verify proofs with gnark's groth16.Verify",
		Usage: "verify --keys KEYDIR --circuit NAME (PROOF PUBLIC | DIR)...", Run: cmdVerify},
	cli.Command{Name: "keygen", Summary: "compile an example circuit and write development Groth16 keys",
		Usage: "keygen --circuit NAME [--k K] [--d D] --out KEYDIR", Run: cmdKeygen},
	cli.Command{Name: "witness", Summary: "write valid example witnesses, one per partition",
		Usage: "witness --circuit NAME [--k K] [--d D] --partitions N --out DIR", Run: cmdWitness},
	cli.Command{Name: "key convert", Summary: "convert a gnark proving-key file to zkhost's key file format",
		Usage: "key convert --in GNARK_PK --out ZKHOST_PK", Run: cmdKeyConvert},
	cli.Command{Name: "key import", Summary: "import your own gnark circuit (ccs, proving and verifying keys) as a key set",
		Usage: "key import --ccs FILE --pk FILE --vk FILE --name NAME --out KEYDIR [--witness FILE] [--assignments-only]", Run: cmdKeyImport},
	cli.Command{Name: "bench", Summary: "benchmark proving: proofs per minute, device busy %, phase p50/p99 (standalone or --api)",
		Usage: "bench --circuit chain --k K --jobs J --concurrency C [--partitions P] [--api ADDR | standalone flags]", Run: cmdBench},
	cli.Command{Name: "timeline", Summary: "render a timeline as a waterfall page",
		Usage: "timeline [FILE] [-o waterfall.html] [--last D] [--title T] [--width PX] [--gaps N]", Run: cmdTimeline},
	cli.Command{Name: "version", Summary: "print zkhost's version, VCS revision and Go version", Usage: "version (or zkhost --version)", Run: cmdVersion},
)

func usage(w io.Writer) {
	fmt.Fprintln(w, "zkhost: a Groth16 (BLS12-381) proving host with out-of-process device backends")
	fmt.Fprintln(w, "\nUsage: zkhost COMMAND [flags] (zkhost help COMMAND, or zkhost COMMAND --help, for a command's flags)")
	fmt.Fprintln(w, "\nCommands:")
	commands.Help(w)
}

func main() {
	// gnark logs its solver and verifier at debug level on stdout by default; our
	// output is the command's own.
	logger.Disable()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || len(args) == 1 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
		usage(stdout)
		return 0
	}
	if args[0] == "--version" {
		args = []string{"version"}
	}
	if args[0] == "help" {
		// zkhost help CMD: CMD's own help.
		args = append(args[1:], "--help")
	}
	cmd, rest, name, ok := commands.Find(args)
	if !ok {
		fmt.Fprintf(stderr, "zkhost: unknown command %q\n\n", name)
		usage(stderr)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal asks the command to stop cleanly; from then on the default
	// action is back, so a second Ctrl-C ends a command that is slow to stop.
	context.AfterFunc(ctx, stop)
	return report(ctx, name, cmd.Run(ctx, cli.Invocation{Command: cmd, Args: rest, Stdout: stdout, Stderr: stderr}), stderr)
}

// exitInterrupted is the exit status of a command stopped by Ctrl-C (or SIGTERM):
// 128+SIGINT, as a shell reports a process killed by it, so scripts can tell an
// interrupted run from a failed one.
const exitInterrupted = 130

// report prints command name's error, if any, and returns the exit status: 0, 2 for a
// usage error, exitInterrupted when ctx (the signal context) ended first, else 1.
func report(ctx context.Context, name string, err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	interrupted := ctx.Err() != nil
	if interrupted && err.Error() == context.Canceled.Error() {
		err = errors.New("interrupted") // say why, not how the cancellation reached us
	}
	fmt.Fprintf(stderr, "zkhost %s: %v\n", name, err)
	switch {
	case interrupted:
		return exitInterrupted
	case errors.Is(err, cli.ErrUsage):
		return 2
	}
	return 1
}

func cmdVersion(ctx context.Context, inv cli.Invocation) error {
	args, stdout := inv.Args, inv.Stdout
	fs := inv.FlagSet("")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(pos); err != nil {
		return err
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprint(stdout, versionText(bi))
	return nil
}

// versionText describes the build: the main module's version ("(devel)" for a build
// from a checkout), the VCS revision, time and local modifications that go build
// stamped, and the Go version. bi is nil when the binary carries no build information.
func versionText(bi *debug.BuildInfo) string {
	if bi == nil {
		return fmt.Sprintf("zkhost (no build information)\nbuilt with %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	var b strings.Builder
	version := bi.Main.Version
	if version == "" {
		version = "(unknown version)"
	}
	fmt.Fprintf(&b, "zkhost %s", version)
	if bi.Main.Path != "" {
		fmt.Fprintf(&b, " (%s)", bi.Main.Path)
	}
	b.WriteString("\n")
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
