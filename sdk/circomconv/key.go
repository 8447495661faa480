package circomconv

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	pedersen_bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381/fr/pedersen"
	pedersen_bn254 "github.com/consensys/gnark-crypto/ecc/bn254/fr/pedersen"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	groth16_bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"github.com/zkhost/zkhost/sdk/circom"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// ProvingKey converts z's proving key to zkhost's, over the curve whose affine points
// are G1 and G2 (keyfile.BLS12381Key, keyfile.BN254Key), in snarkjs's H form: A, B1
// and B2 become G1A, G1B and G2B with gnark's handling of points at infinity (a wire
// whose point is infinity has its InfinityA or InfinityB flag set and no point), C
// becomes G1K (the private wires), and H becomes G1Z as it is. It refuses a zkey of
// another curve, and checks every point is on the curve and in the prime-order
// subgroup.
func ProvingKey[G1, G2 any](z *circom.ZKey) (*keyfile.ProvingKey[G1, G2], error) {
	id, err := pointCurve[G1, G2]()
	if err != nil {
		return nil, err
	}
	if err := checkCurve(z.Curve, id, "the zkey"); err != nil {
		return nil, err
	}
	k := &keyfile.ProvingKey[G1, G2]{
		DomainSize: uint64(z.DomainSize),
		NbWires:    uint64(z.NumVars),
		NbPublic:   uint64(z.NumPublic) + 1,
		HForm:      keyfile.HFormSnarkjs,
	}
	if err := decodeNamed([]namedPoint[G1]{{&k.G1Alpha, z.Alpha1, "alpha1"}, {&k.G1Beta, z.Beta1, "beta1"}, {&k.G1Delta, z.Delta1, "delta1"}}); err != nil {
		return nil, err
	}
	if err := decodeNamed([]namedPoint[G2]{{&k.G2Beta, z.Beta2, "beta2"}, {&k.G2Delta, z.Delta2, "delta2"}}); err != nil {
		return nil, err
	}

	a, err := decodePoints[G1](z.A, "A section")
	if err != nil {
		return nil, err
	}
	b1, err := decodePoints[G1](z.B1, "B1 section")
	if err != nil {
		return nil, err
	}
	b2, err := decodePoints[G2](z.B2, "B2 section")
	if err != nil {
		return nil, err
	}
	// The reader checked these counts; a ZKey built otherwise may disagree, and the
	// loop below indexes all three by wire.
	if uint64(len(a)) != k.NbWires || uint64(len(b1)) != k.NbWires || uint64(len(b2)) != k.NbWires {
		return nil, fmt.Errorf("circomconv: the zkey has %d wires but %d A, %d B1 and %d B2 points", k.NbWires, len(a), len(b1), len(b2))
	}
	if k.G1K, err = decodePoints[G1](z.C, "C section"); err != nil {
		return nil, err
	}
	if k.G1Z, err = decodePoints[G1](z.H, "H section"); err != nil {
		return nil, err
	}

	k.InfinityA = make([]bool, k.NbWires)
	k.InfinityB = make([]bool, k.NbWires)
	for i := range a {
		if k.InfinityA[i] = isInfinity(&a[i]); !k.InfinityA[i] {
			k.G1A = append(k.G1A, a[i])
		}
		// B1 and B2 are one polynomial's value at τ in each group: zero in both or in
		// neither.
		inf1, inf2 := isInfinity(&b1[i]), isInfinity(&b2[i])
		if inf1 != inf2 {
			return nil, fmt.Errorf("circomconv: wire %d's B1 point is %s infinity but its B2 point is %s: the zkey's B sections disagree",
				i, isOrNot(inf1), isOrNot(inf2))
		}
		if k.InfinityB[i] = inf1; !k.InfinityB[i] {
			k.G1B = append(k.G1B, b1[i])
			k.G2B = append(k.G2B, b2[i])
		}
	}
	if err := k.Check(); err != nil {
		return nil, fmt.Errorf("circomconv: %w", err)
	}
	return k, nil
}

