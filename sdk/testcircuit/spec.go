package testcircuit

import (
	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/constraint"
	"testing"

	cs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/zkhost/zkhost/sdk/circuits"
)

// Compile looks up the example circuit name with params and compiles it,
// failing t when either step fails.
func Compile(t testing.TB, name string, params map[string]int) (circuits.Spec, *cs.R1CS) {
	t.Helper()
	spec, ccs := CompileOn(t, circuits.Curve, name, params)
	return spec, ccs.(*cs.R1CS) // Lookup's circuits are BLS12-381's
}

// CompileOn is Compile on curve id: the registry's circuit name over that
// curve, and its R1CS (of id's constraint package).
func CompileOn(t testing.TB, id ecc.ID, name string, params map[string]int) (circuits.Spec, constraint.ConstraintSystem) {
	t.Helper()
	spec, err := circuits.Lookup(name, params)
	if err == nil {
		spec, err = spec.On(id)
	}
	if err != nil {
		t.Fatal(err)
	}
	ccs, err := spec.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return spec, ccs
}
