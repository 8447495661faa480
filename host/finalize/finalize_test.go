package finalize

import (
	"bytes"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/frontend"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

func TestVerify(t *testing.T) {
	good, vk, full := testcircuit.SquareProof(t)
	pub, err := PublicWitness(full)
	if err != nil {
		t.Fatal(err)
	}
	otherPub, _ := frontend.NewWitness(&testcircuit.Square{Y: 16}, ecc.BLS12_381.ScalarField(), frontend.PublicOnly())

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
		{"a BN254-sized proof", make([]byte, 164), pub, "164 bytes, the size of a BN254 proof, for a BLS12-381 key"},
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
