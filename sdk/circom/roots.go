package circom

import "math/big"

// RootsOfUnity returns the roots snarkjs (through ffjavascript) uses for an FFT domain
// of 2^logN elements over the field of prime r: ω, its primitive 2^logN-th root of
// unity, and ρ, the shift of the coset its Groth16 prover evaluates on (a primitive
// 2^(logN+1)-th root whose square is ω, or, at the field's largest domain where none
// exists, nqr², ffjavascript's Fr.shift). ffjavascript takes nqr, the smallest
// quadratic non-residue, writes r − 1 = 2^s·t with t odd, and ω_max = nqr^t, of order
// 2^s; ω is ω_max^(2^(s−logN)). On BLS12-381 these are not gnark-crypto's roots (on
// BN254 they are), so a key's H points, made by snarkjs's setup, pair with these.
// logN must be at most s.
func RootsOfUnity(r *big.Int, logN int) (omega, rho *big.Int) {
	rMinus1 := new(big.Int).Sub(r, big.NewInt(1))
	half := new(big.Int).Rsh(rMinus1, 1)
	nqr := big.NewInt(2)
	for new(big.Int).Exp(nqr, half, r).Cmp(rMinus1) != 0 { // Euler's criterion
		nqr.Add(nqr, big.NewInt(1))
	}
	s := int(rMinus1.TrailingZeroBits())
	t := new(big.Int).Rsh(rMinus1, uint(s))
	maxRoot := new(big.Int).Exp(nqr, t, r) // of order 2^s
	pow2 := func(e int) *big.Int { return new(big.Int).Lsh(big.NewInt(1), uint(e)) }
	omega = new(big.Int).Exp(maxRoot, pow2(s-logN), r)
	if logN == s {
		rho = new(big.Int).Exp(nqr, big.NewInt(2), r)
	} else {
		rho = new(big.Int).Exp(maxRoot, pow2(s-logN-1), r)
	}
	return omega, rho
}
