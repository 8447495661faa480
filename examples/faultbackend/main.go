package main

import (
	"fmt"
	"os"

	"github.com/zkhost/zkhost/cpubackend"
	"github.com/zkhost/zkhost/sdk"
)

func main() {
	opts, err := parseOptions(os.Args[1:], os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultbackend:", err)
		os.Exit(2)
	}
	log := sdk.NewLogger("faultbackend")
	run, err := nextRun(opts.runFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultbackend:", err)
		os.Exit(2)
	}
	if opts.exitBeforeHandshake {
		log.Warn("fault: exiting before the handshake", "status", 3)
		os.Exit(3)
	}
	if opts.stdoutNoise != "" {
		log.Warn("fault: printing to standard output before serving", "text", opts.stdoutNoise)
		fmt.Fprintln(os.Stdout, opts.stdoutNoise)
	}
	inner := cpubackend.New(cpubackend.Options{Threads: opts.threads, MaxInFlight: opts.maxInFlight, Logger: log})
	b := newBackend(inner, opts, run, log)
	log.Info("starting", "pid", os.Getpid(), "run", run, "faults", opts.String())
	err = sdk.Serve(b, sdk.WithLogger(log))
	if cerr := inner.Close(); cerr != nil {
		log.Warn("unloading keys", "error", cerr)
	}
	if err != nil {
		log.Error("serving", "error", err)
		os.Exit(1)
	}
}
