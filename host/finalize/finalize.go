package finalize

import (
	"bytes"
	"fmt"
	"io"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/sdk/curve"
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
		// A proof of the other curve has that curve's size: say so.
		for _, id := range curve.IDs {
			if size, _ := groth16.NewProof(id).WriteTo(io.Discard); id != vk.CurveID() && int64(len(proof)) == size {
				return nil, fmt.Errorf("invalid proof: does not decode: %d bytes, the size of a %s proof, for a %s key: %w",
					len(proof), curve.Title(id), curve.Title(vk.CurveID()), err)
			}
		}
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
