package testcircuit

import (
	"testing"

	cs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/zkhost/zkhost/sdk/circuits"
)

// Compile looks up the example circuit name with params and compiles it,
// failing t when either step fails.
func Compile(t testing.TB, name string, params map[string]int) (circuits.Spec, *cs.R1CS) {
	t.Helper()
	spec, err := circuits.Lookup(name, params)
	if err != nil {
		t.Fatal(err)
	}
	ccs, err := spec.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return spec, ccs.(*cs.R1CS) // Lookup's circuits are BLS12-381's
}
