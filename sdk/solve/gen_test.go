package solve

import (
	"testing"

	"github.com/zkhost/zkhost/sdk/internal/gentest"
)

// TestBN254IsGenerated: solvebn254's code and its tests are what gen.sh makes of
// this package's, so a change here reaches BN254's solver only through go generate.
func TestBN254IsGenerated(t *testing.T) {
	gentest.Check(t, "gen.sh", "../solvebn254")
}
