package circomconv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/pedersen"
	"github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/zkhost/zkhost/sdk/circom"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// ErrBN254 refuses a BN254 key, constraint system or witness.
var ErrBN254 = errors.New("BN254 keys are not supported yet: zkhost proves BLS12-381 only (compile and set up the circuit with --prime bls12381 and a bls12381 powers of tau)")

// checkCurve refuses anything but BLS12-381, naming BN254 where that is what it is.
func checkCurve(curve ecc.ID, what string) error {
	switch curve {
	case ecc.BLS12_381:
		return nil
	case ecc.BN254:
		return fmt.Errorf("circomconv: %s is for BN254: %w", what, ErrBN254)
	}
	return fmt.Errorf("circomconv: %s is for %s, want BLS12-381", what, curve)
}

// g1 decodes one G1 point from snarkjs's bytes (48-byte coordinates, Montgomery,
// little-endian: fp.Element's limbs) and checks it is on the curve and in the subgroup.
// The reader has checked each coordinate is below the prime.
func g1(b []byte) (p bls12381.G1Affine) {
	limbs(&p.X, b[0:48])
	limbs(&p.Y, b[48:96])
	return p
}

// g2 decodes one G2 point: x.c0, x.c1, y.c0, y.c1.
func g2(b []byte) (p bls12381.G2Affine) {
	limbs(&p.X.A0, b[0:48])
	limbs(&p.X.A1, b[48:96])
	limbs(&p.Y.A0, b[96:144])
	limbs(&p.Y.A1, b[144:192])
	return p
}

func limbs(e *fp.Element, b []byte) {
	for i := range e {
		e[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
}

// g1Points decodes a run of G1 points and checks each, in parallel. what names the
// section in errors. Deliberately parallel to g2Points: see why there.
func g1Points(b []byte, what string) ([]bls12381.G1Affine, error) {
	out := make([]bls12381.G1Affine, len(b)/96)
	err := forEach(len(out), func(i int) error {
		out[i] = g1(b[96*i:])
		if !out[i].IsOnCurve() || !out[i].IsInSubGroup() {
			return fmt.Errorf("circomconv: %s point %d is not a BLS12-381 G1 point of the prime-order subgroup", what, i)
		}
		return nil
	})
	return out, err
}

// g2Points is g1Points for G2. Deliberately parallel to g1Points: gnark-crypto's
// G1 and G2 types share no interface, and the sizes and the error's group differ.
func g2Points(b []byte, what string) ([]bls12381.G2Affine, error) {
	out := make([]bls12381.G2Affine, len(b)/192)
	err := forEach(len(out), func(i int) error {
		out[i] = g2(b[192*i:])
		if !out[i].IsOnCurve() || !out[i].IsInSubGroup() {
			return fmt.Errorf("circomconv: %s point %d is not a BLS12-381 G2 point of the prime-order subgroup", what, i)
		}
		return nil
	})
	return out, err
}

// forEach runs check for every index in [0, n) on all cores and returns the error of
// the lowest index that failed, so the error does not depend on scheduling.
func forEach(n int, check func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), max(n/256, 1))
	chunk := (n + workers - 1) / workers
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w * chunk; i < min(n, (w+1)*chunk); i++ {
				if err := check(i); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// ProvingKey converts z's proving key to zkhost's, in snarkjs's H form: A, B1 and B2
// become G1A, G1B and G2B with gnark's handling of points at infinity (a wire whose
// point is infinity has its InfinityA or InfinityB flag set and no point), C becomes
// G1K (the private wires), and H becomes G1Z as it is. Every point is checked.
func ProvingKey(z *circom.ZKey) (*keyfile.BLS12381Key, error) {
	if err := checkCurve(z.Curve, "the zkey"); err != nil {
		return nil, err
	}
	k := &keyfile.BLS12381Key{
		DomainSize: uint64(z.DomainSize),
		NbWires:    uint64(z.NumVars),
		NbPublic:   uint64(z.NumPublic) + 1,
		HForm:      keyfile.HFormSnarkjs,
	}
	small, err := g1Points(append(append(append([]byte{}, z.Alpha1...), z.Beta1...), z.Delta1...), "alpha1, beta1, delta1:")
	if err != nil {
		return nil, err
	}
	k.G1Alpha, k.G1Beta, k.G1Delta = small[0], small[1], small[2]
	small2, err := g2Points(append(append([]byte{}, z.Beta2...), z.Delta2...), "beta2, delta2:")
	if err != nil {
		return nil, err
	}
	k.G2Beta, k.G2Delta = small2[0], small2[1]

	a, err := g1Points(z.A, "A section")
	if err != nil {
		return nil, err
	}
	b1, err := g1Points(z.B1, "B1 section")
	if err != nil {
		return nil, err
	}
	b2, err := g2Points(z.B2, "B2 section")
	if err != nil {
		return nil, err
	}
	if k.G1K, err = g1Points(z.C, "C section"); err != nil {
		return nil, err
	}
	if k.G1Z, err = g1Points(z.H, "H section"); err != nil {
		return nil, err
	}

	k.InfinityA = make([]bool, k.NbWires)
	k.InfinityB = make([]bool, k.NbWires)
	for i := range a {
		if k.InfinityA[i] = a[i].IsInfinity(); !k.InfinityA[i] {
			k.G1A = append(k.G1A, a[i])
		}
		// B1 and B2 are one polynomial's value at τ in each group: zero in both or in
		// neither.
		if b1[i].IsInfinity() != b2[i].IsInfinity() {
			return nil, fmt.Errorf("circomconv: wire %d's B1 point is %s infinity but its B2 point is %s: the zkey's B sections disagree",
				i, isOrNot(b1[i].IsInfinity()), isOrNot(b2[i].IsInfinity()))
		}
		if k.InfinityB[i] = b1[i].IsInfinity(); !k.InfinityB[i] {
			k.G1B = append(k.G1B, b1[i])
			k.G2B = append(k.G2B, b2[i])
		}
	}
	if err := k.Check(); err != nil {
		return nil, fmt.Errorf("circomconv: %w", err)
	}
	return k, nil
}

func isOrNot(b bool) string {
	if b {
		return "at"
	}
	return "not at"
}

// VerifyingKey converts z's verifying key to gnark's (precomputed, ready for
// groth16.Verify): alpha1, beta1, delta1, beta2, gamma2, delta2, and IC as the public
// wires' points K.
func VerifyingKey(z *circom.ZKey) (*groth16.VerifyingKey, error) {
	if err := checkCurve(z.Curve, "the zkey"); err != nil {
		return nil, err
	}
	vk := &groth16.VerifyingKey{}
	small, err := g1Points(append(append(append([]byte{}, z.Alpha1...), z.Beta1...), z.Delta1...), "alpha1, beta1, delta1:")
	if err != nil {
		return nil, err
	}
	vk.G1.Alpha, vk.G1.Beta, vk.G1.Delta = small[0], small[1], small[2]
	small2, err := g2Points(append(append(append([]byte{}, z.Beta2...), z.Gamma2...), z.Delta2...), "beta2, gamma2, delta2:")
	if err != nil {
		return nil, err
	}
	vk.G2.Beta, vk.G2.Gamma, vk.G2.Delta = small2[0], small2[1], small2[2]
	if vk.G1.K, err = g1Points(z.IC, "IC section"); err != nil {
		return nil, err
	}
	vk.CommitmentKeys = []pedersen.VerifyingKey{}
	vk.PublicAndCommitmentCommitted = [][]int{}
	if err := vk.Precompute(); err != nil {
		return nil, fmt.Errorf("circomconv: verifying key: %w", err)
	}
	return vk, nil
}
