package circuit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/constraint/solver"
	_ "github.com/consensys/gnark/std/math/bits"
	_ "github.com/consensys/gnark/std/math/bitslice"
	_ "github.com/consensys/gnark/std/math/cmp"
	_ "github.com/consensys/gnark/std/selector"
)

// A constraint system read from a file carries only the names of the hints its solver
// calls; the functions must be linked into the program that solves it, and gnark's std
// packages register theirs when they are linked in. The blank imports below link those
// of gnark's frontend and everyday gadgets (bit decomposition, comparisons, selectors,
// bit slicing) so circuits using them solve here. Not gnark/std as a whole: its init
// registers every hint a second time and gnark logs each repeat on stdout, before any
// main can silence it, and stdout belongs to the program (a plugin's handshake, a
// command's output). Most of the rest (range checks, emulated fields, lookups) need
// gnark's commitments, which zkhost refuses anyway.

// missingHints returns the names of the hints r1cs's solver needs that are not
// registered in this process, sorted.
func missingHints(r1cs constraint.ConstraintSystem) []string {
	// The solver's default configuration holds every registered hint under the ID it
	// is looked up by (a named hint's ID is not its function's).
	cfg, err := solver.NewConfig()
	if err != nil {
		panic(fmt.Sprintf("gnark's default solver configuration: %v", err)) // takes no options: cannot fail
	}
	var missing []string
	for id, name := range systemOf(r1cs).MHintsDependencies {
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
