// Command hintsynth is an example synthesizer plugin for zkhost: it solves the
// rootchain circuit (package rootchain), whose solver needs a custom hint,
// FifthRoot, that the zkhost daemon does not have. Name it in the daemon's
// config:
//
//	[[circuit]]
//	name = "rootchain"
//	keys = "/var/lib/zkhost/keys"
//	synthesizer = "/usr/local/lib/zkhost/hintsynth"
//
// The daemon launches it, loads the circuit's constraint system into it and
// sends it each partition's witness; it solves the circuit with its hint and
// writes the partition (sdk/synthgnark does all of that). It lives in its own
// Go module, as a user's synthesizer would: the program imports only zkhost's
// SDK; its test also imports the host module (github.com/zkhost/zkhost), to prove
// a job through a real daemon, which is why go.mod requires it. A synthesizer of
// yours needs only the SDK, with a replace directive pointing at a checkout (the
// module is not on a module proxy).
package main

import (
	"fmt"
	"os"

	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/logger"

	"github.com/zkhost/zkhost/examples/hintsynth/rootchain"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/synthgnark"
)

func main() {
	// go-plugin owns stdout: gnark's logger (stdout by default) must stay quiet.
	logger.Disable()
	s := synthgnark.New(synthgnark.Options{
		Name:    "hintsynth",
		Version: "0.1.0",
		Solver:  []solver.Option{solver.WithHints(rootchain.FifthRoot)},
	})
	if err := sdk.ServeSynthesizer(s); err != nil {
		fmt.Fprintln(os.Stderr, "hintsynth:", err)
		os.Exit(1)
	}
}
