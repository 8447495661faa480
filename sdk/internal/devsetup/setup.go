package devsetup

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/zkhost/zkhost/sdk/keyfile"

	"github.com/zkhost/zkhost/sdk/internal/par"
)

// scalarChunk is how many scalars a worker computes per chunk in the parallel loops that
// are not point multiplications (one field inversion or exponentiation per chunk).
const scalarChunk = 1 << 14

// ToxicWaste is the secret of a Groth16 setup: whoever knows it can forge proofs. Fields
// are in gnark-crypto's Montgomery form and must be nonzero.
type ToxicWaste struct {
	Tau, Alpha, Beta, Gamma, Delta fr.Element
}

// RandomToxicWaste samples nonzero toxic waste from crypto/rand, as gnark's Setup does.
func RandomToxicWaste() (ToxicWaste, error) {
	var tw ToxicWaste
	for _, e := range []*fr.Element{&tw.Tau, &tw.Alpha, &tw.Beta, &tw.Gamma, &tw.Delta} {
		for e.IsZero() {
			if _, err := e.SetRandom(); err != nil {
				return tw, fmt.Errorf("devsetup: sample toxic waste: %w", err)
			}
		}
	}
	return tw, nil
}

// ErrCommitments is returned by Setup for a circuit with commitments (gnark's Commit API).
var ErrCommitments = errors.New("devsetup: circuits with commitments are not supported")

// Setup runs a development Groth16 setup for r1cs with fresh toxic waste and returns the
// proving key in zkhost's format and gnark's verifying key. The keys have the structure
// groth16.Setup gives the same circuit (same lengths, same infinity flags, same point
// order). It stops early, returning ctx's error, when ctx ends.
func Setup(ctx context.Context, r1cs *cs.R1CS) (*keyfile.BLS12381Key, *groth16_bls12381.VerifyingKey, error) {
	tw, err := RandomToxicWaste()
	if err != nil {
		return nil, nil, err
	}
	return SetupWith(ctx, r1cs, tw)
}

