package circom

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"
)

// TestRootsOfUnity: ω has order exactly 2^logN and ρ² = ω (ρ = nqr² at the largest
// domain), on both fields; on BN254 ω is gnark-crypto's root too.
func TestRootsOfUnity(t *testing.T) {
	for _, id := range []ecc.ID{ecc.BN254, ecc.BLS12_381} {
		r := id.ScalarField()
		s := int(new(big.Int).Sub(r, big.NewInt(1)).TrailingZeroBits())
		for _, logN := range []int{0, 1, 5, 16, s - 1, s} {
			omega, rho := RootsOfUnity(r, logN)
			order := new(big.Int).Lsh(big.NewInt(1), uint(logN))
			if new(big.Int).Exp(omega, order, r).Cmp(big.NewInt(1)) != 0 {
				t.Errorf("%s, 2^%d: ω^N ≠ 1", id, logN)
			}
			if logN > 0 && new(big.Int).Exp(omega, new(big.Int).Rsh(order, 1), r).Cmp(big.NewInt(1)) == 0 {
				t.Errorf("%s, 2^%d: ω is not primitive", id, logN)
			}
			if logN < s && new(big.Int).Exp(rho, big.NewInt(2), r).Cmp(omega) != 0 {
				t.Errorf("%s, 2^%d: ρ² ≠ ω", id, logN)
			}
		}
	}
	omega, _ := RootsOfUnity(ecc.BN254.ScalarField(), 10)
	gnark := fft.NewDomain(1 << 10).Generator
	if gnark.BigInt(new(big.Int)).Cmp(omega) != 0 {
		t.Error("BN254: snarkjs's root of 2^10 differs from gnark-crypto's")
	}
}
