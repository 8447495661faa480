package circomconv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/consensys/gnark-crypto/ecc"
	fr_bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	fr_bn254 "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	groth16_bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/curve"
)

// ProofCurve returns the curve of a proof in the encoding SnarkjsFiles takes, from its
// size alone: gnark's compressed encoding of a proof without commitments has a size
// of its own on each curve (244 bytes on BLS12-381, 164 on BN254), and SnarkjsFiles
// takes no other. It lets a client that holds only a proof and its public witness
// (a job's outputs) write snarkjs's files.
func ProofCurve(proof []byte) (ecc.ID, error) {
	for _, id := range curve.IDs {
		if want, err := groth16.NewProof(id).WriteTo(io.Discard); err == nil && int64(len(proof)) == want {
			return id, nil
		}
	}
	return ecc.UNKNOWN, fmt.Errorf("circomconv: a proof of %d bytes is gnark's compressed encoding of no BLS12-381 or BN254 Groth16 proof without commitments", len(proof))
}

// SnarkjsFilesOf is SnarkjsFiles for a proof whose curve its size says (ProofCurve).
func SnarkjsFilesOf(proof, publicWitness []byte) (proofJSON, publicJSON []byte, err error) {
	id, err := ProofCurve(proof)
	if err != nil {
		return nil, nil, err
	}
	return SnarkjsFiles(id, proof, publicWitness)
}

// SnarkjsFiles turns a proof on curve id and its public witness as zkhost hands them
// out (the <i>.proof and <i>.public files: gnark's Proof.WriteTo, which is
// sdk.Proof.WriteTo, and the public witness's MarshalBinary) into snarkjs's
// proof.json and public.json (ProofJSON, PublicJSON). The proof's points are decoded
// with gnark's checks (on the curve, in the subgroup).
func SnarkjsFiles(id ecc.ID, proof, publicWitness []byte) (proofJSON, publicJSON []byte, err error) {
	if curve.SnarkjsName(id) == "" {
		return nil, nil, fmt.Errorf("circomconv: no snarkjs files for a proof on %s, only on BLS12-381 or BN254", id)
	}
	// gnark's decoders allocate the counts they read before reading what they count
	// (a proof's commitments, a witness's values), so the sizes are checked first.
	// A proof without commitments, all points compressed, has the size of gnark's
	// encoding of an empty proof; anything else is longer.
	want, err := groth16.NewProof(id).WriteTo(io.Discard)
	if err != nil {
		return nil, nil, err
	}
	if int64(len(proof)) != want {
		return nil, nil, fmt.Errorf("circomconv: the proof has %d bytes, want %d (gnark's compressed encoding of a %s Groth16 proof without commitments)",
			len(proof), want, curveName(id))
	}
	gp := groth16.NewProof(id)
	if _, err := gp.ReadFrom(bytes.NewReader(proof)); err != nil {
		return nil, nil, fmt.Errorf("circomconv: the proof is not a gnark %s Groth16 proof: %w", curveName(id), err)
	}
	// gnark's proofs are one struct per curve; the rest is ProofJSON's.
	switch p := gp.(type) {
	case *groth16_bls12381.Proof:
		proofJSON = ProofJSON(&sdk.BLS12381Proof{Ar: p.Ar, Bs: p.Bs, Krs: p.Krs})
	case *groth16_bn254.Proof:
		proofJSON = ProofJSON(&sdk.BN254Proof{Ar: p.Ar, Bs: p.Bs, Krs: p.Krs})
	}

	if err := checkPublicWitnessSize(publicWitness); err != nil {
		return nil, nil, err
	}
	w, err := witness.New(id.ScalarField())
	if err != nil {
		return nil, nil, err
	}
	if err := w.UnmarshalBinary(publicWitness); err != nil {
		return nil, nil, fmt.Errorf("circomconv: the public witness: %w", err)
	}
	// gnark's witness holds its curve's fr.Vector; the rest is PublicJSON's.
	switch v := w.Vector().(type) {
	case fr_bls12381.Vector:
		publicJSON = PublicJSON(v)
	case fr_bn254.Vector:
		publicJSON = PublicJSON(v)
	}
	if proofJSON == nil || publicJSON == nil {
		return nil, nil, fmt.Errorf("circomconv: gnark decoded a %T proof and a %T witness for %s", gp, w.Vector(), curveName(id))
	}
	return proofJSON, publicJSON, nil
}

// checkPublicWitnessSize checks that b, gnark's encoding of a public witness (the
// public and secret counts, then the values as a vector: its length and fr.Bytes per
// value, 32 on both curves), holds as many values as it says, all of
// them public.
func checkPublicWitnessSize(b []byte) error {
	const header = 12
	if len(b) < header {
		return fmt.Errorf("circomconv: the public witness has %d bytes, fewer than gnark's %d-byte header", len(b), header)
	}
	nbPublic, nbSecret, n := binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:]), binary.BigEndian.Uint32(b[8:])
	if nbPublic != n || nbSecret != 0 {
		return fmt.Errorf("circomconv: the public witness says %d public and %d secret values and holds %d, want only public ones", nbPublic, nbSecret, n)
	}
	if want := header + fr_bls12381.Bytes*uint64(n); uint64(len(b)) != want {
		return fmt.Errorf("circomconv: the public witness has %d bytes, want %d for %d values", len(b), want, n)
	}
	return nil
}
