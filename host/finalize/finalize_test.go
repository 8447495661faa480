package finalize

import (
	"bytes"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
)

type square struct {
	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
}

func (c *square) Define(api frontend.API) error {
	api.AssertIsEqual(api.Mul(c.X, c.X), c.Y)
	return nil
}

func TestVerify(t *testing.T) {
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &square{})
	if err != nil {
		t.Fatal(err)
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		t.Fatal(err)
	}
	full, err := frontend.NewWitness(&square{X: 3, Y: 9}, ecc.BLS12_381.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	proof, err := groth16.Prove(ccs, pk, full)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := proof.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	pub, err := PublicWitness(full)
	if err != nil {
		t.Fatal(err)
	}
	otherPub, _ := frontend.NewWitness(&square{Y: 16}, ecc.BLS12_381.ScalarField(), frontend.PublicOnly())

	tampered := bytes.Clone(good)
	tampered[10] ^= 0x01

	tests := []struct {
		name    string
		proof   []byte
		public  witness.Witness
		wantErr string
	}{
		{"valid", good, pub, ""},
		{"empty", nil, pub, "empty"},
		{"garbage", []byte("not a proof at all, definitely not"), pub, "does not decode"},
		{"tampered", tampered, pub, "invalid proof"},
		{"trailing bytes", append(bytes.Clone(good), 0), pub, "trailing"},
		{"other statement", good, otherPub, "verification failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(vk, tc.proof, tc.public)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("valid proof refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
