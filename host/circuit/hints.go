package circuit

import (
	"fmt"
	"slices"
	"strings"

	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/std"
)

// A constraint system read from a file carries only the names of the hints its solver
// calls; the functions must be linked into the program that solves it. gnark's std
// registers its own hints only when its packages are imported, which a host that reads
// serialized circuits does not do: register them all, so any circuit built from gnark's
// standard library (comparisons, range checks, emulated fields, hashes) solves here.
func init() { std.RegisterHints() }

// missingHints returns the names of the hints r1cs's solver needs that are not
// registered in this process, sorted.
func missingHints(r1cs *cs.R1CS) []string {
	// The solver's default configuration holds every registered hint under the ID it
	// is looked up by (a named hint's ID is not its function's).
	cfg, err := solver.NewConfig()
	if err != nil {
		panic(fmt.Sprintf("gnark's default solver configuration: %v", err)) // takes no options: cannot fail
	}
	var missing []string
	for id, name := range r1cs.MHintsDependencies {
		if _, ok := cfg.HintFunctions[id]; !ok {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	return missing
}

// MissingHintsError says that circuit's solver needs hints this build lacks, so its
// partitions cannot be solved from witnesses here.
type MissingHintsError struct {
	Circuit string
	Hints   []string
}

func (e *MissingHintsError) Error() string {
	return fmt.Sprintf("circuit %s needs hint(s) zkhost does not have: %s (they live in the program that built the circuit). "+
		"Prove it from wire assignments solved where the hints are (docs/assignment.md), "+
		"or serve it through a synthesizer plugin that links them",
		e.Circuit, strings.Join(e.Hints, ", "))
}

// CheckSolvable returns a *MissingHintsError when c's solver needs hints this build
// lacks, nil otherwise.
func (c *Circuit) CheckSolvable() error {
	if len(c.MissingHints) == 0 {
		return nil
	}
	return &MissingHintsError{Circuit: c.Name, Hints: c.MissingHints}
}
