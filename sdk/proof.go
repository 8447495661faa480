package sdk

import (
	"bytes"
	"io"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// Proof is a Groth16 proof over BLS12-381, without commitments, in gnark-crypto's
// affine points: A and C (Ar, Krs) in G1, B (Bs) in G2, named as gnark names them.
// ProveResult.Proof holds its encoding (WriteTo). The host reads that encoding with
// gnark and verifies every proof; sdk/keyconv converts a Proof to gnark's type.
type Proof struct {
	Ar, Krs bls12381.G1Affine
	Bs      bls12381.G2Affine
}

// WriteTo writes p in gnark's encoding of a BLS12-381 Groth16 proof (its
// Proof.WriteTo): Ar, Bs and Krs compressed, then an empty commitment list and the
// point at infinity as the commitments' proof of knowledge, 244 bytes in all.
func (p *Proof) WriteTo(w io.Writer) (int64, error) {
	enc := bls12381.NewEncoder(w)
	var noPok bls12381.G1Affine
	for _, v := range []any{&p.Ar, &p.Bs, &p.Krs, []bls12381.G1Affine{}, &noPok} {
		if err := enc.Encode(v); err != nil {
			return enc.BytesWritten(), err
		}
	}
	return enc.BytesWritten(), nil
}

// MarshalBinary returns WriteTo's bytes.
func (p *Proof) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	if _, err := p.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
