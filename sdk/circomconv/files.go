package circomconv

import (
	"bytes"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	groth16 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/sdk"
)

// SnarkjsFiles turns a proof and its public witness as zkhost hands them out (the
// <i>.proof and <i>.public files: gnark's Proof.WriteTo and the public witness's
// MarshalBinary) into snarkjs's proof.json and public.json (ProofJSON, PublicJSON).
// The proof's points are decoded with gnark's checks (on the curve, in the subgroup).
func SnarkjsFiles(proof, publicWitness []byte) (proofJSON, publicJSON []byte, err error) {
	var p groth16.Proof
	r := bytes.NewReader(proof)
	if _, err := p.ReadFrom(r); err != nil {
		return nil, nil, fmt.Errorf("circomconv: the proof is not a gnark BLS12-381 Groth16 proof: %w", err)
	}
	if r.Len() != 0 || len(p.Commitments) != 0 {
		return nil, nil, fmt.Errorf("circomconv: the proof has %d trailing bytes and %d commitments, want none", r.Len(), len(p.Commitments))
	}
	w, err := witness.New(ecc.BLS12_381.ScalarField())
	if err != nil {
		return nil, nil, err
	}
	if err := w.UnmarshalBinary(publicWitness); err != nil {
		return nil, nil, fmt.Errorf("circomconv: the public witness: %w", err)
	}
	values, ok := w.Vector().(fr.Vector)
	if !ok {
		return nil, nil, fmt.Errorf("circomconv: the public witness holds %T, want BLS12-381 scalars", w.Vector())
	}
	return ProofJSON(&sdk.BLS12381Proof{Ar: p.Ar, Bs: p.Bs, Krs: p.Krs}), PublicJSON(values), nil
}
