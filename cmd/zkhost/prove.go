package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/jedib0t/go-pretty/v6/table"

	"github.com/zkhost/zkhost/host/cli"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/oneshot"
	"github.com/zkhost/zkhost/sdk/circuit"
)

// daemonBackend is the backend zkhost serve uses with no config (host/config's
// default on this machine), so that prove and bench agree with the daemon.
func daemonBackend() string {
	c := config.Default()
	if len(c.Devices) > 0 {
		return c.Devices[0].Backend
	}
	return config.DefaultBackendName
}

// newLogger returns the CLI's logger on stderr.
func newLogger(stderr io.Writer, level string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "zkhost", Output: stderr, Level: hclog.LevelFromString(level)})
}

func cmdProve(ctx context.Context, inv cli.Invocation) error {
	args, stdout, stderr := inv.Args, inv.Stdout, inv.Stderr
	fs := inv.FlagSet(`Proves one job without a daemon to run: it starts one in this process (a
temporary state directory, one backend process), so the proofs take the daemon's
pipeline, and each is verified before it is written. The files are one gnark full
witness per partition (witness.MarshalBinary), or with --assignment one wire
assignment per partition (docs/assignment.md); --partitions N proves N generated
witnesses of an example circuit instead. Circom witnesses (.wtns) of a circuit
imported with key import --r1cs are wire assignments, taken as such without
--assignment (docs/circom.md). DIR receives <i>.proof, <i>.public and
summary.json, and with --snarkjs snarkjs's <i>.proof.json and <i>.public.json; it
must not hold the proofs of an earlier run.

A circuit with hints of its own is proved from wire assignments here; to prove
its witnesses through its synthesizer plugin, run zkhost serve with a config
naming the plugin and use zkhost submit (docs/synthesizer.md).`)
	keys := fs.String("keys", "", "`DIR` of keys written by zkhost keygen") // backquotes name the placeholder
	name := fs.String("circuit", "", "circuit name (e.g. merkle, or a full key name such as chain-k16)")
	n := fs.Int("partitions", 0, "generate N example witnesses (when no --witness is given)")
	var witnesses stringList
	fs.Var(&witnesses, "witness", "gnark full witness file, one per partition (repeatable; more files may follow the flags)")
	assign := fs.Bool("assignment", false, "the files are wire assignments solved elsewhere (docs/assignment.md), not gnark witnesses")
	out := fs.String("out", "", "`DIR` for <i>.proof, <i>.public and summary.json")
	snarkjs := fs.Bool("snarkjs", false, "also write each proof as snarkjs's <i>.proof.json and <i>.public.json")
	backend := fs.String("backend", "", "backend binary (default: zkhost-backend-cpu beside this executable)")
	sha := fs.String("backend-sha256", "", "expected SHA-256 of the backend binary (hex)")
	threads := fs.Int("threads", 0, "backend threads (0: all cores; CPU backend)")
	logLevel := fs.String("log-level", "warn", "log level: trace, debug, info, warn, error")
	gnarkPeer := fs.Bool("gnark-peer", false, "prove with gnark's groth16.Prove in this process instead of a backend (the benchmark peer)")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	witnesses = append(witnesses, pos...)
	if *backend == "" {
		*backend = daemonBackend()
	}
	partitionsSet := false
	fs.Visit(func(f *flag.Flag) { partitionsSet = partitionsSet || f.Name == "partitions" })
	if *n < 0 || partitionsSet && *n == 0 {
		return fmt.Errorf("%w: --partitions must be at least 1", cli.ErrUsage)
	}
	if *keys == "" || *name == "" || *out == "" {
		return fmt.Errorf("%w: --keys, --circuit and --out are required", cli.ErrUsage)
	}
	// Before any proving: stale proofs of an earlier run would sit next to the new ones.
	if err := cli.CheckOutDir(*out); err != nil {
		return err
	}
	keyName, err := resolveKeys(*keys, *name)
	if err != nil {
		return err
	}
	var assignments []string
	if *assign && len(witnesses) == 0 {
		return fmt.Errorf("%w: --assignment needs the wire assignment files, one per partition", cli.ErrUsage)
	}
	if !*assign {
		if *assign, err = cli.CircomWitnesses(witnesses); err != nil {
			return err
		}
	}
	if *assign {
		witnesses, assignments = nil, witnesses
	}
	opts := oneshot.Options{
		KeyDir: *keys, Circuit: keyName, Partitions: *n, WitnessFiles: witnesses, AssignmentFiles: assignments, OutDir: *out,
		Backend: *backend, Logger: newLogger(stderr, *logLevel), GnarkPeer: *gnarkPeer, SnarkjsJSON: *snarkjs,
	}
	if *sha != "" {
		if opts.BackendSHA256, err = config.ParseDigest(*sha); err != nil {
			return fmt.Errorf("%w: --backend-sha256: %v", cli.ErrUsage, err)
		}
	}
	if *threads > 0 {
		opts.Threads = *threads
	}
	res, err := oneshot.Run(ctx, opts)
	if err != nil {
		return err
	}
	printResult(stdout, res)
	return nil
}

// resolveKeys returns the key set --circuit name stands for in the --keys directory
// dir. ResolveName's errors say what to do next (keygen for an example circuit, key
// import for any other).
func resolveKeys(dir, name string) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("key directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("--keys %s is not a directory", dir)
	}
	return circuit.ResolveName(dir, name)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

// printResult prints the per-partition table.
func printResult(w io.Writer, res *oneshot.Result) {
	t := table.NewWriter()
	t.SetOutputMirror(w)
	t.SetTitle(fmt.Sprintf("%s on %s (%s, %s)", res.Circuit, res.Backend.Name, res.Backend.Device.Kind, res.Backend.Device.Model))
	t.AppendHeader(table.Row{"partition", "constraints", "synthesis ms", "transfer ms", "prove ms", "device-busy ms", "verify ms", "verified"})
	for _, p := range res.Partitions {
		t.AppendRow(table.Row{p.Index, p.Constraints, ms(p.Synthesis), ms(p.Transfer), ms(p.Prove), ms(p.DeviceBusy), ms(p.Verify), p.Verified})
	}
	t.SetStyle(table.StyleLight)
	t.Render()
	// The run's wall time is not a sum of the columns (partitions overlap), so it is
	// a line of its own rather than a footer under one of them.
	fmt.Fprintf(w, "%s proven and verified in %s ms wall time\n", plural(len(res.Partitions), "partition"), ms(res.Total))
}

// plural returns "1 proof", "2 proofs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// stringList collects a repeated string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
