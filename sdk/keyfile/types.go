package keyfile

import (
	"errors"
	"fmt"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
)

// ProvingKey is a BLS12-381 Groth16 proving key as backends use it. Slices may alias a
// read-only memory mapping: never write to them.
type ProvingKey struct {
	DomainSize uint64 // N, a power of two ≥ nbConstraints (gnark's pk.Domain.Cardinality)
	NbWires    uint64 // len(W)
	NbPublic   uint64 // public wires incl. the constant 1 wire (pk.G1.K covers wires [NbPublic:])

	G1Alpha, G1Beta, G1Delta bls12381.G1Affine
	G1A                      []bls12381.G1Affine // gnark's pk.G1.A: points for wires where InfinityA is false
	G1B                      []bls12381.G1Affine // pk.G1.B likewise with InfinityB
	G1K                      []bls12381.G1Affine // pk.G1.K, len NbWires-NbPublic
	G1Z                      []bls12381.G1Affine // pk.G1.Z, len DomainSize-1 (deg H ≤ N-2; bit-reversed, as gnark's setup leaves it)

	G2Beta, G2Delta bls12381.G2Affine
	G2B             []bls12381.G2Affine // pk.G2.B, same wires as G1B

	InfinityA, InfinityB []bool // len NbWires; true where the wire's A (B) point is infinity
}

// ErrCommitments is returned by FromGnark for a proving key with Pedersen commitment keys,
// which the zkhost proving split does not support.
var ErrCommitments = errors.New("keyfile: proving keys with commitments (Pedersen commitment keys) are not supported")

// FromGnark copies the parts of a gnark BLS12-381 proving key that backends need into a
// ProvingKey. The result shares the slices of pk (no deep copy). It refuses a key with
// commitment keys and checks that the lengths are consistent with each other.
func FromGnark(pk *groth16_bls12381.ProvingKey) (*ProvingKey, error) {
	if pk == nil {
		return nil, errors.New("keyfile: nil proving key")
	}
	if len(pk.CommitmentKeys) != 0 {
		return nil, fmt.Errorf("%w (the key has %d)", ErrCommitments, len(pk.CommitmentKeys))
	}
	nbWires := uint64(len(pk.InfinityA))
	k := &ProvingKey{
		DomainSize: pk.Domain.Cardinality,
		NbWires:    nbWires,
		G1Alpha:    pk.G1.Alpha,
		G1Beta:     pk.G1.Beta,
		G1Delta:    pk.G1.Delta,
		G1A:        pk.G1.A,
		G1B:        pk.G1.B,
		G1K:        pk.G1.K,
		G1Z:        pk.G1.Z,
		G2Beta:     pk.G2.Beta,
		G2Delta:    pk.G2.Delta,
		G2B:        pk.G2.B,
		InfinityA:  pk.InfinityA,
		InfinityB:  pk.InfinityB,
	}
	if uint64(len(pk.G1.K)) > nbWires {
		return nil, fmt.Errorf("keyfile: gnark key has %d K points but only %d wires", len(pk.G1.K), nbWires)
	}
	k.NbPublic = nbWires - uint64(len(pk.G1.K))
	if err := k.check(); err != nil {
		return nil, err
	}
	return k, nil
}

// ToGnark builds a gnark BLS12-381 proving key from k, for tests and the converter. The
// result shares k's slices, so when k aliases a mapping the gnark key must not outlive the
// File and must not be written to.
func (k *ProvingKey) ToGnark() *groth16_bls12381.ProvingKey {
	pk := &groth16_bls12381.ProvingKey{}
	pk.Domain = *fft.NewDomain(k.DomainSize)
	pk.G1.Alpha, pk.G1.Beta, pk.G1.Delta = k.G1Alpha, k.G1Beta, k.G1Delta
	pk.G1.A, pk.G1.B, pk.G1.K, pk.G1.Z = k.G1A, k.G1B, k.G1K, k.G1Z
	pk.G2.Beta, pk.G2.Delta, pk.G2.B = k.G2Beta, k.G2Delta, k.G2B
	pk.InfinityA, pk.InfinityB = k.InfinityA, k.InfinityB
	pk.NbInfinityA = countTrue(k.InfinityA)
	pk.NbInfinityB = countTrue(k.InfinityB)
	return pk
}

// check verifies that the lengths of k's slices agree with its sizes.
func (k *ProvingKey) check() error {
	if k.DomainSize == 0 || k.DomainSize&(k.DomainSize-1) != 0 {
		return fmt.Errorf("keyfile: domain size %d is not a power of two", k.DomainSize)
	}
	if k.NbPublic == 0 || k.NbPublic > k.NbWires {
		return fmt.Errorf("keyfile: %d public wires out of %d wires (need 1 ≤ public ≤ wires)", k.NbPublic, k.NbWires)
	}
	if uint64(len(k.InfinityA)) != k.NbWires {
		return fmt.Errorf("keyfile: inf_a has %d entries, want one per wire (%d)", len(k.InfinityA), k.NbWires)
	}
	if uint64(len(k.InfinityB)) != k.NbWires {
		return fmt.Errorf("keyfile: inf_b has %d entries, want one per wire (%d)", len(k.InfinityB), k.NbWires)
	}
	if want := k.NbWires - countTrue(k.InfinityA); uint64(len(k.G1A)) != want {
		return fmt.Errorf("keyfile: g1_a has %d points, want %d (wires whose inf_a is false)", len(k.G1A), want)
	}
	if want := k.NbWires - countTrue(k.InfinityB); uint64(len(k.G1B)) != want {
		return fmt.Errorf("keyfile: g1_b has %d points, want %d (wires whose inf_b is false)", len(k.G1B), want)
	}
	if len(k.G2B) != len(k.G1B) {
		return fmt.Errorf("keyfile: g2_b has %d points, want %d (as many as g1_b)", len(k.G2B), len(k.G1B))
	}
	if want := k.NbWires - k.NbPublic; uint64(len(k.G1K)) != want {
		return fmt.Errorf("keyfile: g1_k has %d points, want %d (private wires)", len(k.G1K), want)
	}
	if uint64(len(k.G1Z)) != k.DomainSize-1 {
		return fmt.Errorf("keyfile: g1_z has %d points, want the domain size minus one (%d)", len(k.G1Z), k.DomainSize-1)
	}
	return nil
}

func countTrue(b []bool) uint64 {
	var n uint64
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}
