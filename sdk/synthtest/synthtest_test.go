package synthtest_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/logger"

	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/synthtest"
)

// TestGnarkSynthConforms runs the suite against testdata/gnarksynth:
// sdk/synthgnark serving the chain example circuit, on each curve. (examples/faultsynth with no
// fault set is the same synthesizer, in the host's module.)
func TestGnarkSynthConforms(t *testing.T) {
	logger.Disable()
	dir := t.TempDir()
	bin := filepath.Join(dir, "gnarksynth")
	build := exec.Command("go", "build", "-o", bin, "./testdata/gnarksynth")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, id := range curve.IDs {
		t.Run(curve.Name(id), func(t *testing.T) {
			spec, err := circuits.Lookup("chain", map[string]int{"k": 6})
			if err == nil {
				spec, err = spec.On(id)
			}
			if err != nil {
				t.Fatal(err)
			}
			keys := filepath.Join(dir, "keys")
			if err := circuit.Keygen(spec, keys); err != nil {
				t.Fatal(err)
			}
			var valid [][]byte
			for i := range 3 {
				w, err := spec.Witness(i, 1)
				if err != nil {
					t.Fatal(err)
				}
				b, err := w.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				valid = append(valid, b)
			}
			// Out equal to X is not the chain's output.
			bad, err := frontend.NewWitness(&circuits.Chain{X: 12345, Out: 12345, Steps: 63}, id.ScalarField())
			if err != nil {
				t.Fatal(err)
			}
			badBytes, err := bad.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			synthtest.Run(t, synthtest.Config{
				SynthesizerPath: bin, KeyDir: keys, Circuit: spec.ID(),
				Witnesses: valid, Unsatisfiable: [][]byte{badBytes},
			})
		})
	}
}