// SetupWith is Setup with the given toxic waste; tests use it to compare every point with
// its definition. Anyone who knows tw can forge proofs for the keys it returns.
func SetupWith(ctx context.Context, r1cs *cs.R1CS, tw ToxicWaste) (*keyfile.BLS12381Key, *groth16_bls12381.VerifyingKey, error) {
	for _, e := range []*fr.Element{&tw.Tau, &tw.Alpha, &tw.Beta, &tw.Gamma, &tw.Delta} {
		if e.IsZero() {
			return nil, nil, errors.New("devsetup: toxic waste has a zero element")
		}
	}
	commitments, ok := r1cs.CommitmentInfo.(constraint.Groth16Commitments)
	if !ok || len(commitments) != 0 {
		return nil, nil, ErrCommitments
	}
	nbPublic := r1cs.GetNbPublicVariables()
	nbWires := r1cs.NbInternalVariables + nbPublic + r1cs.GetNbSecretVariables()
	nbConstraints := r1cs.GetNbConstraints()
	if nbConstraints == 0 {
		return nil, nil, errors.New("devsetup: the circuit has no constraints")
	}
	domain := fft.NewDomain(uint64(nbConstraints), fft.WithoutPrecompute())
	n := int(domain.Cardinality)

	var gammaInv, deltaInv fr.Element
	gammaInv.Inverse(&tw.Gamma)
	deltaInv.Inverse(&tw.Delta)

	// Scalars, as gnark's Setup computes them.
	a, b, c, err := evaluateABC(ctx, r1cs, domain, &tw.Tau, nbWires)
	if err != nil {
		return nil, nil, err
	}
	// K: (β·A_i + α·B_i + C_i)/γ for public wires, /δ for private ones; into c, whose
	// values are needed nowhere else.
	k := c
	err = par.ForChunks(ctx, nbWires, scalarChunk, func(start, end int) {
		var t, u fr.Element
		for i := start; i < end; i++ {
			coeff := &deltaInv
			if i < nbPublic {
				coeff = &gammaInv
			}
			t.Mul(&a[i], &tw.Beta)
			u.Mul(&b[i], &tw.Alpha)
			t.Add(&t, &u).Add(&t, &c[i])
			k[i].Mul(&t, coeff)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	z, err := zScalars(ctx, n, &tw.Tau, &deltaInv)
	if err != nil {
		return nil, nil, err
	}
	pk := &keyfile.BLS12381Key{
		DomainSize: uint64(n),
		NbWires:    uint64(nbWires),
		NbPublic:   uint64(nbPublic),
		InfinityA:  make([]bool, nbWires),
		InfinityB:  make([]bool, nbWires),
	}
	sameAsA := sameScalars(a, b)
	a = filterZeros(a, pk.InfinityA)
	b = filterZeros(b, pk.InfinityB)

	// Points. G1 first, then its tables are dropped before G2's are built.
	_, _, g1, g2 := bls12381.Generators()
	// [B_j(τ)]₁ for the wires whose B scalar is not also their A scalar; the others are
	// copies of pk.G1.A's points.
	bOwn, bOwnAt := ownScalars(b, sameAsA)
	t1, err := newG1Table(ctx, chooseWindow(len(a)+len(bOwn)+len(z)+nbWires), &g1)
	if err != nil {
		return nil, nil, err
	}
	small := make([]bls12381.G1Affine, 3)
	if err := t1.mul(ctx, small, []fr.Element{tw.Alpha, tw.Beta, tw.Delta}); err != nil {
		return nil, nil, err
	}
	pk.G1Alpha, pk.G1Beta, pk.G1Delta = small[0], small[1], small[2]
	pk.G1A = make([]bls12381.G1Affine, len(a))
	pk.G1B = make([]bls12381.G1Affine, len(b))
	pk.G1Z = make([]bls12381.G1Affine, len(z))
	vkK := make([]bls12381.G1Affine, nbPublic)
	pk.G1K = make([]bls12381.G1Affine, nbWires-nbPublic)
	bOwnPts := make([]bls12381.G1Affine, len(bOwn))
	for _, m := range []struct {
		dst     []bls12381.G1Affine
		scalars []fr.Element
	}{
		{pk.G1A, a}, {bOwnPts, bOwn}, {pk.G1Z, z}, {vkK, k[:nbPublic]}, {pk.G1K, k[nbPublic:]},
	} {
		if err := t1.mul(ctx, m.dst, m.scalars); err != nil {
			return nil, nil, err
		}
	}
	for i, j := range bOwnAt {
		pk.G1B[j] = bOwnPts[i]
	}
	err = par.ForChunks(ctx, len(sameAsA), scalarChunk, func(start, end int) {
		for j := start; j < end; j++ {
			if sameAsA[j] >= 0 {
				pk.G1B[j] = pk.G1A[sameAsA[j]]
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	a, bOwn, bOwnPts, z, k, t1 = nil, nil, nil, nil, nil, nil

	t2, err := newG2Table(ctx, chooseWindow(len(b)), &g2)
	if err != nil {
		return nil, nil, err
	}
	pk.G2B = make([]bls12381.G2Affine, len(b))
	if err := t2.mul(ctx, pk.G2B, b); err != nil {
		return nil, nil, err
	}
	small2 := make([]bls12381.G2Affine, 3)
	if err := t2.mul(ctx, small2, []fr.Element{tw.Beta, tw.Delta, tw.Gamma}); err != nil {
		return nil, nil, err
	}
	pk.G2Beta, pk.G2Delta = small2[0], small2[1]

	vk := &groth16_bls12381.VerifyingKey{}
	vk.G1.Alpha, vk.G1.Beta, vk.G1.Delta = pk.G1Alpha, pk.G1Beta, pk.G1Delta
	vk.G1.K = vkK
	vk.G2.Beta, vk.G2.Delta, vk.G2.Gamma = small2[0], small2[1], small2[2]
	vk.PublicAndCommitmentCommitted = commitments.GetPublicAndCommitmentCommitted(commitments.CommitmentIndexes(), nbPublic)
	if err := vk.Precompute(); err != nil {
		return nil, nil, fmt.Errorf("devsetup: verifying key: %w", err)
	}
	return pk, vk, nil
}

// zScalars returns the scalars of pk.G1.Z in the order the key stores them: gnark's Setup
// computes (τ^N − 1)/δ · τ^i for i < N, bit-reverses the N points and keeps the first N − 1
// (deg H ≤ N − 2). Bit-reversing the scalars instead gives the same points.
func zScalars(ctx context.Context, n int, tau, deltaInv *fr.Element) ([]fr.Element, error) {
	var zdt fr.Element
	one := fr.One()
	zdt.Exp(*tau, big.NewInt(int64(n))).Sub(&zdt, &one).Mul(&zdt, deltaInv)
	z := make([]fr.Element, n)
	err := par.ForChunks(ctx, n, scalarChunk, func(start, end int) {
		var x fr.Element
		x.Exp(*tau, big.NewInt(int64(start))).Mul(&x, &zdt)
		for i := start; i < end; i++ {
			z[i] = x
			x.Mul(&x, tau)
		}
	})
	if err != nil {
		return nil, err
	}
	fft.BitReverse(z)
	return z[:n-1], nil
}

// sameScalars returns, for each nonzero scalar of b in order (pk.G1.B's index j), the
// index in pk.G1.A of the same wire's point when the wire's A scalar equals its B scalar,
// or -1. A wire squared (x·x, chain's every constraint) has A = B: its [B]₁ is its [A]₁.
func sameScalars(a, b []fr.Element) []int32 {
	var same []int32
	ia := int32(0)
	for i := range b {
		if !b[i].IsZero() {
			if !a[i].IsZero() && a[i].Equal(&b[i]) {
				same = append(same, ia)
			} else {
				same = append(same, -1)
			}
		}
		if !a[i].IsZero() {
			ia++
		}
	}
	return same
}

// ownScalars returns the scalars of b (compacted, pk.G1.B's order) whose point is not a
// copy of an A point, and their indices in b.
func ownScalars(b []fr.Element, sameAsA []int32) ([]fr.Element, []int) {
	var own []fr.Element
	var at []int
	for j, s := range sameAsA {
		if s < 0 {
			own = append(own, b[j])
			at = append(at, j)
		}
	}
	return own, at
}

// filterZeros marks the zero scalars of s in inf and returns the others, in order, in s's
// own storage: the points at infinity gnark's Setup leaves out of pk.G1.A and pk.G1.B.
func filterZeros(s []fr.Element, inf []bool) []fr.Element {
	out := s[:0]
	for i := range s {
		if s[i].IsZero() {
			inf[i] = true
			continue
		}
		out = append(out, s[i])
	}
	return out
}
