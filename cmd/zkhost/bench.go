package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/bench"
	"github.com/zkhost/zkhost/host/cli"
	"github.com/zkhost/zkhost/host/client"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/inprocess"
	"github.com/zkhost/zkhost/sdk/circuits"
)

func cmdBench(ctx context.Context, inv cli.Invocation) error {
	args, stdout, stderr := inv.Args, inv.Stdout, inv.Stderr
	fs := inv.FlagSet("" +
		"Submits J jobs of P partitions, C at a time, and reports proofs per minute, seconds per proof, the\n" +
		"devices' busy share as they measured it (from the timeline) and p50/p99 of every phase, and the same\n" +
		"figures for the steady state (from each device's first proof to the last submission: warm-up left out)\n" +
		"beside the devices' own utilization samples (NVML on a GPU), the isolated device time per proof\n" +
		"(--isolated single proofs after the run) and the ratio to the rate it allows. Without --api\n" +
		"or --config it starts a daemon in this process: a temporary state directory, --devices backends\n" +
		"(--backend, default the CPU backend next to this executable), keys generated into --keys on first use,\n" +
		"and a timeline written to --timeline.\n" +
		"\n" +
		"FILE arguments bench a circuit of your own instead of an example: --circuit names its keys in --keys\n" +
		"(zkhost key import, keygen), and partition i of every job carries FILE i (in turn, when --partitions\n" +
		"is more than the files; by default one partition per file): gnark witnesses, or wire assignments\n" +
		"with --assignment. Circom witnesses (.wtns) are taken as wire assignments without it.")
	name := fs.String("circuit", "chain", "example circuit ("+strings.Join(circuits.Names(), ", ")+"); with FILE arguments, the name of their keys in --keys")
	k := fs.Int("k", 0, "the circuit's k parameter (chain: 2^k constraints); 0 keeps the circuit's default")
	curveName := fs.String("curve", "bls12-381", "the circuit's curve: bls12-381 or bn254")
	params := paramFlags{}
	fs.Var(params, "param", "another circuit parameter, name=value (repeatable)")
	jobs := fs.Int("jobs", 4, "jobs to prove")
	conc := fs.Int("concurrency", 2, "jobs submitted and unfinished at once")
	parts := fs.Int("partitions", 1, "partitions per job (with FILE arguments: default one per file)")
	assign := fs.Bool("assignment", false, "the FILE arguments are wire assignments solved elsewhere (docs/assignment.md), not gnark witnesses")
	class := fs.String("class", "", "priority class of the jobs (default: the circuit's)")
	as := fs.String("name", "", "the circuit's name at the daemon (default: its key name, e.g. chain-k16)")
	addr := fs.String("api", "", "benchmark a running daemon at this address (socket path or host:port)")
	cfgPath := fs.String("config", "", "benchmark the running daemon of this config (its socket and [timeline] path)")
	tokenFile := fs.String("token-file", "", "bearer token file, for a host:port --api")
	caFile := fs.String("tls-ca", "", "CA of the daemon's certificate, for a host:port --api")
	tl := fs.String("timeline", "", "standalone: the timeline to write (default zkhost-bench-<time>.jsonl here);\nwith --api: the daemon's timeline to read")
	noTL := fs.Bool("no-timeline", false, "standalone: write no timeline (to measure its overhead)")
	backend := fs.String("backend", "", "standalone: backend binary (default: zkhost-backend-cpu beside this executable)")
	devices := fs.Int("devices", 1, "standalone: devices (backend processes, device indices 0..N-1)")
	inFlight := fs.Int("in-flight", 0, "standalone: partitions in flight per device (0: the backend's own)")
	threads := fs.Int("threads", 0, "standalone: backend threads (CPU backend; 0: all cores)")
	workers := fs.Int("workers", 0, "standalone: synthesis workers (0: the daemon's default)")
	synthCores := fs.Int("synth-cores", 0, "standalone: cores synthesis may use in all ([synthesis] cores; 0: the daemon's default, 3/4 of the cores)")
	solverThreads := fs.Int("solver-threads", 0, "standalone: solver threads per partition (0: sized by the daemon per circuit and backlog)")
	isolated := fs.Int("isolated", 3, "single-partition jobs proved one at a time after the run for the isolated device time per proof (0: none)")
	isolatedTime := fs.Duration("isolated-time", 0, "the isolated device time per proof, given instead of measured (e.g. 92ms)")
	keys := fs.String("keys", "", "standalone: key cache directory (default: zkhost/keys in the user's cache directory, $XDG_CACHE_HOME or ~/.cache)")
	logLevel := fs.String("log-level", "warn", "standalone: the daemon's log level")
	jsonOut := fs.String("json", "", "also write the result as JSON to this file")
	memEvery := fs.Duration("memory-every", 250*time.Millisecond, "sample memory at this interval during the run (the daemon's budget and partitions at work; standalone: also this process, its backends and the machine); 0: none")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if len(pos) > 0 {
		// FILE arguments are the inputs of a circuit of the user's: its keys
		// are named, not an example's generated, and no file is left out.
		if !set["circuit"] {
			return fmt.Errorf("%w: FILE arguments need --circuit, the name of their keys in --keys", cli.ErrUsage)
		}
		for _, f := range []string{"k", "curve", "param"} {
			if set[f] {
				return fmt.Errorf("%w: --%s is an example circuit's; with FILE arguments the keys in --keys say it", cli.ErrUsage, f)
			}
		}
		if !set["partitions"] {
			*parts = len(pos)
		} else if *parts < len(pos) {
			return fmt.Errorf("%w: --partitions %d would leave out some of the %d FILE arguments", cli.ErrUsage, *parts, len(pos))
		}
	}
	// Defaults that depend on the machine are resolved here, so --help reads the
	// same everywhere.
	if *backend == "" {
		*backend = daemonBackend()
	}
	if *keys == "" {
		*keys = bench.DefaultKeyDir()
	}
	if *jobs < 1 || *conc < 1 || *parts < 1 {
		return fmt.Errorf("%w: --jobs, --concurrency and --partitions must be at least 1", cli.ErrUsage)
	}
	if *assign && len(pos) == 0 {
		return fmt.Errorf("%w: --assignment needs the wire assignment files", cli.ErrUsage)
	}
	var spec circuits.Spec
	var inputs [][]byte
	keyName := "" // the key in --keys the standalone daemon serves: spec's, or the FILE arguments' circuit
	if len(pos) > 0 {
		if inputs, *assign, err = readBenchInputs(pos, *assign); err != nil {
			return err
		}
		if *addr == "" && *cfgPath == "" {
			if keyName, err = resolveKeys(*keys, *name); err != nil {
				return err
			}
		}
		if *as == "" {
			*as = *name
		}
	} else {
		if *k != 0 {
			params["k"] = *k
		}
		spec, err = lookupOn(*name, params, *curveName)
		if err != nil && !errors.Is(err, cli.ErrUsage) {
			err = fmt.Errorf("%w: %v", cli.ErrUsage, err)
		}
		if err != nil {
			return err
		}
	}
	if *isolated < 0 || *isolatedTime < 0 || *synthCores < 0 || *solverThreads < 0 || *memEvery < 0 {
		return fmt.Errorf("%w: --isolated, --isolated-time, --synth-cores, --solver-threads and --memory-every may not be negative", cli.ErrUsage)
	}
	opts := bench.Options{Spec: spec, Inputs: inputs, Assignments: *assign, Circuit: *as, Jobs: *jobs, Concurrency: *conc, Partitions: *parts, Progress: stderr,
		Isolated: *isolated, IsolatedTime: *isolatedTime, MemoryEvery: *memEvery}
	if *class != "" {
		if opts.Class, err = api.ParseClass(*class); err != nil {
			return fmt.Errorf("%w: %v", cli.ErrUsage, err)
		}
	}

	var target bench.Target
	if *addr != "" || *cfgPath != "" {
		if *addr != "" && *cfgPath != "" {
			return fmt.Errorf("%w: use --api or --config, not both", cli.ErrUsage)
		}
		if *noTL {
			return fmt.Errorf("%w: --no-timeline is for standalone runs; a running daemon writes its timeline as its config says", cli.ErrUsage)
		}
		opts.TimelinePath = *tl
		if *cfgPath != "" {
			cfg, err := config.Load(*cfgPath)
			if err != nil {
				return err
			}
			*addr = cfg.API.Socket
			if opts.TimelinePath == "" {
				opts.TimelinePath = cfg.Timeline.Path
			}
		}
		c, err := client.Dial(*addr, client.Options{TokenFile: *tokenFile, CAFile: *caFile})
		if err != nil {
			return err
		}
		defer c.Close()
		target = bench.ClientTarget(c)
	} else {
		if !*noTL {
			opts.TimelinePath = *tl
			if opts.TimelinePath == "" {
				opts.TimelinePath = fmt.Sprintf("zkhost-bench-%s.jsonl", time.Now().Format("20060102-150405"))
			}
			if abs, err := filepath.Abs(opts.TimelinePath); err == nil {
				opts.TimelinePath = abs
			}
		}
		fmt.Fprintf(stderr, "starting a daemon in this process (%d× %s); keys in %s\n", *devices, filepath.Base(*backend), *keys)
		s, err := bench.StartStandalone(ctx, bench.StandaloneOptions{Spec: spec, Options: inprocess.Options{
			Circuit: keyName, KeyDir: *keys, Backend: *backend, Devices: *devices, InFlight: *inFlight, Threads: *threads,
			Workers: *workers, SynthCores: *synthCores, SolverThreads: *solverThreads, Timeline: opts.TimelinePath, LogLevel: *logLevel, Logger: newLogger(stderr, *logLevel),
		}})
		if err != nil {
			return err
		}
		defer s.Close()
		opts.Circuit = s.Circuit
		opts.SampleProcesses = true
		target = s.Target()
	}
	res, runErr := bench.Run(ctx, target, opts)
	if res == nil {
		return runErr
	}
	bench.Print(stdout, res)
	if *jsonOut != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return runErr
}

// readBenchInputs reads bench's FILE arguments, and says whether they are
// wire assignments: assign, or circom witnesses (.wtns), which are.
func readBenchInputs(files []string, assign bool) ([][]byte, bool, error) {
	if !assign {
		var err error
		if assign, err = cli.CircomWitnesses(files); err != nil {
			return nil, false, err
		}
	}
	inputs := make([][]byte, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, false, err
		}
		inputs[i] = b
	}
	return inputs, assign, nil
}
