package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"github.com/zkhost/zkhost/host/cli"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/jedib0t/go-pretty/v6/table"

	"github.com/zkhost/zkhost/host/oneshot"
)

func init() {
	register("prove", "prove one job with a backend process, verify it, write the proofs", cmdProve)
}

// defaultBackend is the CPU backend binary next to this executable.
func defaultBackend() string {
	exe, err := os.Executable()
	if err != nil {
		return "zkhost-backend-cpu"
	}
	return filepath.Join(filepath.Dir(exe), "zkhost-backend-cpu")
}

// defaultStateDir is where zkhost keeps state when no config says otherwise.
func defaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "zkhost")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "zkhost")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("zkhost-%d", os.Getuid()))
}

// newLogger returns the CLI's logger on stderr.
func newLogger(stderr io.Writer, level string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "zkhost", Output: stderr, Level: hclog.LevelFromString(level)})
}

func cmdProve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("prove", "prove --keys KEYDIR --circuit NAME (--partitions N | --witness FILE...) --out DIR", "", stderr)
	keys := fs.String("keys", "", "key directory written by `zkhost keygen`")
	name := fs.String("circuit", "", "circuit name (e.g. merkle, or a full key name such as chain-k16)")
	n := fs.Int("partitions", 0, "generate N example witnesses (when no --witness is given)")
	var witnesses stringList
	fs.Var(&witnesses, "witness", "gnark full witness file, one per partition (repeatable; more files may follow the flags)")
	out := fs.String("out", "", "directory for <i>.proof, <i>.public and summary.json")
	backend := fs.String("backend", defaultBackend(), "backend binary")
	sha := fs.String("backend-sha256", "", "expected SHA-256 of the backend binary (hex)")
	threads := fs.Int("threads", 0, "backend threads (0: all cores; CPU backend)")
	stateDir := fs.String("state-dir", defaultStateDir(), "state directory (shared-memory files)")
	logLevel := fs.String("log-level", "warn", "log level: trace, debug, info, warn, error")
	gnarkPeer := fs.Bool("gnark-peer", false, "prove with gnark's groth16.Prove in this process instead of a backend (the benchmark peer)")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	witnesses = append(witnesses, pos...)
	if *keys == "" || *name == "" || *out == "" {
		return fmt.Errorf("%w: --keys, --circuit and --out are required", cli.ErrUsage)
	}
	// Before any proving: stale proofs of an earlier run would sit next to the new ones.
	if err := cli.CheckOutDir(*out); err != nil {
		return err
	}
	opts := oneshot.Options{
		KeyDir: *keys, Circuit: *name, Partitions: *n, WitnessFiles: witnesses, OutDir: *out,
		Backend: *backend, StateDir: *stateDir, Logger: newLogger(stderr, *logLevel), GnarkPeer: *gnarkPeer,
	}
	if *sha != "" {
		b, err := hex.DecodeString(*sha)
		if err != nil || len(b) != 32 {
			return fmt.Errorf("%w: --backend-sha256 must be 64 hex characters", cli.ErrUsage)
		}
		opts.BackendSHA256 = b
	}
	if *threads > 0 {
		opts.BackendEnv = append(opts.BackendEnv, fmt.Sprintf("ZKHOST_CPU_THREADS=%d", *threads))
	}
	res, err := oneshot.Run(ctx, opts)
	if err != nil {
		return err
	}
	printResult(stdout, res)
	return nil
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
	t.AppendFooter(table.Row{"total", "", "", "", "", "", "", ms(res.Total) + " ms"})
	t.SetStyle(table.StyleLight)
	t.Render()
}

// stringList collects a repeated string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