// namedPoint is one of the zkey's single points (alpha1, beta2, ...): its bytes, its
// name for errors, and where it goes.
type namedPoint[P any] struct {
	dst  *P
	b    []byte
	name string
}

// decodeNamed decodes and checks each point into its destination.
func decodeNamed[P any](points []namedPoint[P]) error {
	for _, p := range points {
		var err error
		if *p.dst, err = decodePoint[P](p.b, p.name); err != nil {
			return err
		}
	}
	return nil
}

// isInfinity reports whether *p, a point type layout knows, is the point at infinity.
func isInfinity[P any](p *P) bool { return any(p).(point).IsInfinity() }

func isOrNot(b bool) string {
	if b {
		return "at"
	}
	return "not at"
}

// VerifyingKey converts z's verifying key to gnark's of z's curve (a
// *groth16_bls12381.VerifyingKey or *groth16_bn254.VerifyingKey behind gnark's
// interface), precomputed and ready for groth16.Verify: alpha1, beta1, delta1, beta2,
// gamma2, delta2, and IC as the public wires' points K. Every point is checked.
func VerifyingKey(z *circom.ZKey) (groth16.VerifyingKey, error) {
	// gnark's verifying keys are one struct per curve: the points are filled in by
	// one generic function, and only the struct's type is chosen here.
	switch z.Curve {
	case ecc.BLS12_381:
		vk := &groth16_bls12381.VerifyingKey{CommitmentKeys: []pedersen_bls12381.VerifyingKey{}, PublicAndCommitmentCommitted: [][]int{}}
		if err := verifyingKeyPoints(z, &vk.G1.Alpha, &vk.G1.Beta, &vk.G1.Delta, &vk.G1.K, &vk.G2.Beta, &vk.G2.Gamma, &vk.G2.Delta); err != nil {
			return nil, err
		}
		return precomputed(vk)
	case ecc.BN254:
		vk := &groth16_bn254.VerifyingKey{CommitmentKeys: []pedersen_bn254.VerifyingKey{}, PublicAndCommitmentCommitted: [][]int{}}
		if err := verifyingKeyPoints(z, &vk.G1.Alpha, &vk.G1.Beta, &vk.G1.Delta, &vk.G1.K, &vk.G2.Beta, &vk.G2.Gamma, &vk.G2.Delta); err != nil {
			return nil, err
		}
		return precomputed(vk)
	}
	return nil, fmt.Errorf("circomconv: the zkey is for %s, want BLS12-381 or BN254", z.Curve)
}

// verifyingKeyPoints decodes and checks the verifying key's points of z into the
// fields of a gnark verifying key of z's curve.
func verifyingKeyPoints[G1, G2 any](z *circom.ZKey, alpha, beta, delta *G1, k *[]G1, beta2, gamma2, delta2 *G2) error {
	if err := decodeNamed([]namedPoint[G1]{{alpha, z.Alpha1, "alpha1"}, {beta, z.Beta1, "beta1"}, {delta, z.Delta1, "delta1"}}); err != nil {
		return err
	}
	if err := decodeNamed([]namedPoint[G2]{{beta2, z.Beta2, "beta2"}, {gamma2, z.Gamma2, "gamma2"}, {delta2, z.Delta2, "delta2"}}); err != nil {
		return err
	}
	var err error
	if *k, err = decodePoints[G1](z.IC, "IC section"); err != nil {
		return err
	}
	if want := uint64(z.NumPublic) + 1; uint64(len(*k)) != want {
		return fmt.Errorf("circomconv: the zkey has %d IC points, want %d (wire 0 and %d public values)", len(*k), want, z.NumPublic)
	}
	return nil
}

// precomputed precomputes vk's pairing and negated points, which groth16.Verify uses.
func precomputed(vk interface {
	groth16.VerifyingKey
	Precompute() error
}) (groth16.VerifyingKey, error) {
	if err := vk.Precompute(); err != nil {
		return nil, fmt.Errorf("circomconv: verifying key: %w", err)
	}
	return vk, nil
}
