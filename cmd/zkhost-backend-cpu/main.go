// Command zkhost-backend-cpu is zkhost's CPU backend: it proves Groth16 (BLS12-381)
// with gnark-crypto on this machine's cores, served to the host through go-plugin
// (package cpubackend does the work). The host starts it; run by hand it exits.
//
// Flags, each with an environment variable the host may set instead:
//
//	-threads N         ZKHOST_CPU_THREADS        goroutines per proof (0 = all cores)
//	-max-in-flight N   ZKHOST_CPU_MAX_IN_FLIGHT  Prove calls accepted at once (default 1)
//
// and, without one: -compact-w (take compact partitions), -max-domain N (the
// largest key domain taken; a larger key is refused for good, and the host proves
// its partitions on other devices).
//
// Logs go to standard error as hclog JSON (level from ZKHOST_LOG_LEVEL). Proofs run
// in a child process of the same binary (first argument cpubackend.WorkerArg), one
// per loaded key, started with the key; a cancel kills it and another takes its
// place.
//
// The process runs Go's garbage collector with a 20% target (GOGC=20) unless GOGC is
// set: a proof's large vectors hold no pointers, so the collector does not scan them, and a tight
// target keeps the heap near the live data the backend declares per constraint
// (Go's default lets it reach twice that).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/zkhost/zkhost/cpubackend"
	"github.com/zkhost/zkhost/internal/envflag"
	"github.com/zkhost/zkhost/sdk"
)

// gcPercent is the garbage collector's target (see the package comment).
const gcPercent = 20

func main() {
	// go-plugin owns stdout (and a prove worker's answer goes there). This binary
	// links gnark-crypto but not gnark, so gnark's logger (stdout by default) is not
	// in it to silence; make test checks that it stays so (scripts/check-sdk-deps.sh).
	if len(os.Args) > 1 && os.Args[1] == cpubackend.WorkerArg {
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(gcPercent)
		}
		os.Exit(cpubackend.ServeWorker())
	}
	opts, err := parseOptions(os.Args[1:], os.Getenv, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkhost-backend-cpu:", err)
		os.Exit(2)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	log := sdk.NewLogger(cpubackend.Name)
	opts.Logger = log
	// Proofs run in a child process of this binary, one per loaded key, so that a
	// cancel stops a proof at once (cpubackend's worker.go says why).
	if opts.WorkerPath, err = os.Executable(); err != nil {
		log.Error("finding this executable for the prove workers", "error", err)
		os.Exit(1)
	}
	b := cpubackend.New(opts)
	log.Info("starting", "pid", os.Getpid(), "threads", opts.Threads, "max_in_flight", opts.MaxInFlight)
	err = sdk.Serve(b, sdk.WithLogger(log))
	if cerr := b.Close(); cerr != nil {
		log.Warn("unloading keys", "error", cerr)
	}
	if err != nil {
		log.Error("serving", "error", err)
		os.Exit(1)
	}
}

// parseOptions reads the flags, defaulting each from its environment variable.
func parseOptions(args []string, getenv func(string) string, usage io.Writer) (cpubackend.Options, error) {
	var opts cpubackend.Options
	threads, err := envflag.Int(getenv, "ZKHOST_CPU_THREADS", 0)
	if err != nil {
		return opts, err
	}
	inFlight, err := envflag.Int(getenv, "ZKHOST_CPU_MAX_IN_FLIGHT", 1)
	if err != nil {
		return opts, err
	}
	fs := flag.NewFlagSet("zkhost-backend-cpu", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.IntVar(&opts.Threads, "threads", threads, "goroutines per proof (0 = all cores)")
	fs.IntVar(&opts.MaxInFlight, "max-in-flight", inFlight, "Prove calls accepted at once")
	fs.BoolVar(&opts.CompactW, "compact-w", false, "take compact partitions (W alone) and evaluate A and B here, from the constraints the host sends with each key")
	fs.Uint64Var(&opts.MaxDomain, "max-domain", 0, "largest key domain (constraints) to take; a larger key is refused for good and the host proves it on other devices (0: no limit)")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if opts.Threads < 0 {
		return opts, fmt.Errorf("-threads is %d, want 0 (all cores) or more", opts.Threads)
	}
	if opts.MaxInFlight < 1 {
		return opts, fmt.Errorf("-max-in-flight is %d, want 1 or more", opts.MaxInFlight)
	}
	return opts, nil
}
