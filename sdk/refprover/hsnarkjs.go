package refprover

import (
	"context"
	"fmt"
	"math/big"

	"github.com/zkhost/zkhost/sdk/circom"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// A key imported from a snarkjs .zkey (keyfile.HFormSnarkjs) has H points that
// snarkjs's setup made for snarkjs's prover (src/groth16_prove.js), which does not
// compute gnark's H: it takes A, B and C = A∘B as evaluations on the domain,
// interpolates them (inverse FFT), multiplies coefficient j by ρʲ, ρ a primitive
// 2N-th root of unity, and evaluates back (FFT), which gives their values at the
// odd powers ρ·ωⁱ of ρ; the scalars of the H MSM are A·B − C there, with no division
// by Z (xᴺ − 1 is −2 on that coset, and the setup folded it into the points).
//
// The points pair with snarkjs's roots of unity, which are not gnark-crypto's:
// ffjavascript takes ω_max = nqr^t for the smallest quadratic non-residue nqr and
// r − 1 = 2^s·t, and ω = ω_max^(2^(s−log N)); gnark-crypto's root for BLS12-381 is
// another one (for BN254 they agree). Both are primitive N-th roots, so snarkjs's
// ω is gnark's raised to an odd power k, and ωˢⁿᵃʳᵏʲˢ^i = ωᵍⁿᵃʳᵏ^(k·i mod N): the
// evaluations snarkjs lists at i sit at k·i mod N in gnark's order. ComputeHSnarkjs
// permutes its inputs and output by that, and runs gnark-crypto's FFTs in between.

// snarkjsRoots returns the primitive N-th root of unity ω that snarkjs uses for a
// domain of size n (a power of two within the field's two-adicity) and ρ, its coset
// shift (circom.RootsOfUnity), as scalars of the field of the given modulus.
func snarkjsRoots[S any, PS curve.Scalar[S]](modulus *big.Int, n uint64) (omega, rho S) {
	logN := 0
	for uint64(1)<<logN < n {
		logN++
	}
	w, r := circom.RootsOfUnity(modulus, logN)
	PS(&omega).SetBigInt(w)
	PS(&rho).SetBigInt(r)
	return omega, rho
}

// logOf returns k such that base^k = x, base of order n (a power of two) and x in
// the group base generates, bit by bit: x·base^(−k_low) raised to n/2^(j+1) is 1
// exactly when bit j of k is 0.
func logOf[S any, PS curve.Scalar[S]](base, x S, n uint64) (uint64, error) {
	var k uint64
	var baseInv S
	PS(&baseInv).Inverse(&base)
	for j := uint64(0); uint64(1)<<j < n; j++ {
		var y, undo S
		PS(&undo).Exp(baseInv, new(big.Int).SetUint64(k))
		PS(&y).Mul(&x, &undo)
		PS(&y).Exp(y, new(big.Int).SetUint64(n>>(j+1)))
		if !PS(&y).IsOne() {
			k |= 1 << j
		}
	}
	var check S
	if PS(&check).Exp(base, new(big.Int).SetUint64(k)); !PS(&check).Equal(&x) {
		return 0, fmt.Errorf("refprover: snarkjs's root of unity of order %d is not a power of gnark-crypto's", n)
	}
	return k, nil
}

// SnarkjsDomain returns the FFT domain of size n that ComputeHSnarkjs uses
// (gnark-crypto's roots of unity, snarkjs's coset shift ρ), cached as Domain caches
// its own, with DomainBytes(n) of memory.
func SnarkjsDomain[S any, PS curve.Scalar[S], G1, G1J, G2, G2J any](c curve.Curve[S, G1, G1J, G2, G2J], n uint64) (*FFTDomain[S], error) {
	return cachedDomain(c.ID(), domainKey{c.ID(), n, true}, func() curve.Domain[S] {
		_, rho := snarkjsRoots[S, PS](c.ID().ScalarField(), n)
		return c.NewDomain(n, &rho)
	})
}

// KeyDomain returns the domain a key's proofs use, by its H form: Domain for
// gnark's, SnarkjsDomain for snarkjs's. A backend that holds it keeps it cached.
func KeyDomain[S any, PS curve.Scalar[S], G1, G1J, G2, G2J any](c curve.Curve[S, G1, G1J, G2, G2J], pk *keyfile.ProvingKey[G1, G2]) (*FFTDomain[S], error) {
	if pk.HForm == keyfile.HFormSnarkjs {
		return SnarkjsDomain[S, PS](c, pk.DomainSize)
	}
	return Domain(c, pk.DomainSize)
}

// ComputeHSnarkjs returns the scalars of the H MSM for a key in snarkjs's form
// (keyfile.HFormSnarkjs): A·B − C at ρ·ωⁱ for i in [0, N), in that order, with C =
// A∘B on the domain, as snarkjs 0.7.6's prover computes them (see the comment at the
// top of this file). a and b are A and B at the domain's rows, the constraints then
// the public wires' rows (len(a) == len(b) ≤ domainSize), zero-padded; only read.
//
// Cost: 6 FFTs of size N and 3N multiplications on threads goroutines (0: all
// cores), plus two permuting copies; memory 2N elements, as ComputeH. The context is
// checked between FFTs.
func ComputeHSnarkjs[S any, PS curve.Scalar[S], G1, G1J, G2, G2J any](ctx context.Context, c curve.Curve[S, G1, G1J, G2, G2J], a, b []S, domainSize uint64, threads int) ([]S, error) {
	if err := checkAB(a, b, domainSize); err != nil {
		return nil, err
	}
	domain, err := SnarkjsDomain[S, PS](c, domainSize)
	if err != nil {
		return nil, err
	}
	omega, _ := snarkjsRoots[S, PS](c.ID().ScalarField(), domainSize)
	k, err := logOf[S, PS](domain.Generator(), omega, domainSize)
	if err != nil {
		return nil, err
	}
	threads = threadCount(threads)
	n := int(domainSize)
	mask := domainSize - 1
	// at is where snarkjs's i-th point is in gnark-crypto's order. k·i is computed
	// modulo 2^64, which N divides.
	at := func(i int) int { return int((k * uint64(i)) & mask) }

	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("refprover: computing H: %w", err)
	}
	h := make([]S, n) // A, then A·B, then A·B − C
	t := make([]S, n) // B, then C, then the result
	parallelize(len(a), threads, func(start, end int) {
		for i := start; i < end; i++ {
			h[at(i)] = a[i]
			t[at(i)] = b[i]
		}
	})
	if err := productOnCoset[S, PS](ctx, domain, h, t, threads); err != nil {
		return nil, err
	}
	// C = A∘B at the rows, zero in the padding (A and B are zero there too).
	parallelize(n, threads, func(start, end int) {
		for i := start; i < end; i++ {
			PS(&t[i]).SetZero()
		}
	})
	parallelize(len(a), threads, func(start, end int) {
		for i := start; i < end; i++ {
			PS(&t[at(i)]).Mul(&a[i], &b[i])
		}
	})
	if err := toCoset(ctx, domain, t, "C", threads); err != nil {
		return nil, err
	}
	parallelize(n, threads, func(start, end int) {
		for i := start; i < end; i++ {
			PS(&h[i]).Sub(&h[i], &t[i])
		}
	})
	parallelize(n, threads, func(start, end int) {
		for i := start; i < end; i++ {
			t[i] = h[at(i)]
		}
	})
	return t, nil
}
