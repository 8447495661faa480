package keyconv

import (
	"bytes"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/pedersen"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/frontend"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// TestRoundTripThroughFile converts gnark's key, writes and opens it as a key file,
// converts it back, and proves with gnark's prover with the result.
func TestRoundTripThroughFile(t *testing.T) {
	fx := testcircuit.SquareChainKey(t)
	k, err := FromGnark(fx.PK)
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(fx.CCS.GetNbPublicVariables()); k.NbPublic != want {
		t.Errorf("NbPublic %d, want %d", k.NbPublic, want)
	}
	path := filepath.Join(t.TempDir(), "test.pk")
	if _, err := keyfile.Write(path, k); err != nil {
		t.Fatal(err)
	}
	f, err := keyfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := ToGnark(blsKey(t, f))
	if !bytes.Equal(testcircuit.RawKeyBytes(t, got), testcircuit.RawKeyBytes(t, fx.PK)) {
		t.Fatal("ToGnark of the opened file differs from the original gnark key")
	}
	if got.NbInfinityA != fx.PK.NbInfinityA || got.NbInfinityB != fx.PK.NbInfinityB || got.NbInfinityA == 0 || got.NbInfinityB == 0 {
		t.Errorf("NbInfinity %d %d, want %d %d (not zero, so the masks are tested)", got.NbInfinityA, got.NbInfinityB, fx.PK.NbInfinityA, fx.PK.NbInfinityB)
	}

	steps := testcircuit.SquareChainKeySteps
	assignment := &testcircuit.SquareChain{X: 3, Y: 5, C: 7, Out: testcircuit.SquareChainOut(3, 5, 7, steps), N: steps}
	w, err := frontend.NewWitness(assignment, ecc.BLS12_381.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	pub, err := w.Public()
	if err != nil {
		t.Fatal(err)
	}
	proof, err := groth16.Prove(fx.CCS, got, w)
	if err != nil {
		t.Fatalf("prove: %v", err)
	}
	if err := groth16.Verify(proof, fx.VK, pub); err != nil {
		t.Fatalf("verify: %v", err)
	}

	// The proof through the SDK's type: the same bytes both ways, and it still verifies.
	gp := proof.(*groth16_bls12381.Proof)
	ours := &sdk.BLS12381Proof{Ar: gp.Ar, Bs: gp.Bs, Krs: gp.Krs}
	var gnarkBytes, ourBytes bytes.Buffer
	if _, err := gp.WriteTo(&gnarkBytes); err != nil {
		t.Fatal(err)
	}
	n, err := ours.WriteTo(&ourBytes)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ourBytes.Bytes(), gnarkBytes.Bytes()) || n != int64(ourBytes.Len()) {
		t.Fatalf("sdk.BLS12381Proof's encoding (%d bytes, reported %d) differs from gnark's (%d bytes)", ourBytes.Len(), n, gnarkBytes.Len())
	}
	if err := groth16.Verify(ProofToGnark(ours), fx.VK, pub); err != nil {
		t.Fatalf("ProofToGnark: %v", err)
	}
}

// TestProofEncoding checks sdk.BLS12381Proof's encoding against gnark's on proofs of random
// points, and that gnark reads it back as the same proof.
func TestProofEncoding(t *testing.T) {
	_, _, g1, g2 := bls12381.Generators()
	for i := range 8 {
		var a, b, c fr.Element
		a.SetRandom()
		b.SetRandom()
		c.SetRandom()
		if i == 0 {
			a.SetZero() // the point at infinity encodes too
		}
		var p sdk.BLS12381Proof
		p.Ar.ScalarMultiplication(&g1, a.BigInt(new(big.Int)))
		p.Krs.ScalarMultiplication(&g1, b.BigInt(new(big.Int)))
		p.Bs.ScalarMultiplication(&g2, c.BigInt(new(big.Int)))
		ours, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if _, err := ProofToGnark(&p).WriteTo(&want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, want.Bytes()) {
			t.Fatalf("proof %d: encoding %x, gnark's %x", i, ours, want.Bytes())
		}
		var back groth16_bls12381.Proof
		if _, err := back.ReadFrom(bytes.NewReader(ours)); err != nil {
			t.Fatal(err)
		}
		if !back.Ar.Equal(&p.Ar) || !back.Bs.Equal(&p.Bs) || !back.Krs.Equal(&p.Krs) || len(back.Commitments) != 0 {
			t.Fatalf("proof %d: gnark read back %+v", i, back)
		}
	}
}

func TestConvert(t *testing.T) {
	fx := testcircuit.SquareChainKey(t)
	k, err := FromGnark(fx.PK)
	if err != nil {
		t.Fatal(err)
	}
	wantDigest, err := keyfile.Write(filepath.Join(t.TempDir(), "direct.pk"), k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"WriteTo", func(b *bytes.Buffer) error { _, err := fx.PK.WriteTo(b); return err }},
		{"WriteRawTo", func(b *bytes.Buffer) error { _, err := fx.PK.WriteRawTo(b); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.write(&buf); err != nil {
				t.Fatal(err)
			}
			in := filepath.Join(dir, tc.name+".gnark")
			if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, tc.name+".pk")
			digest, err := Convert(in, out)
			if err != nil {
				t.Fatal(err)
			}
			if digest != wantDigest {
				t.Errorf("converted digest %x, direct Write gives %x", digest, wantDigest)
			}
			f, err := keyfile.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Verify(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(testcircuit.RawKeyBytes(t, ToGnark(blsKey(t, f))), testcircuit.RawKeyBytes(t, fx.PK)) {
				t.Error("converted key differs from the original")
			}

			// A truncated gnark file and one with trailing bytes are refused.
			short := filepath.Join(dir, tc.name+".short")
			os.WriteFile(short, buf.Bytes()[:buf.Len()-10], 0o644)
			if _, err := Convert(short, filepath.Join(dir, "x.pk")); err == nil {
				t.Error("Convert accepted a truncated gnark key")
			}
			long := filepath.Join(dir, tc.name+".long")
			os.WriteFile(long, append(bytes.Clone(buf.Bytes()), 0), 0o644)
			if _, err := Convert(long, filepath.Join(dir, "x.pk")); err == nil || !strings.Contains(err.Error(), "trailing") {
				t.Errorf("Convert with trailing bytes: %v", err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "x.pk")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed Convert left an output file: %v", err)
	}
	// Our own format is not a gnark key.
	if _, err := Convert(filepath.Join(dir, "WriteTo.pk"), filepath.Join(dir, "y.pk")); err == nil {
		t.Error("Convert accepted a zkhost key file as a gnark key")
	}
}

func TestFromGnarkRefusesCommitments(t *testing.T) {
	fx := testcircuit.SquareChainKey(t)
	pk := *fx.PK
	pk.CommitmentKeys = make([]pedersen.ProvingKey, 1)
	if _, err := FromGnark(&pk); !errors.Is(err, ErrCommitments) {
		t.Errorf("FromGnark of a key with commitments: %v, want ErrCommitments", err)
	}
	if _, err := FromGnark(nil); err == nil {
		t.Error("FromGnark(nil) succeeded")
	}
}

// blsKey returns f's BLS12-381 key, failing the test when f holds another curve's.
func blsKey(t testing.TB, f *keyfile.File) *keyfile.BLS12381Key {
	t.Helper()
	k, err := f.BLS12381()
	if err != nil {
		t.Fatal(err)
	}
	return k
}
