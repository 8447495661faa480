// Command gnarksynth serves sdk/synthgnark with no hints of its own (the example
// circuits need none): the synthesizer that synthtest's own test checks.
package main

import (
	"fmt"
	"os"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/synthgnark"
)

func main() {
	// synthgnark.New silences gnark's logger: go-plugin owns stdout.
	s := synthgnark.New(synthgnark.Options{Name: "gnarksynth", Version: "0.1.0"})
	if err := sdk.ServeSynthesizer(s); err != nil {
		fmt.Fprintln(os.Stderr, "gnarksynth:", err)
		os.Exit(1)
	}
}
