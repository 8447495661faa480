package sdk

import (
	"bytes"
	"fmt"
	"io"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bn254"
)

// Proof is a Groth16 proof without commitments, in gnark-crypto's affine points of the
// curve whose G1 and G2 points are G1 and G2: A and C (Ar, Krs) in G1, B (Bs) in G2,
// named as gnark names them. BLS12381Proof and BN254Proof are the two curves'.
// ProveResult.Proof holds its encoding (WriteTo). The host reads that encoding with
// gnark and verifies every proof; sdk/keyconv converts a Proof to gnark's type.
type Proof[G1, G2 any] struct {
	Ar, Krs G1
	Bs      G2
}

// BLS12381Proof is a BLS12-381 proof.
type BLS12381Proof = Proof[bls12381.G1Affine, bls12381.G2Affine]

// BN254Proof is a BN254 proof.
type BN254Proof = Proof[bn254.G1Affine, bn254.G2Affine]

// pointEncoder is what gnark-crypto's per-curve encoders have in common.
type pointEncoder interface {
	Encode(v any) error
	BytesWritten() int64
}

// WriteTo writes p in gnark's encoding of a Groth16 proof of its curve (its
// Proof.WriteTo): Ar, Bs and Krs compressed, then an empty commitment list and the
// point at infinity as the commitments' proof of knowledge: 244 bytes in all on
// BLS12-381, 164 on BN254.
func (p *Proof[G1, G2]) WriteTo(w io.Writer) (int64, error) {
	var enc pointEncoder
	var noCommitments, noPok any
	switch any(p).(type) {
	case *BLS12381Proof:
		enc, noCommitments, noPok = bls12381.NewEncoder(w), []bls12381.G1Affine{}, &bls12381.G1Affine{}
	case *BN254Proof:
		enc, noCommitments, noPok = bn254.NewEncoder(w), []bn254.G1Affine{}, &bn254.G1Affine{}
	default:
		return 0, fmt.Errorf("sdk: no encoding for a proof of %T points", p.Ar)
	}
	for _, v := range []any{&p.Ar, &p.Bs, &p.Krs, noCommitments, noPok} {
		if err := enc.Encode(v); err != nil {
			return enc.BytesWritten(), err
		}
	}
	return enc.BytesWritten(), nil
}

// MarshalBinary returns WriteTo's bytes.
func (p *Proof[G1, G2]) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	if _, err := p.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
