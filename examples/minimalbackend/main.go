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
	log := sdk.NewLogger("minimalbackend")
	backend := cpubackend.New(cpubackend.Options{Logger: log})
	if err := sdk.Serve(backend, sdk.WithLogger(log)); err != nil {
		log.Error("serving", "error", err)
		os.Exit(1)
	}
}
