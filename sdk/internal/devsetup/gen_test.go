package devsetup

import (
	"testing"

	"github.com/zkhost/zkhost/sdk/internal/gentest"
)

// TestBN254IsGenerated: devsetupbn254's code is what gen.sh makes of this package's, so
// a change here reaches BN254's setup only through go generate.
func TestBN254IsGenerated(t *testing.T) {
	gentest.Check(t, "gen.sh", "../devsetupbn254")
}
