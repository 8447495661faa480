// Command zkhost-backend-cuda is zkhost's GPU backend: Groth16 (BLS12-381) on one
// NVIDIA GPU with zkhost's own CUDA kernels (package cudabackend), served to the
// host through go-plugin. The host starts it; run by hand it exits.
//
// Built with `make cuda` (nvcc, cudart linked statically). On a machine without
// a GPU it runs and answers Describe with no device; Prove is refused with a
// typed "unavailable" error.
//
// Flags, each with an environment variable the host may set instead:
//
//	-device N          ZKHOST_DEVICE_INDEX        CUDA device ordinal (default 0)
//	-max-in-flight N   ZKHOST_CUDA_MAX_IN_FLIGHT  proofs at once, each in its own slot (default cudabackend.DefaultMaxInFlight, 3)
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/zkhost/zkhost/cudabackend"
	"github.com/zkhost/zkhost/sdk"
)

func main() {
	// go-plugin owns stdout: nothing may print there before the handshake (this
	// binary links gnark-crypto, not gnark, whose logger prints there by default).
	fs := flag.NewFlagSet("zkhost-backend-cuda", flag.ContinueOnError)
	device := fs.Int("device", envInt("ZKHOST_DEVICE_INDEX", 0), "CUDA device ordinal")
	inFlight := fs.Int("max-in-flight", envInt("ZKHOST_CUDA_MAX_IN_FLIGHT", cudabackend.DefaultMaxInFlight), "proofs at once, each in its own slot (device buffers, streams, pinned staging: MaxInFlight per key, allocated at LoadKey)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *device < 0 || *inFlight < 1 {
		fmt.Fprintln(os.Stderr, "zkhost-backend-cuda: -device must be >= 0 and -max-in-flight >= 1")
		os.Exit(2)
	}
	log := sdk.NewLogger(cudabackend.Name)
	b := cudabackend.New(cudabackend.Options{Device: *device, MaxInFlight: *inFlight, Logger: log})
	err := sdk.Serve(b, sdk.WithLogger(log))
	b.Close()
	if err != nil {
		log.Error("serving", "error", err)
		os.Exit(1)
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}
