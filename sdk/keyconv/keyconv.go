package keyconv

import (
	"errors"
	"fmt"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	fft_bn254 "github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	groth16_bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// ErrCommitments is returned by FromGnark for a proving key with Pedersen commitment keys,
// which the zkhost proving split does not support.
var ErrCommitments = errors.New("keyconv: proving keys with commitments (Pedersen commitment keys) are not supported")

// FromGnark copies the parts of a gnark BLS12-381 proving key that backends need into a
// keyfile.BLS12381Key. The result shares the slices of pk (no deep copy). It refuses a key
// with commitment keys and checks that the lengths are consistent with each other.
func FromGnark(pk *groth16_bls12381.ProvingKey) (*keyfile.BLS12381Key, error) {
	if pk == nil {
		return nil, errors.New("keyconv: nil proving key")
	}
	return fromGnark(pk.Domain.Cardinality, len(pk.CommitmentKeys), &keyfile.BLS12381Key{
		G1Alpha: pk.G1.Alpha, G1Beta: pk.G1.Beta, G1Delta: pk.G1.Delta,
		G1A: pk.G1.A, G1B: pk.G1.B, G1K: pk.G1.K, G1Z: pk.G1.Z,
		G2Beta: pk.G2.Beta, G2Delta: pk.G2.Delta, G2B: pk.G2.B,
		InfinityA: pk.InfinityA, InfinityB: pk.InfinityB,
	})
}

// FromGnarkBN254 is FromGnark for a gnark BN254 proving key. Deliberately parallel
// to FromGnark (and ToGnarkBN254 to ToGnark): gnark's per-curve key types share
// field names but no types, so only the copy of their fields is written twice.
func FromGnarkBN254(pk *groth16_bn254.ProvingKey) (*keyfile.BN254Key, error) {
	if pk == nil {
		return nil, errors.New("keyconv: nil proving key")
	}
	return fromGnark(pk.Domain.Cardinality, len(pk.CommitmentKeys), &keyfile.BN254Key{
		G1Alpha: pk.G1.Alpha, G1Beta: pk.G1.Beta, G1Delta: pk.G1.Delta,
		G1A: pk.G1.A, G1B: pk.G1.B, G1K: pk.G1.K, G1Z: pk.G1.Z,
		G2Beta: pk.G2.Beta, G2Delta: pk.G2.Delta, G2B: pk.G2.B,
		InfinityA: pk.InfinityA, InfinityB: pk.InfinityB,
	})
}

// fromGnark completes k, gnark's points copied into it, with the sizes gnark's key
// implies (domainSize, the wires from the infinity flags, the public wires from the K
// points), refuses commitment keys and checks the result.
func fromGnark[G1, G2 any](domainSize uint64, nbCommitmentKeys int, k *keyfile.ProvingKey[G1, G2]) (*keyfile.ProvingKey[G1, G2], error) {
	if nbCommitmentKeys != 0 {
		return nil, fmt.Errorf("%w (the key has %d)", ErrCommitments, nbCommitmentKeys)
	}
	k.DomainSize = domainSize
	k.NbWires = uint64(len(k.InfinityA))
	if uint64(len(k.G1K)) > k.NbWires {
		return nil, fmt.Errorf("keyconv: gnark key has %d K points but only %d wires", len(k.G1K), k.NbWires)
	}
	k.NbPublic = k.NbWires - uint64(len(k.G1K))
	if err := k.Check(); err != nil {
		return nil, err
	}
	return k, nil
}

// ToGnark builds a gnark BLS12-381 proving key from k, for gnark's own prover (tests,
// the host's comparisons). The result shares k's slices, so when k aliases a mapping
// the gnark key must not outlive the keyfile.File and must not be written to.
func ToGnark(k *keyfile.BLS12381Key) *groth16_bls12381.ProvingKey {
	pk := &groth16_bls12381.ProvingKey{}
	pk.Domain = *fft.NewDomain(k.DomainSize)
	pk.G1.Alpha, pk.G1.Beta, pk.G1.Delta = k.G1Alpha, k.G1Beta, k.G1Delta
	pk.G1.A, pk.G1.B, pk.G1.K, pk.G1.Z = k.G1A, k.G1B, k.G1K, k.G1Z
	pk.G2.Beta, pk.G2.Delta, pk.G2.B = k.G2Beta, k.G2Delta, k.G2B
	pk.InfinityA, pk.InfinityB = k.InfinityA, k.InfinityB
	pk.NbInfinityA = k.NbInfinityA()
	pk.NbInfinityB = k.NbInfinityB()
	return pk
}

// ToGnarkBN254 is ToGnark for a BN254 key.
func ToGnarkBN254(k *keyfile.BN254Key) *groth16_bn254.ProvingKey {
	pk := &groth16_bn254.ProvingKey{}
	pk.Domain = *fft_bn254.NewDomain(k.DomainSize)
	pk.G1.Alpha, pk.G1.Beta, pk.G1.Delta = k.G1Alpha, k.G1Beta, k.G1Delta
	pk.G1.A, pk.G1.B, pk.G1.K, pk.G1.Z = k.G1A, k.G1B, k.G1K, k.G1Z
	pk.G2.Beta, pk.G2.Delta, pk.G2.B = k.G2Beta, k.G2Delta, k.G2B
	pk.InfinityA, pk.InfinityB = k.InfinityA, k.InfinityB
	pk.NbInfinityA = k.NbInfinityA()
	pk.NbInfinityB = k.NbInfinityB()
	return pk
}

// ProofToGnark returns p as gnark's proof, for groth16.Verify. Its encoding
// (WriteTo) is the same bytes as p's.
func ProofToGnark(p *sdk.BLS12381Proof) *groth16_bls12381.Proof {
	return &groth16_bls12381.Proof{Ar: p.Ar, Bs: p.Bs, Krs: p.Krs, Commitments: []bls12381.G1Affine{}}
}

// ProofToGnarkBN254 is ProofToGnark for a BN254 proof.
func ProofToGnarkBN254(p *sdk.BN254Proof) *groth16_bn254.Proof {
	return &groth16_bn254.Proof{Ar: p.Ar, Bs: p.Bs, Krs: p.Krs, Commitments: []bn254.G1Affine{}}
}
