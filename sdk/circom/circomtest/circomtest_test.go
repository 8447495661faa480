package circomtest

import (
	"os"
	"testing"
)

// TestPathFindsTheFiles: Path names files that are there, the ones the tests of
// other packages read.
func TestPathFindsTheFiles(t *testing.T) {
	for _, name := range []string{"multiplier_bls12381.r1cs", "poseidonbits_bls12381.zkey", "poseidonbits_bn128.wtns"} {
		if _, err := os.Stat(Path(name)); err != nil {
			t.Errorf("Path(%q): %v", name, err)
		}
	}
}
