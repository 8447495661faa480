// Command minimalbackend is the smallest complete zkhost backend: the main a
// backend author writes. Everything device-specific lives in a value that
// implements sdk.Backend (here the CPU prover from package cpubackend; yours
// would drive your accelerator); sdk.Serve does the rest: the go-plugin
// handshake, gRPC, typed errors, the parent watchdog, logging to stderr.
//
// Point a [[device]] at the built binary and prove it with the conformance suite:
// sdktest.Run(t, sdktest.Config{BackendPath: "path/to/minimalbackend"}).
package main

import (
	"os"

	"github.com/zkhost/zkhost/cpubackend"
	"github.com/zkhost/zkhost/sdk"
)

func main() {
	// The CPU prover runs each proof in a child process of this binary, which a
	// cancel kills (gnark-crypto's MSMs cannot be interrupted): serve it first.
	if len(os.Args) > 1 && os.Args[1] == cpubackend.WorkerArg {
		os.Exit(cpubackend.ServeWorker())
	}
	log := sdk.NewLogger("minimalbackend")
	self, err := os.Executable()
	if err != nil {
		log.Error("finding this executable", "error", err)
		os.Exit(1)
	}
	backend := cpubackend.New(cpubackend.Options{Logger: log, WorkerPath: self})
	if err := sdk.Serve(backend, sdk.WithLogger(log)); err != nil {
		log.Error("serving", "error", err)
		os.Exit(1)
	}
}
