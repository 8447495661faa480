package keyfile

import (
	"fmt"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bn254"
)

// HForm says in which basis a key's G1Z points are, and so which scalars a prover
// multiplies them by: the Groth16 term for the quotient H = (A·B − C)/Z is the same
// point, but gnark's setup and snarkjs's give it by different points, and turning one
// basis into the other needs the setup's secret τ.
type HForm uint32

const (
	// HFormGnark is gnark's (the zero value, so every key written before the field
	// existed reads as it): DomainSize−1 points, by which the coefficients of
	// (A·B − C)/Z are multiplied, bit-reversed (refprover.ComputeH).
	HFormGnark HForm = 0
	// HFormSnarkjs is snarkjs's "odd coset evaluations": DomainSize points, by which
	// the values of A·B − C at ρ·ωⁱ are multiplied, ρ a primitive 2N-th root of unity
	// and ω = ρ² (refprover.ComputeHSnarkjs); the setup folded 1/Z, a constant on that
	// coset, into the points. Keys imported from a snarkjs .zkey have it.
	HFormSnarkjs HForm = 1
)

// String names the form as docs/keyfile.md and error messages spell it.
// Deliberately parallel to sdk.PartitionFormat's String: see why there.
func (f HForm) String() string {
	switch f {
	case HFormGnark:
		return "gnark"
	case HFormSnarkjs:
		return "snarkjs odd-coset evaluations"
	}
	return fmt.Sprintf("h_form(%d)", uint32(f))
}

// NbZ is the number of G1Z points a key of domain size n has in form f.
func (f HForm) NbZ(n uint64) uint64 {
	if f == HFormSnarkjs {
		return n
	}
	return n - 1
}

// ProvingKey is a Groth16 proving key as backends use it, over the curve whose affine
// G1 and G2 points are G1 and G2 (gnark-crypto's types; sdk/curve binds them):
// BLS12381Key and BN254Key. sdk/keyconv converts gnark's keys to and from it. Slices
// may alias a read-only memory mapping: never write to them.
type ProvingKey[G1, G2 any] struct {
	DomainSize uint64 // N, a power of two ≥ nbConstraints (gnark's pk.Domain.Cardinality)
	NbWires    uint64 // len(W)
	NbPublic   uint64 // public wires incl. the constant 1 wire (pk.G1.K covers wires [NbPublic:])
	HForm      HForm  // the basis of G1Z: gnark's unless the key came from a snarkjs .zkey

	G1Alpha, G1Beta, G1Delta G1
	G1A                      []G1 // gnark's pk.G1.A: points for wires where InfinityA is false
	G1B                      []G1 // pk.G1.B likewise with InfinityB
	G1K                      []G1 // pk.G1.K, len NbWires-NbPublic
	G1Z                      []G1 // pk.G1.Z, len HForm.NbZ(DomainSize): DomainSize-1 in gnark's form (deg H ≤ N-2; bit-reversed, as gnark's setup leaves it)

	G2Beta, G2Delta G2
	G2B             []G2 // pk.G2.B, same wires as G1B

	InfinityA, InfinityB []bool // len NbWires; true where the wire's A (B) point is infinity
}

// BLS12381Key is a BLS12-381 proving key.
type BLS12381Key = ProvingKey[bls12381.G1Affine, bls12381.G2Affine]

// BN254Key is a BN254 proving key.
type BN254Key = ProvingKey[bn254.G1Affine, bn254.G2Affine]

// Check verifies that the lengths of k's slices agree with its sizes. Write checks
// the key it writes, and Open the key it reads.
func (k *ProvingKey[G1, G2]) Check() error {
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
	if want := k.NbWires - k.NbInfinityA(); uint64(len(k.G1A)) != want {
		return fmt.Errorf("keyfile: g1_a has %d points, want %d (wires whose inf_a is false)", len(k.G1A), want)
	}
	if want := k.NbWires - k.NbInfinityB(); uint64(len(k.G1B)) != want {
		return fmt.Errorf("keyfile: g1_b has %d points, want %d (wires whose inf_b is false)", len(k.G1B), want)
	}
	if len(k.G2B) != len(k.G1B) {
		return fmt.Errorf("keyfile: g2_b has %d points, want %d (as many as g1_b)", len(k.G2B), len(k.G1B))
	}
	if want := k.NbWires - k.NbPublic; uint64(len(k.G1K)) != want {
		return fmt.Errorf("keyfile: g1_k has %d points, want %d (private wires)", len(k.G1K), want)
	}
	if k.HForm != HFormGnark && k.HForm != HFormSnarkjs {
		return fmt.Errorf("keyfile: unknown H form %d, want %d (%s) or %d (%s)", uint32(k.HForm), HFormGnark, HFormGnark, HFormSnarkjs, HFormSnarkjs)
	}
	if want := k.HForm.NbZ(k.DomainSize); uint64(len(k.G1Z)) != want {
		return fmt.Errorf("keyfile: g1_z has %d points, want %d for a domain of %d in %s form", len(k.G1Z), want, k.DomainSize, k.HForm)
	}
	return nil
}

// NbInfinityA is how many wires' A points are at infinity (InfinityA set):
// gnark's ProvingKey.NbInfinityA, and what G1A leaves out.
func (k *ProvingKey[G1, G2]) NbInfinityA() uint64 { return countTrue(k.InfinityA) }

// NbInfinityB is NbInfinityA for the B points (InfinityB, G1B and G2B).
func (k *ProvingKey[G1, G2]) NbInfinityB() uint64 { return countTrue(k.InfinityB) }

func countTrue(b []bool) uint64 {
	var n uint64
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}
