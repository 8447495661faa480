package circom

import (
	"os"
	"path/filepath"
	"testing"
)

// The fuzz tests feed the readers arbitrary bytes, starting from the real files: any input must
// give a result or an error, never a panic, and a result must keep the promises the package
// documents (wires in range, elements below the prime).

func addSeeds(f *testing.F, pattern string) {
	paths, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed files %s: %v", pattern, err)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

func FuzzReadR1CS(f *testing.F) {
	addSeeds(f, "*.r1cs")
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := ParseR1CS(data)
		if err != nil {
			return
		}
		for i, c := range cs.Constraints {
			for _, lc := range []LinearCombination{c.A, c.B, c.C} {
				for _, term := range lc {
					if term.Wire >= cs.NumWires {
						t.Fatalf("constraint %d: wire %d of %d", i, term.Wire, cs.NumWires)
					}
					if term.Coefficient.BigInt().Cmp(cs.Prime) >= 0 {
						t.Fatalf("constraint %d: coefficient not below the prime", i)
					}
				}
			}
		}
		// Check on a witness of the right shape must answer too. A header may state billions of
		// wires that nothing in the file backs, so only small circuits are checked.
		if cs.NumWires <= 1<<12 {
			w := &Witness{Curve: cs.Curve, Prime: cs.Prime, Values: make([]FieldElement, cs.NumWires)}
			w.Values[0][0] = 1
			_ = cs.Check(w)
		}
	})
}

func FuzzReadWtns(f *testing.F) {
	addSeeds(f, "*.wtns")
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ParseWitness(data)
		if err != nil {
			return
		}
		if len(w.Values)*FieldElementSize > len(data) {
			t.Fatalf("%d values from %d bytes", len(w.Values), len(data))
		}
		for i := range w.Values {
			if w.Values[i].BigInt().Cmp(w.Prime) >= 0 {
				t.Fatalf("value %d not below the prime", i)
			}
		}
	})
}

func FuzzReadZKey(f *testing.F) {
	addSeeds(f, "multiplier_*.zkey") // the poseidon keys are large for a seed
	cs, err := ReadR1CS(filepath.Join("testdata", "multiplier_bls12381.r1cs"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ParseZKey(data)
		if err != nil {
			return
		}
		for name, got := range map[string][2]int{
			"IC": {len(k.IC), (int(k.NumPublic) + 1) * k.G1Size},
			"A":  {len(k.A), int(k.NumVars) * k.G1Size},
			"B2": {len(k.B2), int(k.NumVars) * k.G2Size},
			"C":  {len(k.C), (int(k.NumVars) - int(k.NumPublic) - 1) * k.G1Size},
			"H":  {len(k.H), int(k.DomainSize) * k.G1Size},
		} {
			if got[0] != got[1] {
				t.Fatalf("%s holds %d bytes, its count says %d", name, got[0], got[1])
			}
		}
		for i, c := range k.Coefficients {
			if c.Matrix > 1 || c.Constraint >= k.DomainSize || c.Signal >= k.NumVars || c.Value.BigInt().Cmp(k.ScalarField) >= 0 {
				t.Fatalf("coefficient %d out of range: %+v", i, c)
			}
		}
		_ = k.CheckR1CS(cs) // must answer, whatever the key says
	})
}
