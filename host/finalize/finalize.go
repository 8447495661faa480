package finalize

import (
	"bytes"
	"fmt"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
)

// Verify decodes proof (gnark's Proof.WriteTo encoding) and checks it with
// groth16.Verify against vk and the public witness. It returns the decoded proof,
// or an error that says whether the bytes did not decode or the proof is invalid.
func Verify(vk groth16.VerifyingKey, proof []byte, public witness.Witness) (groth16.Proof, error) {
	if len(proof) == 0 {
		return nil, fmt.Errorf("invalid proof: empty")
	}
	p := groth16.NewProof(vk.CurveID())
	n, err := p.ReadFrom(bytes.NewReader(proof))
	if err != nil {
		return nil, fmt.Errorf("invalid proof: does not decode: %w", err)
	}
	if n != int64(len(proof)) {
		return nil, fmt.Errorf("invalid proof: %d trailing bytes after the proof", int64(len(proof))-n)
	}
	if err := groth16.Verify(p, vk, public); err != nil {
		return nil, fmt.Errorf("invalid proof: groth16 verification failed: %w", err)
	}
	return p, nil
}

// PublicWitness returns the public part of a full witness.
func PublicWitness(full witness.Witness) (witness.Witness, error) {
	pub, err := full.Public()
	if err != nil {
		return nil, fmt.Errorf("public witness: %w", err)
	}
	return pub, nil
}
